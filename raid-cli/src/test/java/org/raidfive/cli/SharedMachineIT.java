package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code raid serve} and its side files on a machine shared with other users: a run directory
 * another user controls is refused (serving goes on without counters), no file is written through a
 * link, a full file system and a truncated counters file never take the server down, two servers
 * of one array never share a file, damaged or stale files are named in one line, and
 * {@code raid stop} signals only a server of that array. Real processes, real files.
 */
@Timeout(300)
class SharedMachineIT extends CliInTempDir {
    private static final List<String> MEMBERS = List.of("a.img", "b.img", "c.img", "d.img");

    private void create(List<String> members) {
        RaidLauncher.Result r = RaidLauncher.run(dir, args(List.of("create", "--size", "16M"), members));
        assertEquals(0, r.exit(), r.all());
    }

    /** raid serve with RAID_RUN_DIR set to {@code runDir}. */
    private Served serve(Path runDir, String socket, List<String> members) throws Exception {
        List<String> args = new ArrayList<>(List.of("--socket", socket));
        args.addAll(members);
        return Served.start(dir, runDir, args.toArray(new String[0]));
    }

    private RaidLauncher.Result raid(Path runDir, String... args) {
        return RaidLauncher.run(dir, null, List.of("/usr/bin/env", "RAID_RUN_DIR=" + runDir), args);
    }

    /** One 4 KiB write and a read through a real client: I/O, a dirty event, counters touched. */
    private void write(String uri) throws Exception {
        Tools.assumeInstalled("qemu-io", "qemu-utils");
        Tools.runOk(
                dir,
                Duration.ofSeconds(60),
                "qemu-io",
                "-f",
                "raw",
                "-c",
                "write -P 7 0 4k",
                "-c",
                "read -P 7 0 4k",
                uri);
    }

    private static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    @Test
    void aRunDirectoryAnotherUserControlsIsRefusedAndNothingIsWrittenThroughItsLinks() throws Exception {
        Assumptions.assumeTrue(root(), "needs root to give the directory to another user");
        create(MEMBERS);
        // Another user (nobody) made the run directory first and planted links to a root-owned file.
        Path run = dir.resolve("shm-raidfive");
        Files.createDirectory(run);
        Path victim = dir.resolve("victim");
        Files.writeString(victim, "root's secret\n");
        Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
        for (int i = 0; i < 64; i++) {
            Files.createSymbolicLink(run.resolve("link" + i), victim);
        }
        Tools.runOk(dir, Duration.ofSeconds(10), "chown", "-R", "-h", "65534:65534", run.toString());
        Tools.runOk(dir, Duration.ofSeconds(10), "chmod", "1777", run.toString());
        try (Served s = serve(run, "s.sock", MEMBERS)) {
            assertTrue(
                    s.stderr().contains("serving without live counters")
                            && s.stderr().contains("owned by uid 65534"),
                    s.stderr());
        }
        assertEquals("root's secret\n", Files.readString(victim));
        // A world-writable directory of our own, and a link as the directory, are refused the same way.
        Path open = dir.resolve("open-run");
        Files.createDirectory(open);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        try (Served s = serve(open, "s.sock", MEMBERS)) {
            assertTrue(s.stderr().contains("is writable by others"), s.stderr());
        }
        Path link = dir.resolve("link-run");
        Files.createSymbolicLink(link, open);
        try (Served s = serve(link, "s.sock", MEMBERS)) {
            assertTrue(s.stderr().contains("is a symbolic link"), s.stderr());
        }
        try (var files = Files.list(open)) {
            assertEquals(0, files.count(), "nothing was made in a refused directory");
        }
    }

    @Test
    void aFullFileSystemAndATruncatedCountersFileNeverTakeTheServerDown() throws Exception {
        Assumptions.assumeTrue(root(), "needs root to mount a small tmpfs");
        create(MEMBERS);
        Path small = dir.resolve("small-tmpfs");
        Files.createDirectory(small);
        Tools.runOk(
                dir,
                Duration.ofSeconds(10),
                "mount",
                "-t",
                "tmpfs",
                "-o",
                "size=64k,mode=0755",
                "tmpfs",
                small.toString());
        try {
            try (Served s = serve(small, "s.sock", MEMBERS)) {
                assertTrue(s.stderr().contains("serving without live counters"), s.stderr());
                assertFalse(s.stderr().contains("Exception") || s.stderr().contains("Error:"), s.stderr());
                write(s.uri());
                assertEquals(0, s.stop("TERM"), s.stderr());
            }
        } finally {
            Tools.run(dir, Duration.ofSeconds(10), List.of("umount", small.toString()));
        }
        Path run = dir.resolve("run");
        try (Served s = serve(run, "s.sock", MEMBERS)) {
            List<Path> files;
            try (var l = Files.list(run)) {
                files = l.filter(p -> p.toString().endsWith(".counters")).toList();
            }
            assertEquals(1, files.size(), files.toString());
            try (var ch = java.nio.channels.FileChannel.open(files.get(0), java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(100);
            }
            write(s.uri()); // the array's events and I/O touch the counters: the server goes on
            Thread.sleep(500);
            write(s.uri());
            assertEquals(0, s.stop("TERM"), s.stderr());
            assertFalse(s.stderr().contains("Exception"), s.stderr());
        }
    }

    @Test
    void twoServersOfOneArrayNeverShareAFileAndDamagedOrStaleFilesAreNamed() throws Exception {
        create(MEMBERS);
        List<String> copies = List.of("a2.img", "b2.img", "c2.img", "d2.img");
        for (int i = 0; i < 4; i++) {
            Files.copy(dir.resolve(MEMBERS.get(i)), dir.resolve(copies.get(i)));
        }
        Path run = dir.resolve("run");
        try (Served first = serve(run, "s1.sock", MEMBERS);
                Served second = serve(run, "s2.sock", copies)) {
            RaidLauncher.Result stat = raid(run, args(List.of("stat", "--json"), MEMBERS));
            assertEquals(0, stat.exit(), stat.all());
            assertTrue(stat.out().contains("\"pid\": " + first.process().pid()), stat.out());
            assertFalse(stat.out().contains("\"pid\": " + second.process().pid()), stat.out());
            RaidLauncher.Result stat2 = raid(run, args(List.of("stat", "--json"), copies));
            assertTrue(stat2.out().contains("\"pid\": " + second.process().pid()), stat2.out());
        }
        // damaged: a header that promises more than the file holds
        Path damaged = dir.resolve("damaged.counters");
        ByteBuffer header = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        header.putLong(0, 0x31544e4344494152L)
                .putInt(8, 2)
                .putInt(32, 1 << 30)
                .putInt(36, 1 << 30)
                .putInt(40, 100);
        Files.write(damaged, header.array());
        RaidLauncher.Result bad = raid(run, "stat", "--file", damaged.toString());
        assertEquals(2, bad.exit(), bad.all());
        assertEquals(1, bad.messages().size(), bad.all());
        assertTrue(bad.stderr().contains("is damaged"), bad.all());
        assertFalse(bad.stderr().contains("Exception"), bad.all());
        // stale: a file naming pid 1 that did not make it
        Path stale = dir.resolve("stale.counters");
        header.putInt(32, 1024 * 512).putInt(36, 1024 * 128).putInt(40, 64 * 1024 + 128);
        header.putLong(16, 1).putLong(48, 12345);
        byte[] whole = new byte[4096 + 1024 * 512 + 1024 * 128 + 64 * 1024 + 128];
        System.arraycopy(header.array(), 0, whole, 0, 4096);
        Files.write(stale, whole);
        RaidLauncher.Result old = raid(run, "stat", "--file", stale.toString());
        assertEquals(1, old.exit(), old.all());
        assertTrue(old.stderr().contains("which is gone (a stale file)"), old.all());
        Process monitor = RaidLauncher.builder(
                        dir, List.of("/usr/bin/env", "RAID_RUN_DIR=" + run), "monitor", "--file", stale.toString())
                .start();
        Tools.track(monitor);
        assertTrue(monitor.waitFor(30, TimeUnit.SECONDS), "monitor of a stale file ends");
    }

    @Test
    void stopSignalsOnlyAServerOfThatArray() throws Exception {
        create(MEMBERS);
        Path run = dir.resolve("run");
        // No server: a process holding a lock on a member, with "raid serve" in its command line.
        Process impostor = Tools.start(
                dir,
                List.of("flock", dir.resolve("a.img").toString(), "bash", "-c", "exec -a 'raid serve a.img' sleep 60"),
                dir.resolve("impostor.log"));
        Thread.sleep(500);
        RaidLauncher.Result r = raid(run, args(List.of("stop"), MEMBERS));
        assertEquals(2, r.exit(), r.all());
        assertTrue(impostor.isAlive(), "the impostor was not signalled:\n" + r.all());
        impostor.descendants().forEach(ProcessHandle::destroyForcibly); // the child holds the lock too
        impostor.destroyForcibly();
        impostor.waitFor(10, TimeUnit.SECONDS);
        Thread.sleep(200);

        // A socket path unlinked and reused: --socket stops the server now on it, not the old one.
        List<String> copies = List.of("a2.img", "b2.img", "c2.img", "d2.img");
        for (int i = 0; i < 4; i++) {
            Files.copy(dir.resolve(MEMBERS.get(i)), dir.resolve(copies.get(i)));
        }
        try (Served old = serve(run, "s.sock", MEMBERS)) {
            Files.delete(dir.resolve("s.sock"));
            try (Served now = serve(run, "s.sock", copies)) {
                RaidLauncher.Result stop = raid(run, "stop", "--socket", "s.sock"); // relative: resolved here
                assertEquals(0, stop.exit(), stop.all());
                assertTrue(now.process().waitFor(30, TimeUnit.SECONDS), "the server on the path now stopped");
                assertTrue(old.process().isAlive(), "the old server was not signalled");
            }
            RaidLauncher.Result byMembers = raid(run, args(List.of("stop"), MEMBERS));
            assertEquals(0, byMembers.exit(), byMembers.all());
            assertTrue(old.process().waitFor(30, TimeUnit.SECONDS));
        }
    }
}
