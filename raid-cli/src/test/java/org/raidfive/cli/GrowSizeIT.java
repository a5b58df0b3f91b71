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
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code raid grow --size} as an operator runs it, in real processes: the member files grow, the
 * array takes the room (data kept, new stripes resynced, md's fields as mdadm reads them), bad
 * sizes are refused with the files unchanged, and {@code kill -9} at random points of a grow loses
 * nothing: the next commands finish it.
 */
@Timeout(300)
class GrowSizeIT {
    private static final List<String> M = List.of("a.img", "b.img", "c.img", "d.img");

    @TempDir
    Path dir;

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    private RaidLauncher.Result raid(List<String> head) {
        return RaidLauncher.run(dir, with(head, M));
    }

    private void growFiles(long bytes) throws IOException {
        for (String m : M) {
            try (RandomAccessFile f = new RandomAccessFile(dir.resolve(m).toFile(), "rw")) {
                f.setLength(bytes);
            }
        }
    }

    private long arraySize() throws Exception {
        var sb = MemberFiles.superblock(dir.resolve("a.img").toString());
        return sb.size() * 512 * (M.size() - 1);
    }

    private byte[] read(long offset, int length) {
        RaidLauncher.Result r = raid(List.of(
                "read", "--offset", Long.toString(offset), "--length", Integer.toString(length), "--output", "-"));
        assertEquals(0, r.exit(), r.stderr());
        return r.stdout();
    }

    private void assertParityConsistent() {
        RaidLauncher.Result check = raid(List.of("check"));
        assertEquals(0, check.exit(), check.stderr());
        assertTrue(
                (new String(check.stdout()) + check.stderr()).contains("0 mismatched sectors"),
                new String(check.stdout()) + check.stderr());
    }

    @Test
    void growsIntoTheRoomTheFilesGained() throws Exception {
        assertEquals(
                0, raid(List.of("create", "--size", "16M", "--chunk", "64K")).exit());
        long before = arraySize();
        byte[] data = MemberFiles.random(8 << 20, 31);
        assertEquals(
                0,
                RaidLauncher.run(dir, data, with(List.of("write", "--offset", "0"), M))
                        .exit());
        growFiles(48L << 20);
        RaidLauncher.Result grow = raid(List.of("grow", "--size", "max"));
        assertEquals(0, grow.exit(), grow.stderr());
        assertTrue(grow.stderr().contains("the new stripes are resynced"), grow.stderr());
        long after = arraySize();
        assertTrue(after > before * 2, before + " -> " + after);
        assertArrayEquals(data, read(0, data.length), "the data written before the grow");
        byte[] tail = MemberFiles.random(4 << 20, 32);
        long at = after - tail.length;
        assertEquals(
                0,
                RaidLauncher.run(dir, tail, with(List.of("write", "--offset", Long.toString(at)), M))
                        .exit());
        assertArrayEquals(tail, read(at, tail.length), "data written at the end of the grown array");
        assertParityConsistent();
        String mdadmBinary = Tools.mdadm();
        if (mdadmBinary != null) {
            for (String m : M) {
                String mdadm = Tools.run(
                                dir,
                                Duration.ofSeconds(30),
                                List.of(mdadmBinary, "--examine", dir.resolve(m).toString()))
                        .output();
                assertTrue(
                        mdadm.contains("Array Size : " + after / 1024 + " KiB"),
                        "mdadm --examine " + m + ":\n" + mdadm);
            }
        }
        RaidLauncher.Result again = raid(List.of("grow", "--size", "max"));
        assertEquals(0, again.exit(), again.stderr());
        assertTrue(again.stderr().contains("nothing changed"), again.stderr());
    }

    @Test
    void badSizesAreRefusedWithTheFilesUnchanged() throws Exception {
        assertEquals(
                0, raid(List.of("create", "--size", "16M", "--chunk", "64K")).exit());
        growFiles(32L << 20);
        List<Path> files = M.stream().map(dir::resolve).toList();
        Map<Path, String> before = MemberFiles.snapshot(files);
        for (String[] bad : new String[][] {
            {"1M", "would shrink it"}, {"1G", "has room for"}, {"lots", "--size takes max or a size"}
        }) {
            RaidLauncher.Result r = raid(List.of("grow", "--size", bad[0]));
            assertEquals(ExitCode.USAGE, r.exit(), r.stderr());
            assertTrue(r.stderr().contains(bad[1]), r.stderr());
            assertEquals(1, r.stderr().strip().lines().count(), "one line: " + r.stderr());
            MemberFiles.assertUnchanged(before, "grow --size " + bad[0]);
        }
        for (Path f : files) {
            Files.delete(f);
        }
        assertEquals(
                0,
                raid(List.of("create", "--size", "16M", "--chunk", "64K", "--consistency-policy", "ppl"))
                        .exit());
        growFiles(32L << 20);
        Map<Path, String> ppl = MemberFiles.snapshot(files);
        RaidLauncher.Result r = raid(List.of("grow", "--size", "max"));
        assertEquals(ExitCode.USAGE, r.exit(), r.stderr());
        assertTrue(r.stderr().contains("partial parity log"), r.stderr());
        MemberFiles.assertUnchanged(ppl, "grow --size max with a partial parity log");
    }

    /** {@code kill -9} of {@code raid grow --size max} at random moments; the next commands finish it. */
    @Test
    void killedGrowsLoseNothing() throws Exception {
        long seed = System.nanoTime();
        System.out.println("GrowSizeIT seed " + seed);
        Random rnd = new Random(seed);
        for (int round = 0; round < 3; round++) {
            for (String m : M) {
                Files.deleteIfExists(dir.resolve(m));
            }
            assertEquals(
                    0,
                    raid(List.of("create", "--size", "32M", "--chunk", "64K")).exit());
            byte[] data = MemberFiles.random(16 << 20, round);
            assertEquals(
                    0,
                    RaidLauncher.run(dir, data, with(List.of("write", "--offset", "0"), M))
                            .exit());
            growFiles(160L << 20);
            Process p = RaidLauncher.builder(dir, List.of(), with(List.of("grow", "--size", "max"), M))
                    .start();
            RaidLauncher.drain(p.getInputStream());
            RaidLauncher.drain(p.getErrorStream());
            long delay = 300 + rnd.nextInt(1700);
            Thread.sleep(delay);
            p.destroyForcibly(); // SIGKILL
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            var left = MemberFiles.superblock(dir.resolve("a.img").toString());
            System.out.println("GrowSizeIT round " + round + ": killed after " + delay + " ms, exit " + p.exitValue()
                    + "; left size " + left.size() + " sectors per member, resync offset " + left.resyncOffset());
            // Whatever the kill left: rebuild finishes a grown array's resync, grow finishes an ungrown one.
            RaidLauncher.Result rebuild = raid(List.of("rebuild"));
            assertEquals(0, rebuild.exit(), rebuild.stderr());
            RaidLauncher.Result grow = raid(List.of("grow", "--size", "max"));
            assertEquals(0, grow.exit(), grow.stderr());
            assertEquals(((160L << 20) - dataOffsetBytes()) / 65536 * 65536 * 3, arraySize(), "round " + round);
            assertArrayEquals(data, read(0, data.length), "round " + round + ": the data written before the grow");
            assertParityConsistent();
        }
    }

    private long dataOffsetBytes() throws Exception {
        return MemberFiles.superblock(dir.resolve("a.img").toString()).dataOffset() * 512;
    }
}
