package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/** Fast checks: the command line driven in-process, with captured stdout and stderr. */
@Timeout(120)
class RaidCommandTest extends CliInTempDir {
    private static final String[] VERBS = {
        "create",
        "detail",
        "examine",
        "write",
        "read",
        "fail",
        "remove",
        "add",
        "replace",
        "rebuild",
        "check",
        "repair",
        "demo",
        "completion"
    };

    private Cli.Result create(List<String> members, String... options) {
        List<String> head = new ArrayList<>(List.of("create", "--size", "8M", "--chunk", "64K"));
        head.addAll(List.of(options));
        Cli.Result r = Cli.run(args(head, members));
        assertEquals(0, r.exit(), r.all());
        return r;
    }

    @Test
    void helpListsEveryVerb() {
        Cli.Result r = Cli.run("--help");
        assertEquals(0, r.exit(), r.all());
        for (String verb : VERBS) {
            assertTrue(r.out().contains("\n  " + verb + " "), verb + " missing from:\n" + r.out());
        }
        for (String verb : VERBS) {
            Cli.Result h = Cli.run(verb, "--help");
            assertEquals(0, h.exit(), h.all());
            assertTrue(h.out().contains("Usage: raid " + verb), h.all());
        }
    }

    @Test
    void versionSaysWhatBuildThisIs() {
        Cli.Result r = Cli.run("--version");
        assertEquals(0, r.exit(), r.all());
        assertTrue(r.out().startsWith("raid (raidfive) "), r.out());
        assertEquals(0, Cli.run("detail", "--version").exit());
    }

    @Test
    void usageErrorsAreOneLineWithExitCode2() {
        assertRefused(Cli.run(), 2, "", "a command is needed");
        assertRefused(Cli.run("frobnicate"), 2, "", "'frobnicate'");
        assertRefused(Cli.run("read", f("a")), 2, "read", "--offset");
        assertRefused(Cli.run("read", "--offset", "1X", "--length", "512", f("a")), 2, "read", "'1X'");
        assertRefused(Cli.run("create", "--bogus", f("a")), 2, "create", "--bogus");
        assertRefused(Cli.run("examine", f("a"), f("b")), 2, "examine", f("a") + ": no such file");
    }

    @Test
    void createRefusesBadSettingsBeforeCreatingAnyFile() {
        List<String> m = files("a", "b", "c", "d");
        assertRefused(
                Cli.run(args(List.of("create", "--size", "8M", "--layout", "zigzag"), m)),
                2,
                "create",
                "unknown layout 'zigzag'");
        assertRefused(
                Cli.run(args(List.of("create", "--size", "8M", "--chunk", "3000"), m)), 2, "create", "power of two");
        assertRefused(
                Cli.run(args(List.of("create", "--size", "8M", "--chunk", "2K"), m)),
                2,
                "create",
                "power of two from 4 KiB");
        assertRefused(
                Cli.run(args(List.of("create", "--size", "8M"), m.subList(0, 2))), 2, "create", "at least 3 members");
        assertRefused(Cli.run(args(List.of("create"), m)), 2, "create", "give --size");
        assertRefused(
                Cli.run(args(List.of("create", "--size", "8M"), List.of(f("a"), f("b"), f("a")))),
                2,
                "create",
                "given twice");
        assertRefused(Cli.run(args(List.of("create", "--size", "64K"), m)), 2, "create", "too small");
        for (String x : m) {
            assertFalse(Files.exists(Path.of(x)), x + " was created");
        }
    }

    @Test
    void createRefusesFilesHoldingDataUnlessForcedAndThenResyncs() throws Exception {
        List<String> m = files("a", "b", "c", "d");
        for (String x : m) {
            Files.write(Path.of(x), MemberFiles.random(8 << 20, x.hashCode()));
        }
        Map<Path, String> before = MemberFiles.snapshot(m.stream().map(Path::of).toList());
        assertRefused(Cli.run(args(List.of("create", "--chunk", "64K"), m)), 2, "create", "already holds data");
        MemberFiles.assertUnchanged(before, "create without --force");

        Cli.Result forced = Cli.run(args(List.of("create", "--chunk", "64K", "--force"), m));
        assertEquals(0, forced.exit(), forced.all());
        assertTrue(forced.err().contains("initial resync"), forced.all());
        Cli.Result check = Cli.run(args(List.of("check"), m));
        assertEquals(0, check.exit(), check.all());
        assertTrue(check.out().contains(" 0 mismatched sectors"), check.all());

        assertRefused(
                Cli.run(args(List.of("create", "--chunk", "64K"), m)), 2, "create", "already holds an md superblock");
    }

    @Test
    void lifecycleInProcess() throws Exception {
        List<String> m = files("a", "b", "c", "d");
        create(m);
        byte[] data = MemberFiles.random(1 << 20, 1);
        Path in = dir.resolve("in.bin");
        Files.write(in, data);
        assertEquals(
                0,
                Cli.run(args(List.of("write", "--offset", "64K", "--input", in.toString()), m))
                        .exit());
        Path out = dir.resolve("out.bin");
        Cli.Result read = Cli.run(args(
                List.of("read", "--offset", "64K", "--length", "1M", "--output", out.toString()),
                List.of(m.get(3), m.get(1), m.get(0), m.get(2))));
        assertEquals(0, read.exit(), read.all());
        assertArrayEquals(data, Files.readAllBytes(out));
        assertEquals(0, Cli.run(args(List.of("detail"), m)).exit());

        assertEquals(0, Cli.run(args(List.of("fail", "--member", m.get(1)), m)).exit());
        List<String> rest = List.of(m.get(0), m.get(2), m.get(3));
        Cli.Result degraded = Cli.run(args(List.of("detail"), rest));
        assertEquals(1, degraded.exit(), degraded.all());
        assertTrue(degraded.out().contains("clean, degraded"), degraded.out());
        Cli.Result withStale = Cli.run(args(List.of("detail"), m));
        assertEquals(1, withStale.exit(), withStale.all());
        assertTrue(withStale.out().contains("faulty (stale)"), withStale.out());
        Files.delete(out);
        assertEquals(
                0,
                Cli.run(args(List.of("read", "--offset", "64K", "--length", "1M", "--output", out.toString()), rest))
                        .exit());
        assertArrayEquals(data, Files.readAllBytes(out));
        assertRefused(Cli.run(args(List.of("check"), rest)), 1, "check", "degraded");
        assertRefused(Cli.run(args(List.of("rebuild"), rest)), 1, "rebuild", "no spare");

        List<String> withSpare = new ArrayList<>(rest);
        withSpare.add(f("e"));
        Cli.Result add = Cli.run(args(List.of("add", "--spare", f("e")), rest));
        assertEquals(0, add.exit(), add.all());
        assertTrue(add.err().contains("raid rebuild"), add.all());
        Cli.Result rebuild = Cli.run(args(List.of("rebuild"), withSpare));
        assertEquals(0, rebuild.exit(), rebuild.all());
        assertEquals(0, Cli.run(args(List.of("detail"), withSpare)).exit());
        Cli.Result check = Cli.run(args(List.of("check", "--json"), withSpare));
        assertEquals(0, check.exit(), check.all());
        assertTrue(check.out().contains("\"mismatchSectors\": 0"), check.out());
        Files.delete(out);
        assertEquals(
                0,
                Cli.run(args(
                                List.of("read", "--offset", "64K", "--length", "1M", "--output", out.toString()),
                                withSpare))
                        .exit());
        assertArrayEquals(data, Files.readAllBytes(out));
        Cli.Result nothing = Cli.run(args(List.of("rebuild"), withSpare));
        assertEquals(0, nothing.exit(), nothing.all());
        assertTrue(nothing.err().contains("nothing to rebuild"), nothing.all());
    }

    @Test
    void writeFromStdinRefusesAPartialFinalBlockAndWritesNothing() throws Exception {
        List<String> m = files("a", "b", "c", "d");
        create(m);
        Map<Path, String> before = MemberFiles.snapshot(m.stream().map(Path::of).toList());
        InputStream saved = System.in;
        try {
            System.setIn(new ByteArrayInputStream(new byte[4096 + 100]));
            assertRefused(
                    Cli.run(args(List.of("write", "--offset", "0"), m)),
                    2,
                    "write",
                    "4196 bytes, which ends with a partial 512-byte block (100 bytes)");
            MemberFiles.assertUnchanged(before, "write of a partial block");
            System.setIn(new ByteArrayInputStream(MemberFiles.random(8192, 3)));
            assertEquals(0, Cli.run(args(List.of("write", "--offset", "1M"), m)).exit());
        } finally {
            System.setIn(saved);
        }
    }

    @Test
    void replaceThenRebuildRetiresTheOldMember() throws Exception {
        List<String> m = files("a", "b", "c", "d");
        create(m);
        Path in = dir.resolve("in.bin");
        byte[] data = MemberFiles.random(2 << 20, 5);
        Files.write(in, data);
        assertEquals(
                0,
                Cli.run(args(List.of("write", "--offset", "0", "--input", in.toString()), m))
                        .exit());
        assertRefused(
                Cli.run(args(List.of("replace", "--member", f("x"), "--with", f("e")), m)),
                2,
                "replace",
                "not one of the members");
        Cli.Result replace = Cli.run(args(List.of("replace", "--member", m.get(1), "--with", f("e")), m));
        assertEquals(0, replace.exit(), replace.all());
        List<String> all = new ArrayList<>(m);
        all.add(f("e"));
        Cli.Result detail = Cli.run(args(List.of("detail"), all));
        assertTrue(detail.out().contains("replacement rebuilding"), detail.out());
        assertEquals(0, Cli.run(args(List.of("rebuild"), all)).exit());
        List<String> now = List.of(m.get(0), f("e"), m.get(2), m.get(3));
        Cli.Result after = Cli.run(args(List.of("detail", "--json"), now));
        assertEquals(0, after.exit(), after.all());
        assertTrue(
                after.out()
                        .contains("\"raidDevice\": 1,\n      \"state\": \"active sync\",\n      \"path\": \"" + f("e")
                                + "\""),
                after.out());
        Cli.Result withOld = Cli.run(args(List.of("detail"), all));
        assertEquals(0, withOld.exit(), "the array is whole; the old member is a stale leftover:\n" + withOld.all());
        assertTrue(withOld.out().contains("faulty (stale)"), withOld.out());
        Path out = dir.resolve("out.bin");
        assertEquals(
                0,
                Cli.run(args(List.of("read", "--offset", "0", "--length", "2M", "--output", out.toString()), now))
                        .exit());
        assertArrayEquals(data, Files.readAllBytes(out));
        assertEquals(0, Cli.run(args(List.of("check"), now)).exit());
    }

    @Test
    void removeTakesSparesAndFailedMembersButNotActiveOnes() {
        List<String> m = files("a", "b", "c", "d");
        create(m, "--spare", f("s"));
        List<String> all = new ArrayList<>(m);
        all.add(f("s"));
        assertRefused(
                Cli.run(args(List.of("remove", "--member", m.get(0)), all)),
                2,
                "remove",
                "only a faulty or spare member can be removed");
        Cli.Result spare = Cli.run(args(List.of("remove", "--member", f("s")), all));
        assertEquals(0, spare.exit(), spare.all());
        assertEquals(0, Cli.run(args(List.of("detail"), m)).exit());

        assertEquals(0, Cli.run(args(List.of("fail", "--member", m.get(3)), m)).exit());
        Cli.Result failed = Cli.run(args(List.of("remove", "--member", m.get(3)), m));
        assertEquals(0, failed.exit(), failed.all());
        assertTrue(failed.err().contains("it was failed"), failed.all());
        Cli.Result detail = Cli.run(args(List.of("detail"), m.subList(0, 3)));
        assertEquals(1, detail.exit(), detail.all());
        // Re-adding the removed member takes it back as a spare; rebuild makes it whole again.
        assertEquals(
                0,
                Cli.run(args(List.of("add", "--spare", m.get(3)), m.subList(0, 3)))
                        .exit());
        assertEquals(0, Cli.run(args(List.of("rebuild"), m)).exit());
        assertEquals(0, Cli.run(args(List.of("detail"), m)).exit());
    }

    @Test
    void failRefusesToFailADegradedArrayUnlessForced() {
        List<String> m = files("a", "b", "c", "d");
        create(m);
        assertEquals(0, Cli.run(args(List.of("fail", "--member", m.get(0)), m)).exit());
        List<String> rest = m.subList(1, 4);
        Map<Path, String> before = MemberFiles.snapshot(m.stream().map(Path::of).toList());
        assertRefused(Cli.run(args(List.of("fail", "--member", m.get(1)), rest)), 2, "fail", "would fail");
        MemberFiles.assertUnchanged(before, "refused fail");
        Cli.Result forced = Cli.run(args(List.of("fail", "--force", "--member", m.get(1)), rest));
        assertEquals(1, forced.exit(), forced.all());
        Cli.Result detail = Cli.run(args(List.of("detail"), rest));
        assertEquals(2, detail.exit(), detail.all());
        assertTrue(detail.out().contains("FAILED"), detail.out());
    }

    @Test
    void aDirtyDegradedArrayNeedsForceOnceAndThenRebuilds() throws Exception {
        List<String> m = files("a", "b", "c", "d");
        create(m);
        assertEquals(0, Cli.run(args(List.of("fail", "--member", m.get(3)), m)).exit());
        List<String> rest = m.subList(0, 3);
        // A crash while writing to the degraded array: written through the engine, and the superblocks
        // left as a crash leaves them, dirty (resync_offset 0).
        List<MemberDisk> disks = new ArrayList<>();
        for (String x : rest) {
            disks.add(FileDisk.open(Path.of(x)));
        }
        try (Raid5Array array = Raid5Array.assemble(disks, AssembleOptions.DEFAULT.withStartSync(false))) {
            array.write(0, ByteBuffer.wrap(MemberFiles.random(64 << 10, 11)), 0, 64 << 10);
        }
        for (String x : rest) {
            try (FileDisk d = FileDisk.open(Path.of(x))) {
                ByteBuffer block = ByteBuffer.allocate(4096).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                d.read(org.raidfive.md.Superblock.SUPERBLOCK_OFFSET, block, 0, 4096);
                org.raidfive.md.Superblock sb = org.raidfive.md.Superblock.decode(block, x);
                block.clear();
                sb.resyncOffset(0).encode(block);
                d.write(org.raidfive.md.Superblock.SUPERBLOCK_OFFSET, block.clear(), 0, 4096);
            }
        }
        Path out = dir.resolve("out.bin");
        assertRefused(
                Cli.run(args(List.of("read", "--offset", "0", "--length", "64K", "--output", out.toString()), rest)),
                2,
                "read",
                "dirty and degraded");
        assertEquals(
                0,
                Cli.run(args(
                                List.of(
                                        "read",
                                        "--force",
                                        "--offset",
                                        "0",
                                        "--length",
                                        "64K",
                                        "--output",
                                        out.toString()),
                                rest))
                        .exit());
        assertRefused(Cli.run(args(List.of("add", "--spare", f("e")), rest)), 2, "add", "dirty and degraded");
        Cli.Result add = Cli.run(args(List.of("add", "--force", "--spare", f("e")), rest));
        assertEquals(0, add.exit(), add.all());
        List<String> now = new ArrayList<>(rest);
        now.add(f("e"));
        // The forced start marked the array clean, as mdadm --assemble --force does: no second --force,
        // and the rebuild is a recovery only (a resync could not have checked parity with a member missing).
        Cli.Result rebuild = Cli.run(args(List.of("rebuild"), now));
        assertEquals(0, rebuild.exit(), rebuild.all());
        assertFalse(rebuild.err().contains("then resync"), rebuild.all());
        assertEquals(0, Cli.run(args(List.of("detail"), now)).exit());
        assertEquals(0, Cli.run(args(List.of("check"), now)).exit());
    }

    @Test
    void examineShowsAWrongChecksumWithTheExpectedOne() throws Exception {
        List<String> m = files("a", "b", "c", "d");
        create(m, "--name", "host:test");
        Cli.Result ok = Cli.run("examine", m.get(0));
        assertEquals(0, ok.exit(), ok.all());
        assertTrue(ok.out().contains("Checksum : ") && ok.out().contains(" - correct"), ok.out());
        assertTrue(ok.out().contains("           Name : host:test\n"), ok.out());
        MemberFiles.flipByte(Path.of(m.get(0)), 4096 + 200); // events
        Cli.Result bad = Cli.run("examine", m.get(0));
        assertEquals(1, bad.exit(), bad.all());
        assertTrue(bad.out().contains(" - expected "), bad.out());
        Cli.Result json = Cli.run("examine", "--json", m.get(0));
        assertTrue(json.out().contains("\"checksumCorrect\": false"), json.out());
        assertRefused(
                Cli.run("detail", m.get(0), m.get(1), m.get(2), m.get(3)), 4, "detail", "bad superblock checksum");
        assertRefused(Cli.run("examine", f("absent")), 2, "examine", "no such file");
    }

    @Test
    void verboseShowsEngineLogsAndStackTraces() {
        List<String> m = files("a", "b", "c", "d");
        create(m);
        Cli.Result quiet = Cli.run(args(List.of("detail"), m));
        assertFalse(quiet.err().contains("INFO"), quiet.all());
        Cli.Result loud = Cli.run(args(List.of("detail", "-v"), m));
        assertEquals(0, loud.exit(), loud.all());
        Cli.Result failing =
                Cli.run(args(List.of("-v", "read", "--offset", "0", "--length", "512"), List.of(m.get(0), f("nope"))));
        assertEquals(2, failing.exit(), failing.all());
        assertTrue(failing.err().contains("\tat "), "stack trace with -v:\n" + failing.all());
    }

    @Test
    void completionPrintsABashScriptForEveryVerb() {
        Cli.Result r = Cli.run("completion");
        assertEquals(0, r.exit(), r.all());
        assertTrue(r.out().contains("complete -F"), r.out());
        for (String verb : VERBS) {
            assertTrue(r.out().contains(verb), verb);
        }
    }

    @Test
    void demoVerifiesEverythingOnSmallMembers() {
        Cli.Result r = Cli.run("demo", "--member-size", "8M", "--seconds", "0.2");
        assertEquals(0, r.exit(), r.all());
        assertTrue(r.out().contains("everything verified"), r.out());
        assertTrue(r.out().contains("percpu / atomic = "), r.out());
        assertFalse(r.out().contains("FAILED"), r.out());
    }

    @Test
    void commandsThatOnlyLookOpenMemberFilesWithoutWriteAccess() throws Exception {
        List<String> members = files("a.img", "b.img", "c.img");
        create(members);
        try (ArraySession session = ArraySession.readOnly(members)) {
            for (String m : members) {
                MemberDisk disk = session.disk(m);
                assertTrue(disk instanceof FileDisk && ((FileDisk) disk).isReadOnly(), m + " opened writable");
                java.io.IOException refused = org.junit.jupiter.api.Assertions.assertThrows(
                        java.io.IOException.class, () -> disk.write(0, ByteBuffer.allocate(512), 0, 512));
                assertTrue(refused.getMessage().contains("read-only"), refused.getMessage());
            }
            ByteBuffer buf = ByteBuffer.allocate(4096);
            session.array().read(0, buf, 0, buf.capacity()); // reads still work through read-only files
        }
        Cli.Result detail = Cli.run(args(List.of("detail"), members));
        assertEquals(0, detail.exit(), detail.all());
        try (ArraySession session = ArraySession.readWrite(members)) {
            assertFalse(((FileDisk) session.disk(members.get(0))).isReadOnly());
        }
    }
}
