package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * ext4 on {@code raid serve}, through the tools a user has here: {@code nbdfuse} (libnbd) exposes
 * the export as a file, a loop device makes it a block device, {@code mkfs.ext4}, {@code mount},
 * {@code e2fsck} and fio work on it. The oracles are e2fsck, fio's own verification and hashes of
 * every file taken before. Skipped with one line where FUSE, loop devices or the tools are missing
 * (CI runs as root with them installed).
 */
@Timeout(600)
class Ext4IT {
    private static final List<String> MEMBERS = List.of("a.img", "b.img", "c.img", "d.img");

    @TempDir
    Path dir;

    @BeforeAll
    static void tools() {
        for (String[] t : new String[][] {
            {"nbdfuse", "libnbd-bin"},
            {"mkfs.ext4", "e2fsprogs"},
            {"e2fsck", "e2fsprogs"},
            {"losetup", "mount"},
            {"fio", "fio"},
            {"fusermount3", "fuse3"}
        }) {
            Tools.assumeInstalled(t[0], t[1]);
        }
        Assumptions.assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse: FUSE is not available here");
        Assumptions.assumeTrue(Tools.canLoop(), "no loop device can be attached here (root and /dev/loop-control)");
    }

    private void create(String... options) {
        List<String> args = new ArrayList<>(List.of("create", "--size", "96M", "--chunk", "64K"));
        args.addAll(List.of(options));
        for (String m : MEMBERS) {
            args.add(dir.resolve(m).toString());
        }
        Cli.Result r = Cli.run(args.toArray(new String[0]));
        assertEquals(0, r.exit(), r.all());
    }

    private List<String> members() {
        return MEMBERS.stream().map(m -> dir.resolve(m).toString()).toList();
    }

    /** SHA-256 of every regular file under {@code root}, by relative path. */
    private static Map<String, String> hashes(Path root) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                if (Files.isRegularFile(p) && !p.startsWith(root.resolve("lost+found"))) {
                    out.put(root.relativize(p).toString(), MemberFiles.sha256(p));
                }
            }
        }
        return out;
    }

    private List<String> fio(Path file, boolean verifyOnly, String size) {
        List<String> job = new ArrayList<>(List.of(
                "fio",
                "--name=ext4verify",
                "--filename=" + file,
                "--size=" + size,
                "--bs=4k",
                "--rw=randwrite",
                "--ioengine=psync",
                "--verify=crc32c",
                "--verify_fatal=1",
                "--randseed=42",
                "--fsync=16"));
        if (verifyOnly) {
            job.add("--verify_only");
        }
        return job;
    }

    private Path sourceTree() {
        Path here = Path.of("").toAbsolutePath();
        Path src = here.resolve("src/main");
        Assumptions.assumeTrue(Files.isDirectory(src), "no source tree to copy at " + src);
        return src;
    }

    @Test
    void aCopiedTreeAndFioVerifySurviveAStopAndRestart() throws Exception {
        create();
        Map<String, String> before;
        try (Ext4Stack s = new Ext4Stack(dir, MEMBERS, false)) {
            Tools.runOk(dir, Duration.ofSeconds(120), "mkfs.ext4", "-q", s.loop);
            s.mount();
            Tools.runOk(
                    dir,
                    Duration.ofSeconds(120),
                    "cp",
                    "-a",
                    sourceTree().toString(),
                    s.mnt.resolve("tree").toString());
            Tools.runOk(
                    dir,
                    Duration.ofSeconds(300),
                    fio(s.mnt.resolve("fio.dat"), false, "24M").toArray(new String[0]));
            before = hashes(s.mnt);
            assertTrue(before.size() > 50, "the tree was copied: " + before.size() + " files");
            s.umount();
            s.fsck();
        }
        Cli.Result check =
                Cli.run(Stream.concat(Stream.of("check"), members().stream()).toArray(String[]::new));
        assertEquals(0, check.exit(), "parity after a clean stop: " + check.all());
        try (Ext4Stack s = new Ext4Stack(dir, MEMBERS, false)) {
            s.fsck();
            s.mount();
            assertEquals(before, hashes(s.mnt), "every file as it was before the stop");
            Tools.runOk(
                    dir,
                    Duration.ofSeconds(300),
                    fio(s.mnt.resolve("fio.dat"), true, "24M").toArray(new String[0]));
            s.umount();
        }
    }

    @Test
    void aMemberFailingUnderLoadLosesNothing() throws Exception {
        create();
        Map<String, String> before;
        try (Ext4Stack s = new Ext4Stack(dir, MEMBERS, false)) {
            Tools.runOk(dir, Duration.ofSeconds(120), "mkfs.ext4", "-q", s.loop);
            s.mount();
            Tools.runOk(
                    dir,
                    Duration.ofSeconds(120),
                    "cp",
                    "-a",
                    sourceTree().toString(),
                    s.mnt.resolve("tree").toString());
            Process load = Tools.start(dir, fio(s.mnt.resolve("fio.dat"), false, "32M"), dir.resolve("fio.log"));
            Thread.sleep(1500);
            // c.img fails under the server: truncated, every later I/O to it is a member error.
            try (RandomAccessFile raf =
                    new RandomAccessFile(dir.resolve("c.img").toFile(), "rw")) {
                raf.setLength(4096);
            }
            s.stopExit = 1;
            assertTrue(load.waitFor(300, TimeUnit.SECONDS), "fio finished");
            assertEquals(
                    0,
                    load.exitValue(),
                    "fio verified every block with a member gone:\n" + Files.readString(dir.resolve("fio.log")));
            before = hashes(s.mnt);
            s.umount();
            s.fsck();
            assertTrue(
                    s.served.stderr().contains("c.img"), "the server named the failed member:\n" + s.served.stderr());
        }
        // c.img, cut to 4 KiB, holds no superblock any more: the array is the other three
        List<String> three = List.of("a.img", "b.img", "d.img");
        Cli.Result detail = Cli.run(Stream.concat(
                        Stream.of("detail"),
                        three.stream().map(m -> dir.resolve(m).toString()))
                .toArray(String[]::new));
        assertEquals(1, detail.exit(), "degraded: " + detail.all());
        assertTrue(detail.out().contains("degraded"), detail.out());
        try (Ext4Stack s = new Ext4Stack(dir, three, false)) {
            s.stopExit = 1;
            s.fsck();
            s.mount();
            assertEquals(before, hashes(s.mnt), "every file, read degraded");
            s.umount();
        }
    }

    @Test
    void killingTheServerLosesNoFsyncedFile() throws Exception {
        create();
        try (Ext4Stack s = new Ext4Stack(dir, MEMBERS, false)) {
            Tools.runOk(dir, Duration.ofSeconds(120), "mkfs.ext4", "-q", s.loop);
        }
        Path done = dir.resolve("fsynced.txt"); // on the host: a name is listed only after its fsync returned
        int written = 0;
        for (int round = 0; round < 5; round++) {
            Ext4Stack s = new Ext4Stack(dir, MEMBERS, false);
            try {
                replayThenCheck(s);
                s.mount();
                verifyListed(s.mnt, done);
                Files.createDirectories(s.mnt.resolve("r" + round));
                // Each file: 64 KiB from /dev/urandom, fsynced (conv=fsync), its hash then listed on the host.
                String script = "i=0; while true; do f=r" + round + "/f$i; "
                        + "dd if=/dev/urandom of=$f bs=64k count=1 conv=fsync status=none || exit 0; "
                        + "echo \"$(sha256sum $f)\" >> " + done + "; i=$((i+1)); done";
                Process writer = Tools.start(s.mnt, List.of("sh", "-c", script), dir.resolve("writer.log"));
                Thread.sleep(2000 + 500L * round);
                s.served.process().destroyForcibly();
                assertTrue(s.served.process().waitFor(30, TimeUnit.SECONDS));
                writer.destroyForcibly();
                writer.waitFor(30, TimeUnit.SECONDS);
            } finally {
                s.detach();
            }
            written = Files.readAllLines(done).size();
        }
        assertTrue(written >= 5, "files were written and fsynced: " + written);
        try (Ext4Stack s = new Ext4Stack(dir, MEMBERS, false)) {
            replayThenCheck(s);
            s.mount();
            assertEquals(written, verifyListed(s.mnt, done));
            s.umount();
        }
    }

    /**
     * After a kill: the journal replayed (a mount and umount, as after any crash), then e2fsck -fn must
     * find nothing. e2fsck -n alone skips the journal, and a file system killed mid-write is consistent
     * only with its journal: without the replay it reports metadata the journal holds (an entry whose
     * inode is still in the unused area, bitmap differences).
     */
    private static void replayThenCheck(Ext4Stack s) throws Exception {
        s.mount();
        s.umount();
        s.fsck();
    }

    /** Every file listed as fsynced is there with its hash; returns how many. */
    private static int verifyListed(Path mnt, Path list) throws IOException {
        if (!Files.exists(list)) {
            return 0;
        }
        int n = 0;
        for (String line : Files.readAllLines(list)) {
            String[] parts = line.trim().split("\\s+");
            Path f = mnt.resolve(parts[1]);
            assertTrue(Files.exists(f), "fsynced file " + parts[1] + " lost");
            assertEquals(parts[0], MemberFiles.sha256(f), "fsynced file " + parts[1] + " changed");
            n++;
        }
        return n;
    }
}
