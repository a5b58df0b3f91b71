package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RAID-5 write hole at file-system level: ext4 on raid serve over four nbdkit exports (file
 * plugin), the fourth slow to write (nbdkit's delay filter). While files are written, the server and
 * the slow member's nbdkit are killed together: the array comes back dirty and without that member.
 * With md's partial parity log no block outside the writes in flight changes (every file written
 * before them reads back as it was, e2fsck is clean after the journal replay); without it (resync
 * policy, started with --force) the files that share a torn stripe come back wrong, which the test
 * counts and prints. Skipped with one line without nbdkit, FUSE or loop devices.
 */
@Timeout(600)
class Ext4WriteHoleIT {
    @TempDir
    Path dir;

    @BeforeAll
    static void tools() {
        for (String[] t : new String[][] {{"nbdkit", "nbdkit"}, {"nbdfuse", "libnbd-bin"}, {"mkfs.ext4", "e2fsprogs"},
            {"e2fsck", "e2fsprogs"}, {"losetup", "mount"}, {"fusermount3", "fuse3"}}) {
            Tools.assumeInstalled(t[0], t[1]);
        }
        Assumptions.assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse: FUSE is not available here");
        Assumptions.assumeTrue(Tools.canLoop(), "no loop device can be attached here (root and /dev/loop-control)");
    }

    @Test
    void withAPartialParityLogNoBlockOutsideTheWritesChanges() throws Exception {
        assertEquals(0, damagedFiles("ppl"), "4 KiB blocks outside the writes changed despite the log");
    }

    @Test
    void withoutOneTheWriteHoleShows() throws Exception {
        // Not asserted: whether a torn stripe holds an earlier file's blocks depends on where ext4 put
        // them. Printed, for the record beside the log's zero.
        System.out.println("Ext4WriteHoleIT: without a log, " + damagedFiles("resync")
                + " 4 KiB blocks outside the writes came back wrong (-1: the file system did not mount)");
    }

    /** One crash round under {@code policy}; how many earlier files came back wrong (-1: no mount). */
    private int damagedFiles(String policy) throws Exception {
        Path d = Files.createDirectories(dir.resolve(policy));
        List<Tools.Nbdkit> kits = new ArrayList<>();
        List<String> uris = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Path image = d.resolve("m" + i + ".raw");
            try (RandomAccessFile raf = new RandomAccessFile(image.toFile(), "rw")) {
                raf.setLength(96L << 20);
            }
            Tools.Nbdkit k = i < 3 ? Tools.Nbdkit.unix(d, "k" + i, "file", image.toString())
                    : Tools.Nbdkit.unix(d, "k" + i, "--filter=delay", "file", image.toString(), "wdelay=30ms");
            kits.add(k);
            uris.add(k.uri());
        }
        try {
            List<String> create = new ArrayList<>(List.of("create", "--chunk", "64K", "--assume-clean",
                    "--consistency-policy", policy));
            create.addAll(uris);
            RaidLauncher.Result made = RaidLauncher.run(d, create.toArray(new String[0]));
            assertEquals(0, made.exit(), made.all());
            List<String> before;
            Stack s = new Stack(d, uris);
            try {
                Tools.runOk(d, Duration.ofSeconds(120), "mkfs.ext4", "-q", s.loop);
                s.mount();
                // One file over most of the array; the writer then rewrites its even 4 KiB blocks only,
                // in place: every odd block lies outside the writes, in stripes the writes tear.
                Tools.runOk(s.mnt, Duration.ofSeconds(300), "sh", "-c",
                        "dd if=/dev/urandom of=big bs=1M count=" + BIG_MIB + " status=none && sync");
                before = blockHashes(s.mnt.resolve("big"));
                // eight rewriters at once: several stripes in flight when the crash comes
                String writer = "for w in 1 2 3 4 5 6 7 8; do (while true; do "
                        + "i=$(( (RANDOM * 32768 + RANDOM) % " + (BIG_MIB * 128) + " * 2 )); "
                        + "dd if=/dev/urandom of=big bs=4k count=1 seek=$i conv=notrunc oflag=direct status=none "
                        + "|| exit 0; done) & done; wait";
                Process w = Tools.start(s.mnt, List.of("bash", "-c", writer), d.resolve("writer.log"));
                Thread.sleep(4000);
                // the server and the slow member die together: its last writes never land
                kits.get(3).process().destroyForcibly();
                s.served.process().destroyForcibly();
                s.served.process().waitFor(30, TimeUnit.SECONDS);
                w.descendants().forEach(ProcessHandle::destroyForcibly);
                w.destroyForcibly();
                w.waitFor(30, TimeUnit.SECONDS);
            } finally {
                s.detach();
            }
            // The slow member comes back with its last writes lost (torn stripes); then another
            // member is missing: its blocks are rebuilt from the torn stripes.
            Path image3 = d.resolve("m3.raw");
            kits.set(3, Tools.Nbdkit.unix(d, "k3b", "file", image3.toString()));
            List<String> without0 = List.of(uris.get(1), uris.get(2), kits.get(3).uri());
            Stack after = new Stack(d, without0, policy.equals("ppl") ? new String[0] : new String[] {"--force"});
            try {
                if (policy.equals("ppl")) {
                    assertTrue(after.served.stderr().contains("partial parity log")
                            || after.served.stderr().contains("serving"), after.served.stderr());
                }
                Tools.Result mount = Tools.run(d, Duration.ofSeconds(120), List.of("mount", "-t", "ext4", after.loop,
                        after.mnt.toString()));
                if (mount.exit() != 0) {
                    assertTrue(!policy.equals("ppl"), "the log's array does not mount:\n" + mount.output());
                    return -1;
                }
                after.mounted = true;
                List<String> now = blockHashes(after.mnt.resolve("big"));
                int damaged = 0;
                for (int b = 1; b < before.size(); b += 2) {
                    if (b >= now.size() || !before.get(b).equals(now.get(b))) {
                        damaged++;
                    }
                }
                after.umount();
                if (policy.equals("ppl")) {
                    after.fsck();
                }
                after.stopExit = 1; // degraded
                return damaged;
            } finally {
                after.close();
            }
        } finally {
            for (Tools.Nbdkit k : kits) {
                k.kill();
            }
        }
    }

    private static final int BIG_MIB = 48;

    /** SHA-256 of each 4 KiB block of {@code file}. */
    private static List<String> blockHashes(Path file) throws Exception {
        byte[] all = Files.readAllBytes(file);
        List<String> out = new ArrayList<>();
        for (int at = 0; at < all.length; at += 4096) {
            out.add(MemberFiles.sha256(java.util.Arrays.copyOfRange(all, at, Math.min(all.length, at + 4096))));
        }
        return out;
    }

    /** raid serve over the given members, nbdfuse, a loop device: as in {@link Ext4IT}. */
    private static final class Stack implements AutoCloseable {
        final Served served;
        final Process fuse;
        final Path fuseDir;
        final Path mnt;
        final Path d;
        String loop;
        boolean mounted;
        int stopExit;

        Stack(Path d, List<String> members, String... options) throws Exception {
            this.d = d;
            fuseDir = Files.createDirectories(d.resolve("fuse"));
            mnt = Files.createDirectories(d.resolve("mnt"));
            List<String> args = new ArrayList<>(List.of("--socket", d.resolve("s.sock").toString()));
            args.addAll(List.of(options));
            args.addAll(members);
            served = Served.start(d, args.toArray(new String[0]));
            fuse = Tools.start(d, List.of("nbdfuse", fuseDir.toString(), served.uri()), d.resolve("fuse.log"));
            Path file = fuseDir.resolve("nbd");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(file)) {
                assertTrue(System.nanoTime() < deadline && fuse.isAlive(), "nbdfuse did not come up");
                Thread.sleep(50);
            }
            loop = Tools.runOk(d, Duration.ofSeconds(30), "losetup", "-f", "--show", file.toString()).trim();
        }

        void mount() throws Exception {
            Tools.runOk(d, Duration.ofSeconds(60), "mount", "-t", "ext4", loop, mnt.toString());
            mounted = true;
        }

        void umount() throws Exception {
            Tools.runOk(d, Duration.ofSeconds(120), "umount", mnt.toString());
            mounted = false;
        }

        void fsck() throws Exception {
            Tools.Result r = Tools.run(d, Duration.ofSeconds(120), List.of("e2fsck", "-fn", loop));
            assertEquals(0, r.exit(), "e2fsck -fn:\n" + r.output());
        }

        void detach() throws Exception {
            if (mounted) {
                Tools.run(d, Duration.ofSeconds(60), List.of("umount", "-l", mnt.toString()));
                mounted = false;
            }
            if (loop != null) {
                Tools.run(d, Duration.ofSeconds(30), List.of("losetup", "-d", loop));
                loop = null;
            }
            Tools.run(d, Duration.ofSeconds(30), List.of("fusermount3", "-u", "-z", fuseDir.toString()));
            fuse.destroy();
            fuse.waitFor(10, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws Exception {
            try {
                detach();
            } finally {
                if (served.process().isAlive()) {
                    assertEquals(stopExit, served.stop("TERM"), served.stderr());
                }
            }
        }
    }
}
