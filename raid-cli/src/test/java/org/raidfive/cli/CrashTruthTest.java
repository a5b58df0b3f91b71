package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What {@code raid} says after a crash, and that a refusal writes nothing: the state as the
 * superblocks (and {@code mdadm --examine}, where installed) say it, a forced start needed once,
 * a check that does not count a crash's torn stripes as damage, a member that cannot be used left
 * out by every command.
 */
@Timeout(180)
class CrashTruthTest extends CliInTempDir {
    /** What a crash while writing leaves: every superblock dirty (resync_offset 0), nothing else changed. */
    private static void leaveDirty(List<String> members) throws Exception {
        for (String x : members) {
            MemberFiles.writeSuperblock(x, MemberFiles.superblock(x).resyncOffset(0));
        }
    }

    /** "clean" or "active" as mdadm --examine prints it (the independent reader), or from the superblock. */
    private String examinedState(String member) throws Exception {
        String mdadm = Tools.mdadm();
        if (mdadm == null) {
            return MemberFiles.superblock(member).isClean() ? "clean" : "active";
        }
        String out = Tools.runOk(dir, Duration.ofSeconds(30), mdadm, "--examine", member);
        for (String line : out.split("\n")) {
            if (line.trim().startsWith("State :")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        throw new AssertionError("no State line in mdadm --examine:\n" + out);
    }

    private List<String> created(int megabytes, String... names) {
        List<String> m = files(names);
        ok(Cli.run(args(List.of("create", "--size", megabytes + "M", "--chunk", "64K"), m)));
        return m;
    }

    private void write(List<String> members, long offset, byte[] data) throws IOException {
        Path in = dir.resolve("in-" + offset + ".bin");
        Files.write(in, data);
        ok(Cli.run(args(List.of("write", "--offset", Long.toString(offset), "--input", in.toString()), members)));
    }

    private byte[] read(List<String> members, long offset, int length) throws IOException {
        Path out = dir.resolve("out.bin");
        Cli.Result r = Cli.run(args(
                List.of(
                        "read",
                        "--offset",
                        Long.toString(offset),
                        "--length",
                        Integer.toString(length),
                        "--output",
                        out.toString()),
                members));
        assertTrue(r.exit() == 0 || r.exit() == 1, r.all());
        return Files.readAllBytes(out);
    }

    @Test
    void aForcedStartOfADirtyDegradedArrayIsNeededOnce() throws Exception {
        List<String> m = created(8, "a", "b", "c", "d");
        byte[] data = MemberFiles.random(256 << 10, 5);
        write(m, 0, data);
        ok(Cli.run(args(List.of("fail", "--member", m.get(3)), m)));
        List<String> rest = m.subList(0, 3);
        leaveDirty(rest);
        assertEquals("active", examinedState(rest.get(0)));
        Map<Path, String> before =
                MemberFiles.snapshot(rest.stream().map(Path::of).toList());
        Cli.Result refused = Cli.run(args(List.of("assemble"), rest));
        assertEquals(2, refused.exit(), refused.all()); // assemble lists each member found first, as mdadm -v
        assertTrue(refused.errLines().get(refused.errLines().size() - 1).contains("dirty and degraded"), refused.all());
        // A read-only forced start writes nothing: the next start still needs force.
        assertEquals(
                0,
                Cli.run(args(
                                List.of(
                                        "read",
                                        "--force",
                                        "--offset",
                                        "0",
                                        "--length",
                                        "4K",
                                        "--output",
                                        f("first.bin")),
                                rest))
                        .exit());
        MemberFiles.assertUnchanged(before, "refused assemble and read --force");
        assertRefused(Cli.run(args(List.of("add", "--spare", f("e")), rest)), 2, "add", "dirty and degraded");

        Cli.Result forced = Cli.run(args(List.of("assemble", "--force"), rest));
        assertEquals(1, forced.exit(), forced.all()); // degraded
        assertTrue(forced.err().contains("marking the array clean"), forced.all());
        for (String x : rest) {
            assertEquals("clean", examinedState(x), x + " after one forced start and a clean stop");
        }
        Cli.Result again = Cli.run(args(List.of("assemble"), rest));
        assertEquals(1, again.exit(), "degraded, no longer refused: " + again.all());
        ok(Cli.run(args(List.of("add", "--spare", f("e")), rest)));
        List<String> now = new ArrayList<>(rest);
        now.add(f("e"));
        Cli.Result rebuild = Cli.run(args(List.of("rebuild"), now));
        assertEquals(0, rebuild.exit(), rebuild.all());
        assertArrayEquals(data, read(now, 0, data.length));
        ok(Cli.run(args(List.of("check"), now)));
    }

    @Test
    void aCheckAfterACrashIsRefusedAndARepairResyncsFirst() throws Exception {
        List<String> m = created(8, "a", "b", "c", "d");
        byte[] data = MemberFiles.random(1 << 20, 6);
        write(m, 0, data);
        leaveDirty(m);
        // The crash tore a stripe: one sector of member 0's data area no longer matches parity.
        long dataOffset = MemberFiles.superblock(m.get(0)).dataOffset() * 512;
        MemberFiles.flipByte(Path.of(m.get(0)), dataOffset + 64 * 1024 + 7);

        Cli.Result detail = Cli.run(args(List.of("detail"), m));
        assertTrue(detail.out().contains("State : clean, resyncing (PENDING) (run raid rebuild)\n"), detail.out());
        Cli.Result json = Cli.run(args(List.of("detail", "--json"), m));
        assertTrue(json.out().contains("\"state\": \"clean, resyncing (PENDING)\""), json.out());

        Map<Path, String> before = MemberFiles.snapshot(m.stream().map(Path::of).toList());
        assertRefused(Cli.run(args(List.of("check"), m)), 2, "check", "resync pending");
        Cli.Result checkJson = Cli.run(args(List.of("check", "--json"), m));
        assertEquals(2, checkJson.exit(), checkJson.all());
        assertTrue(checkJson.out().contains("\"refused\": \"resync pending\""), checkJson.out());
        MemberFiles.assertUnchanged(before, "refused check");

        Cli.Result repair = Cli.run(args(List.of("repair", "--json"), m));
        assertEquals(0, repair.exit(), repair.all());
        assertTrue(repair.out().contains("\"resyncedFirst\": true"), repair.out());
        assertTrue(repair.out().contains("\"mismatchSectors\": 0"), repair.out());
        Cli.Result check = Cli.run(args(List.of("check"), m));
        assertEquals(0, check.exit(), check.all());
        assertTrue(check.out().contains(" 0 mismatched sectors"), check.out());
        assertEquals("clean", examinedState(m.get(1)));
        Cli.Result clean = Cli.run(args(List.of("detail"), m));
        assertTrue(clean.out().contains("State : clean\n"), clean.out());
    }

    @Test
    void aStaleMemberThatIsAlsoTooSmallIsLeftOutByEveryCommand() throws Exception {
        List<String> m = created(8, "a", "b", "c", "d");
        byte[] data = MemberFiles.random(512 << 10, 7);
        write(m, 0, data);
        ok(Cli.run(args(List.of("fail", "--member", m.get(2)), m)));
        try (RandomAccessFile raf = new RandomAccessFile(m.get(2), "rw")) {
            raf.setLength(1 << 20);
        }
        Cli.Result detail = Cli.run(args(List.of("detail"), m));
        assertEquals(1, detail.exit(), "degraded, not failed: " + detail.all());
        assertTrue(detail.out().contains("State : clean, degraded\n"), detail.out());
        Path out = dir.resolve("read.bin");
        Cli.Result read = Cli.run(args(
                List.of("read", "--offset", "0", "--length", Integer.toString(data.length), "--output", out.toString()),
                m));
        assertTrue(read.exit() == 0 || read.exit() == 1, read.all());
        List<String> lines = read.errLines();
        assertEquals(1, lines.size(), "one warning line:\n" + read.all());
        assertTrue(
                lines.get(0).contains("leaving out " + m.get(2)) && lines.get(0).contains("too small"), lines.get(0));
        assertArrayEquals(data, Files.readAllBytes(out));
    }

    @Test
    void aMemberTruncatedWithoutAFailureIsLeftOutAndTheArrayRunsDegraded() throws Exception {
        List<String> m = created(8, "a", "b", "c", "d");
        byte[] data = MemberFiles.random(512 << 10, 8);
        write(m, 0, data);
        try (RandomAccessFile raf = new RandomAccessFile(m.get(1), "rw")) {
            raf.setLength(2 << 20);
        }
        Map<Path, String> before = MemberFiles.snapshot(m.stream().map(Path::of).toList());
        Cli.Result read = Cli.run(args(
                List.of(
                        "read",
                        "--offset",
                        "0",
                        "--length",
                        Integer.toString(data.length),
                        "--output",
                        dir.resolve("r.bin").toString()),
                m));
        assertTrue(read.exit() == 0 || read.exit() == 1, read.all());
        assertTrue(read.err().contains("leaving out " + m.get(1)), read.all());
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("r.bin")));
        MemberFiles.assertUnchanged(before, "a read of an array with a member left out");
    }
}
