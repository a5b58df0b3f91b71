package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.FileDisk;
import org.raidfive.md.BadBlockLog;
import org.raidfive.md.Superblock;

/**
 * Every refusal the CLI gives writes nothing: each member file (and every other file the command
 * names) is hashed before and after, superblocks included. A refusal is the exit code, one line on
 * stderr naming the problem, no stack trace.
 */
@Timeout(180)
class RefusalsWriteNothingTest extends CliInTempDir {
    private List<String> created(String... names) {
        List<String> m = files(names);
        Cli.Result r = Cli.run(args(List.of("create", "--size", "8M", "--chunk", "64K"), m));
        assertEquals(0, r.exit(), r.all());
        return m;
    }

    /** Runs the command, asserts a refusal, and that no file of {@code watched} changed. */
    private void refusedWritingNothing(List<String> watched, int exit, String phrase, String... command) {
        List<Path> paths = watched.stream().map(Path::of).toList();
        Map<Path, String> before = MemberFiles.snapshot(paths);
        Cli.Result r = Cli.run(command);
        assertEquals(exit, r.exit(), String.join(" ", command) + "\n" + r.all());
        List<String> lines = r.errLines();
        assertFalse(lines.isEmpty(), r.all());
        String last = lines.get(lines.size() - 1);
        assertTrue(last.startsWith("raid " + command[0] + ": "), r.all());
        assertTrue(last.contains(phrase), "expected '" + phrase + "' in: " + last);
        assertFalse(r.err().contains("Exception"), r.all());
        MemberFiles.assertUnchanged(before, String.join(" ", command));
    }

    @Test
    void refusalsAfterAssemblyWriteNothing() throws Exception {
        List<String> m = created("a", "b", "c", "d");
        List<String> other = created("x0", "x1", "x2", "x3");
        List<String> all = new ArrayList<>(m);
        all.addAll(other);
        Files.write(Path.of(f("small")), MemberFiles.random(1 << 20, 3));
        all.add(f("small"));

        // re-add of a member of another array: refused once the array is open read-write
        refusedWritingNothing(all, 2, "x0", args(List.of("re-add", "--member", other.get(0)), m));
        // add of a spare that holds data (and is too small)
        refusedWritingNothing(all, 2, "", args(List.of("add", "--spare", f("small")), m));
        // remove of an in-sync member
        refusedWritingNothing(all, 2, "", args(List.of("remove", "--member", m.get(1)), m));
        // replace of a member with itself's sibling
        refusedWritingNothing(all, 2, "", args(List.of("replace", "--member", m.get(1), "--with", other.get(1)), m));
        // a write past the end
        Files.write(Path.of(f("in.bin")), new byte[4096]);
        all.add(f("in.bin"));
        refusedWritingNothing(all, 2, "", args(List.of("write", "--offset", "1G", "--input", f("in.bin")), m));
        // create over members that hold an array
        refusedWritingNothing(all, 2, "", args(List.of("create", "--size", "8M"), m));
        // fail that would fail the array (after one failure)
        assertEquals(0, Cli.run(args(List.of("fail", "--member", m.get(3)), m)).exit());
        refusedWritingNothing(all, 2, "would fail", args(List.of("fail", "--member", m.get(1)), m));
    }

    @Test
    void serveOptionsAreRefusedNamingTheOption() {
        for (String[] c : new String[][] {
            {"--handshake-timeout", "-1", "--handshake-timeout must not be negative"},
            {"--payload-timeout", "-3", "--payload-timeout must not be negative (zero: none), got -3 s"},
            {"--max-connections-per-address", "-1", "--max-connections-per-address must not be negative"},
            {"--max-connections", "0", "--max-connections must be at least 1"},
            {"--workers", "0", "--workers must be 1 to 1024"}
        }) {
            Cli.Result r = Cli.run("serve", "--backend", "memory", "--disks", "3", "--size", "8M", c[0], c[1]);
            assertEquals(2, r.exit(), r.all());
            assertEquals(1, r.errLines().size(), r.all());
            assertTrue(r.errLines().get(0).contains(c[2]), "expected '" + c[2] + "' in: " + r.all());
        }
    }

    @Test
    void configAndGlobErrorsAreOneLineNamingTheProblem() throws Exception {
        Path conf = dir.resolve("bad.conf");
        Files.write(conf, new byte[] {
            'D', 'E', 'V', 'I', 'C', 'E', ' ', 'a', '\n', 'A', 'R', 'R', 'A', 'Y', ' ', (byte) 0xff, (byte) 0xfe, '\n'
        });
        Cli.Result r = Cli.run("detail", "--scan", "--config", conf.toString());
        assertEquals(2, r.exit(), r.all());
        assertEquals(1, r.errLines().size(), r.all());
        assertTrue(r.errLines().get(0).contains(conf + " line 2: not UTF-8 text"), r.all());
        Cli.Result g = Cli.run("assemble", "--scan", dir.resolve("[abc").toString());
        assertEquals(2, g.exit(), g.all());
        assertEquals(1, g.errLines().size(), g.all());
        assertTrue(g.errLines().get(0).contains("is not a valid glob"), g.all());
        assertFalse(r.err().contains("Exception") || g.err().contains("Exception"), r.all() + g.all());
        // a DEVICE that is a loop of links is named as such (it was "has no DEVICE line")
        Files.createSymbolicLink(dir.resolve("loop1"), dir.resolve("loop2"));
        Files.createSymbolicLink(dir.resolve("loop2"), dir.resolve("loop1"));
        Path loops = dir.resolve("loops.conf");
        Files.writeString(
                loops,
                "DEVICE " + dir.resolve("loop1") + "\nARRAY /dev/md/x UUID=01234567:89abcdef:01234567:89abcdef\n");
        Cli.Result l = Cli.run("detail", "--array", "x", "--config", loops.toString());
        assertEquals(2, l.exit(), l.all());
        assertEquals(
                List.of("raid detail: DEVICE " + dir.resolve("loop1") + ": a loop of symbolic links"),
                l.errLines(),
                l.all());
        // a glob over /proc, where directories cannot be read and entries vanish, is looked through (it aborted);
        // pipes, sockets and terminals are never candidates
        Path proc = dir.resolve("proc.conf");
        Files.writeString(proc, "DEVICE /proc/*/fd/*\nARRAY /dev/md/x UUID=01234567:89abcdef:01234567:89abcdef\n");
        Cli.Result p = Cli.run("detail", "--array", "x", "--config", proc.toString());
        assertEquals(2, p.exit(), p.all());
        assertEquals(1, p.errLines().size(), p.all());
        assertTrue(p.errLines().get(0).startsWith("raid detail: --array x: no member found (looked at "), p.all());
    }

    @Test
    void aRefusedGrowWritesNothing() throws Exception {
        List<String> m = created("a", "b", "c", "d");
        // md's smallest layout: data right after the superblock, no bad block log: no room for a
        // bitmap or a log (mdadm --data-offset=8K makes such members). The data area is all zeros.
        for (String x : m) {
            MemberFiles.writeSuperblock(
                    x,
                    MemberFiles.superblock(x)
                            .dataOffset(16)
                            .bblogOffset(0)
                            .bblogSize(0)
                            .bblogShift(0));
        }
        refusedWritingNothing(m, 2, "no room", args(List.of("grow", "--consistency-policy", "bitmap"), m));
        refusedWritingNothing(m, 2, "no room", args(List.of("grow", "--consistency-policy", "ppl"), m));
    }

    /**
     * md's bad block table is full and a write lands in the middle of a listed range: md's clear
     * fails (-ENOSPC) and the range stays listed; the write stands and reads back (from parity).
     */
    @Test
    void aWriteSplittingARangeOfAFullBadBlockLogStands() throws Exception {
        List<String> m = created("a", "b", "c", "d");
        Superblock sb = MemberFiles.superblock(m.get(0));
        long data = sb.dataOffset();
        BadBlockLog log = BadBlockLog.EMPTY.add(data + 40, 8);
        for (int i = 0; log.ranges() < BadBlockLog.MAX_ENTRIES; i++) {
            log = log.add(data + 1000 + 2L * i, 1);
        }
        assertEquals(BadBlockLog.MAX_ENTRIES, log.ranges());
        ByteBuffer area = ByteBuffer.allocate(sb.bblogSize() * 512).order(ByteOrder.LITTLE_ENDIAN);
        log.encode(area, sb.bblogShift());
        try (FileDisk d = FileDisk.open(Path.of(m.get(0)))) {
            d.write(Superblock.SUPERBLOCK_OFFSET + sb.bblogOffset() * 512L, area, 0, area.capacity());
        }
        // left-symmetric, 64 KiB chunks: array bytes 0..64K are member a's first data chunk
        byte[] block = MemberFiles.random(512, 9);
        Files.write(Path.of(f("in.bin")), block);
        Cli.Result w =
                Cli.run(args(List.of("write", "--offset", Integer.toString(43 * 512), "--input", f("in.bin")), m));
        assertEquals(0, w.exit(), w.all());
        Cli.Result r = Cli.run(args(
                List.of("read", "--offset", Integer.toString(43 * 512), "--length", "512", "--output", f("out.bin")),
                m));
        assertEquals(0, r.exit(), r.all());
        assertArrayEquals(block, Files.readAllBytes(Path.of(f("out.bin"))));
        try (FileDisk d = FileDisk.open(Path.of(m.get(0)))) {
            ByteBuffer onMember = ByteBuffer.allocate(512);
            d.read((data + 43) * 512, onMember, 0, 512);
            assertArrayEquals(block, onMember.array(), "the write reached the member");
        }
        Superblock after = MemberFiles.superblock(m.get(0));
        try (FileDisk d = FileDisk.open(Path.of(m.get(0)))) {
            ByteBuffer back = ByteBuffer.allocate(after.bblogSize() * 512).order(ByteOrder.LITTLE_ENDIAN);
            d.read(Superblock.SUPERBLOCK_OFFSET + after.bblogOffset() * 512L, back, 0, back.capacity());
            BadBlockLog kept = BadBlockLog.decode(back, after.bblogShift(), m.get(0));
            assertTrue(kept.overlaps(data + 43, 1), "the range stays listed: " + kept);
        }
    }
}
