package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kind of bad input, through the real launcher: one clear line on stderr naming the problem,
 * the exit code, no stack trace, and every file involved byte-for-byte unchanged (sha256 before and
 * after) — for commands that would otherwise write.
 */
@Timeout(60)
class BadInputIT {
    @TempDir
    static Path dir;

    static final List<String> ARRAY = List.of("a.img", "b.img", "c.img", "d.img");
    static long arrayBytes;

    @BeforeAll
    static void fixture() throws IOException {
        ok(RaidLauncher.run(dir, with(List.of("create", "--size", "8M", "--chunk", "64K"), ARRAY)));
        ok(RaidLauncher.run(dir, "create", "--size", "8M", "--chunk", "64K", "other1.img", "other2.img", "other3.img"));
        Files.write(dir.resolve("in.bin"), MemberFiles.random(64 << 10, 1));
        // A copy of d taken now lags once the array moves on: stale.
        Files.copy(dir.resolve("d.img"), dir.resolve("stale.img"));
        ok(RaidLauncher.run(dir, with(List.of("write", "--offset", "0", "--input", "in.bin"), ARRAY)));
        try (var raf = new java.io.RandomAccessFile(dir.resolve("blank.img").toFile(), "rw")) {
            raf.setLength(8 << 20);
        }
        Files.copy(dir.resolve("b.img"), dir.resolve("corrupt.img"), StandardCopyOption.REPLACE_EXISTING);
        MemberFiles.flipByte(dir.resolve("corrupt.img"), 4096 + 40); // inside set_name: the checksum no longer matches
        Files.copy(dir.resolve("c.img"), dir.resolve("short.img"), StandardCopyOption.REPLACE_EXISTING);
        try (var raf = new java.io.RandomAccessFile(dir.resolve("short.img").toFile(), "rw")) {
            raf.setLength(4 << 20);
        }
        Files.write(dir.resolve("data.img"), MemberFiles.random(8 << 20, 2));
        Files.write(dir.resolve("partial.bin"), MemberFiles.random(1000, 3));
        RaidLauncher.Result detail = ok(RaidLauncher.run(dir, with(List.of("detail", "--json"), ARRAY)));
        arrayBytes = LifecycleIT.jsonLong(detail.out(), "arraySize");
    }

    private static RaidLauncher.Result ok(RaidLauncher.Result r) {
        assertEquals(0, r.exit(), r.all());
        return r;
    }

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    private static List<String> swap(String from, String to) {
        List<String> m = new ArrayList<>(ARRAY);
        m.set(m.indexOf(from), to);
        return m;
    }

    /**
     * Runs a command that must be refused: exit code, one message line naming the problem, no stack
     * trace, and {@code files} unchanged (absent ones still absent).
     */
    private static void refused(int exit, String phrase, List<String> files, byte[] stdin, String... args) {
        List<Path> paths = files.stream().map(dir::resolve).toList();
        Map<Path, String> before = MemberFiles.snapshot(paths);
        RaidLauncher.Result r = RaidLauncher.run(dir, stdin, args);
        assertEquals(exit, r.exit(), r.all());
        List<String> lines = r.messages();
        assertEquals(1, lines.size(), "exactly one line on stderr:\n" + r.all());
        assertTrue(lines.get(0).startsWith("raid " + args[0] + ": "), r.all());
        assertTrue(lines.get(0).contains(phrase), "expected '" + phrase + "' in:\n" + r.all());
        assertFalse(r.stderr().contains("Exception") || r.stderr().contains("\tat "), "no stack trace:\n" + r.all());
        MemberFiles.assertUnchanged(before, String.join(" ", args));
    }

    private static void refused(int exit, String phrase, List<String> files, String... args) {
        refused(exit, phrase, files, null, args);
    }

    /** raid stat and raid monitor: bad options and an array that does not run, each said in one line. */
    @Test
    void statAndMonitorRefusals() {
        refused(2, "--watch takes a positive number of seconds", ARRAY, with(List.of("stat", "--watch", "0"), ARRAY));
        refused(2, "--count goes with --watch", ARRAY, with(List.of("stat", "--count", "3"), ARRAY));
        refused(2, "--delay must be at least 1 ms", ARRAY, with(List.of("monitor", "--delay", "0"), ARRAY));
        refused(1, "is not running with live counters", ARRAY, with(List.of("stat"), ARRAY));
        refused(1, "is not running with live counters", ARRAY, with(List.of("monitor"), ARRAY));
        refused(2, "no-such.counters: no such counters file", ARRAY, "stat", "--file", "no-such.counters");
    }

    @Test
    void missingMemberFile() {
        List<String> m = swap("d.img", "missing.img");
        refused(2, "missing.img: no such file", m, with(List.of("write", "--offset", "0", "--input", "in.bin"), m));
        refused(4, "missing.img: no such file", m, with(List.of("detail"), m));
    }

    @Test
    void sameFileTwice() {
        List<String> m = swap("d.img", "./a.img");
        refused(2, "./a.img is given twice (it is the same file as a.img)", ARRAY, with(List.of("rebuild"), m));
    }

    @Test
    void fileThatIsNotAMember() {
        List<String> m = swap("d.img", "blank.img");
        refused(2, "blank.img: not an md member", m, with(List.of("write", "--offset", "0", "--input", "in.bin"), m));
        refused(4, "blank.img: not an md member", m, with(List.of("detail"), m));
        refused(2, "blank.img: not an md member", List.of("blank.img"), "examine", "blank.img");
    }

    @Test
    void memberOfAnotherArray() {
        List<String> m = swap("d.img", "other1.img");
        refused(
                2,
                "other1.img is a member of another array",
                m,
                with(List.of("write", "--offset", "0", "--input", "in.bin"), m));
    }

    @Test
    void corruptedSuperblock() {
        List<String> m = swap("b.img", "corrupt.img");
        refused(2, "corrupt.img: bad superblock checksum", m, with(List.of("rebuild"), m));
    }

    @Test
    void memberTruncatedBelowItsRecordedSizeIsLeftOutWithOneWarning() throws IOException {
        List<String> m = swap("c.img", "short.img");
        List<Path> paths = m.stream().map(dir::resolve).toList();
        Map<Path, String> before = MemberFiles.snapshot(paths);
        RaidLauncher.Result r = RaidLauncher.run(
                dir, with(List.of("read", "--offset", "0", "--length", "64K", "--output", "short-out.bin"), m));
        assertEquals(0, r.exit(), r.all());
        assertEquals(1, r.messages().size(), r.all());
        assertTrue(r.messages().get(0).startsWith("raid read: leaving out short.img: it is too small"), r.all());
        assertTrue(
                java.util.Arrays.equals(
                        Files.readAllBytes(dir.resolve("in.bin")), Files.readAllBytes(dir.resolve("short-out.bin"))),
                "read degraded without it, the same bytes");
        MemberFiles.assertUnchanged(before, "read");
    }

    @Test
    void staleMemberIsLeftOutWithOneWarningLikeMdadm() throws IOException {
        List<String> m = swap("d.img", "stale.img");
        List<Path> paths = m.stream().map(dir::resolve).toList();
        Map<Path, String> before = MemberFiles.snapshot(paths);
        RaidLauncher.Result r = RaidLauncher.run(
                dir, with(List.of("read", "--offset", "0", "--length", "64K", "--output", "stale-out.bin"), m));
        assertEquals(0, r.exit(), r.all());
        assertEquals(1, r.messages().size(), r.all());
        String line = r.messages().get(0);
        assertTrue(
                line.startsWith("raid read: leaving out stale.img: it is behind the others (events ")
                        && line.endsWith("; raid add --spare stale.img to rebuild it"),
                r.all());
        assertTrue(
                java.util.Arrays.equals(
                        Files.readAllBytes(dir.resolve("in.bin")), Files.readAllBytes(dir.resolve("stale-out.bin"))),
                "read degraded without it, the same bytes");
        MemberFiles.assertUnchanged(before, "read");
        // Leaving it out leaves too few: refused, and force named.
        List<String> two = List.of("a.img", "b.img", "stale.img");
        refused(2, "force", two, with(List.of("write", "--offset", "0", "--input", "in.bin"), two));
    }

    @Test
    void tooFewMembersToRun() {
        List<String> m = ARRAY.subList(0, 2);
        refused(2, "too few members to run", ARRAY, with(List.of("write", "--offset", "0", "--input", "in.bin"), m));
    }

    @Test
    void unknownLayoutAndBadChunks() {
        List<String> n = List.of("n1.img", "n2.img", "n3.img");
        refused(2, "unknown layout 'zigzag'", n, with(List.of("create", "--size", "8M", "--layout", "zigzag"), n));
        refused(
                2,
                "chunk size 3000 bytes is invalid",
                n,
                with(List.of("create", "--size", "8M", "--chunk", "3000"), n));
        refused(2, "chunk size 2048 bytes is invalid", n, with(List.of("create", "--size", "8M", "--chunk", "2K"), n));
    }

    @Test
    void readOrWriteBeyondTheEnd() {
        refused(
                2,
                "beyond the end of the array",
                ARRAY,
                with(List.of("read", "--offset", Long.toString(arrayBytes), "--length", "512"), ARRAY));
        refused(
                2,
                "would end beyond the array",
                ARRAY,
                with(List.of("write", "--offset", Long.toString(arrayBytes - 512), "--input", "in.bin"), ARRAY));
        refused(
                2,
                "would end beyond the array",
                ARRAY,
                new byte[4096],
                with(List.of("write", "--offset", Long.toString(arrayBytes - 1024)), ARRAY));
    }

    @Test
    void misalignedOffsetsAndPartialBlocks() {
        refused(
                2,
                "--offset 100 is not a multiple of 512",
                ARRAY,
                with(List.of("write", "--offset", "100", "--input", "in.bin"), ARRAY));
        refused(
                2,
                "--length 1000 is not a multiple of 512",
                ARRAY,
                with(List.of("read", "--offset", "0", "--length", "1000"), ARRAY));
        refused(
                2,
                "1000 bytes, which ends with a partial 512-byte block",
                ARRAY,
                with(List.of("write", "--offset", "0", "--input", "partial.bin"), ARRAY));
        refused(
                2,
                "1000 bytes, which ends with a partial 512-byte block",
                ARRAY,
                MemberFiles.random(1000, 4),
                with(List.of("write", "--offset", "0"), ARRAY));
    }

    @Test
    void memberOptionNamingAFileNotInTheArray() {
        refused(
                2,
                "--member other1.img is not one of the members given",
                ARRAY,
                with(List.of("fail", "--member", "other1.img"), ARRAY));
        List<String> m = new ArrayList<>(ARRAY);
        m.add("other1.img");
        refused(2, "other1.img is a member of another array", m, with(List.of("fail", "--member", "other1.img"), m));
        refused(
                2,
                "--member nope.img is not one of the members given",
                ARRAY,
                with(List.of("remove", "--member", "nope.img"), ARRAY));
    }

    @Test
    void createOverExistingData() {
        refused(2, "a.img already holds an md superblock", ARRAY, with(List.of("create", "--size", "8M"), ARRAY));
        List<String> n = List.of("data.img", "n2.img", "n3.img");
        refused(2, "data.img already holds data", n, with(List.of("create", "--size", "8M"), n));
        List<String> all = new ArrayList<>(ARRAY);
        all.add("data.img");
        refused(2, "data.img already holds data", all, with(List.of("add", "--spare", "data.img"), ARRAY));
    }

    @Test
    void refusedMemberManagement() {
        refused(2, "a.img is active (in sync)", ARRAY, with(List.of("remove", "--member", "a.img"), ARRAY));
        List<String> all = new ArrayList<>(ARRAY);
        all.add("n9.img");
        refused(2, "--spare a.img is also given as a member", all, with(List.of("add", "--spare", "a.img"), ARRAY));
    }

    @Test
    void nbdMembersThatCannotBeUsed() {
        // Nothing listens on port 1: one line naming the URI, exit 2 (4 for detail), nothing written.
        List<String> m = swap("d.img", "nbd://127.0.0.1:1/d");
        refused(
                2,
                "nbd://127.0.0.1:1/d: cannot reach the NBD export: cannot connect: Connection refused",
                m,
                with(List.of("read", "--offset", "0", "--length", "512"), m));
        refused(4, "nbd://127.0.0.1:1/d: cannot reach the NBD export", m, with(List.of("detail"), m));
        refused(2, "nbd://127.0.0.1:1/d: cannot reach the NBD export", m, with(List.of("serve", "--port", "0"), m));
        refused(
                2,
                "bad NBD URI 'nbd:///d': nbd:// needs a host",
                ARRAY,
                with(List.of("write", "--offset", "0", "--input", "in.bin"), swap("d.img", "nbd:///d")));
        refused(
                2,
                "TLS parameter 'tls-verify-peer' is not supported",
                ARRAY,
                with(
                        List.of("write", "--offset", "0", "--input", "in.bin"),
                        swap("d.img", "nbds://host/d?tls-verify-peer=false")));
        refused(
                2,
                "network members (http://) are not supported",
                ARRAY,
                with(List.of("write", "--offset", "0", "--input", "in.bin"), swap("d.img", "http://host/d")));
        // The same export spelled two ways, caught before connecting.
        List<String> twice = List.of("a.img", "nbd+unix:///x?socket=s.sock", "nbd+unix:///x?socket=./s.sock");
        refused(
                2,
                "nbd+unix:///x?socket=./s.sock is given twice (it is the same export as nbd+unix:///x?socket=s.sock)",
                List.of("a.img"),
                with(List.of("rebuild"), twice));
        List<String> n = List.of("n1.img", "n2.img", "nbd://127.0.0.1:1/x");
        refused(
                2,
                "--size creates and sizes member files, but nbd://127.0.0.1:1/x is an NBD export",
                List.of("n1.img", "n2.img"),
                with(List.of("create", "--size", "8M"), n));
    }

    @Test
    void serveUsageErrors() {
        refused(2, "give the MEMBER files or NBD URIs of the array to serve", ARRAY, "serve");
        refused(
                2,
                "--backend memory serves a fresh in-memory array: give no MEMBER",
                ARRAY,
                with(List.of("serve", "--backend", "memory"), ARRAY));
        refused(
                2,
                "--chunk shapes a fresh array: it applies only with --backend memory",
                ARRAY,
                with(List.of("serve", "--chunk", "64K"), ARRAY));
        refused(
                2,
                "give --socket or --port/--bind, not both",
                ARRAY,
                with(List.of("serve", "--socket", "x.sock", "--port", "0"), ARRAY));
        refused(2, "unknown --executor 'turbo'", ARRAY, with(List.of("serve", "--executor", "turbo"), ARRAY));
        refused(2, "--disks must be 3 to 64, got 2", List.of(), "serve", "--backend", "memory", "--disks", "2");
    }

    @Test
    void logsAreQuietByDefaultAndVerboseOnRequest() {
        RaidLauncher.Result quiet = ok(RaidLauncher.run(dir, with(List.of("detail"), ARRAY)));
        assertEquals("", quiet.stderr(), quiet.all());
        RaidLauncher.Result loud = ok(RaidLauncher.run(dir, with(List.of("-v", "detail"), ARRAY)));
        assertTrue(loud.stderr().contains("INFO") && loud.stderr().contains("assembled"), loud.all());
        RaidLauncher.Result after = ok(RaidLauncher.run(dir, with(List.of("detail", "-vv"), ARRAY)));
        assertTrue(after.stderr().contains("INFO"), after.all());
        RaidLauncher.Result version = ok(RaidLauncher.run(dir, "--version"));
        assertTrue(version.out().matches("(?s)raid \\(raidfive\\) \\d+\\.\\d+\\.\\d+.*"), version.all());
    }

    @Test
    void operatorVerbsRefuseWithoutWriting() {
        refused(2, "a chunk is a power of two", ARRAY, with(List.of("grow", "--chunk", "96K"), ARRAY));
        refused(2, "--layout: unknown layout", ARRAY, with(List.of("grow", "--layout", "diagonal"), ARRAY));
        refused(
                2,
                "speed limits apply to the reshape raid grow runs",
                ARRAY,
                with(List.of("grow", "--speed-limit-max", "10M"), ARRAY));
        refused(
                2,
                "speed limits need 0 < --speed-limit-min <= --speed-limit-max",
                ARRAY,
                with(List.of("grow", "--speed-limit-min", "20M", "--speed-limit-max", "10M", "--continue"), ARRAY));
        refused(
                2,
                "RAID-5 runs with at most one member missing",
                List.of("x0.img", "x3.img"),
                "create",
                "--size",
                "8M",
                "x0.img",
                "missing",
                "missing",
                "x3.img");
        refused(
                2,
                "blank.img holds no md superblock",
                List.of("a.img", "blank.img"),
                "zero-superblock",
                "a.img",
                "blank.img");
        refused(
                2,
                "corrupt.img: its md superblock does not validate",
                List.of("corrupt.img"),
                "zero-superblock",
                "corrupt.img");
        refused(2, "the array is not served, nothing to stop", ARRAY, with(List.of("stop"), ARRAY));
        refused(2, "give the member files, or --array NAME", ARRAY, "detail");
        refused(
                2,
                "give either --array vol0 or the member files",
                ARRAY,
                with(List.of("fail", "--member", "a.img", "--array", "vol0"), ARRAY));
    }

    @Test
    void usageErrors() {
        refused(2, "Unknown option: '--frob'", ARRAY, with(List.of("detail", "--frob"), ARRAY));
        refused(2, "invalid size '12Q'", ARRAY, with(List.of("read", "--offset", "12Q", "--length", "512"), ARRAY));
        refused(2, "Missing required option: '--member=FILE'", ARRAY, with(List.of("fail"), ARRAY));
    }
}
