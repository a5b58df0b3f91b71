package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.Superblock;

/**
 * {@code raid grow --raid-devices N --add FILE} and {@code --continue} as an operator runs them, in
 * real processes: the array gains a member with its data kept and parity consistent (md's fields as
 * mdadm reads them), refusals leave every file as it was (and create none), and {@code kill -9} at
 * random moments of a reshape, and of its continuation, loses nothing.
 */
@Timeout(600)
class ReshapeIT {
    private static final List<String> OLD = List.of("a.img", "b.img", "c.img");
    private static final List<String> ALL = List.of("a.img", "b.img", "c.img", "d.img");

    @TempDir
    Path dir;

    private RaidLauncher.Result raid(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return RaidLauncher.run(dir, all.toArray(new String[0]));
    }

    private Superblock sb(String m) throws Exception {
        return MemberFiles.superblock(dir.resolve(m).toString());
    }

    private byte[] createAndFill(String size, int dataBytes, long seed) {
        return createAndFill(OLD, size, dataBytes, seed);
    }

    private byte[] createAndFill(List<String> members, String size, int dataBytes, long seed) {
        assertEquals(
                0,
                raid(List.of("create", "--size", size, "--chunk", "64K"), members)
                        .exit());
        byte[] data = MemberFiles.random(dataBytes, seed);
        List<String> write = new ArrayList<>(List.of("write", "--offset", "0"));
        write.addAll(members);
        assertEquals(
                0, RaidLauncher.run(dir, data, write.toArray(new String[0])).exit());
        return data;
    }

    private void assertHolds(byte[] data) throws Exception {
        assertHolds(data, ALL, 4);
    }

    /** Every member file 2 MiB longer: room after the data, as a grown device has, for a shrink. */
    private void makeRoomAfterTheData() throws java.io.IOException {
        for (String m : ALL) {
            try (java.io.RandomAccessFile raf =
                    new java.io.RandomAccessFile(dir.resolve(m).toFile(), "rw")) {
                raf.setLength(raf.length() + (2 << 20));
            }
        }
    }

    /** The reshape is over: {@code members} read {@code data} back, check finds 0, each records {@code disks}. */
    private void assertHolds(byte[] data, List<String> members, int disks) throws Exception {
        RaidLauncher.Result r = raid(
                List.of("read", "--offset", "0", "--length", Integer.toString(data.length), "--output", "-"), members);
        assertEquals(0, r.exit(), r.stderr());
        assertArrayEquals(data, r.stdout(), "the data written before the reshape");
        RaidLauncher.Result check = raid(List.of("check"), members);
        assertEquals(0, check.exit(), check.stderr());
        String said = new String(check.stdout()) + check.stderr();
        assertTrue(said.contains("0 mismatched sectors"), said);
        for (String m : members) {
            Superblock s = sb(m);
            assertEquals(disks, s.raidDisks(), m);
            assertFalse(s.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), m + " still reshaping");
        }
    }

    @Test
    void anArrayGainsAMemberAndKeepsItsData() throws Exception {
        byte[] data = createAndFill("32M", 40 << 20, 41);
        long before = sb("a.img").size() * 512 * 2;
        RaidLauncher.Result grow = raid(List.of("grow", "--raid-devices", "4", "--add", "d.img"), OLD);
        assertEquals(0, grow.exit(), grow.stderr());
        assertTrue(grow.stderr().contains("3 -> 4 members"), grow.stderr());
        assertHolds(data);
        long after = sb("a.img").size() * 512 * 3;
        assertEquals(before / 2 * 3, after);
        String mdadm = Tools.mdadm();
        if (mdadm != null) {
            String out = Tools.run(dir, Duration.ofSeconds(30), List.of(mdadm, "--examine", "d.img"))
                    .output();
            assertTrue(out.contains("Raid Devices : 4"), out);
            assertTrue(out.contains("Array Size : " + after / 1024 + " KiB"), out);
            assertTrue(out.contains("Device Role : Active device 3"), out);
            assertFalse(out.contains("Reshape pos'n"), out);
        }
    }

    /**
     * raid grow --raid-devices 4 --add with --chunk and --layout changes all three in one reshape, as
     * mdadm --grow does: the data reads back from the four, check finds 0 mismatched sectors, and the
     * superblocks (and mdadm --examine, where installed) say 4 members, the new chunk and layout.
     */
    @Test
    void anArrayGainsAMemberAndANewChunkAndLayoutAtOnce() throws Exception {
        byte[] data = createAndFill("32M", 40 << 20, 47);
        List<String> grow = new ArrayList<>(
                List.of("grow", "--raid-devices", "4", "--add", "d.img", "--chunk", "128K", "--layout", "parity-last"));
        grow.addAll(OLD);
        RaidLauncher.Result r = RaidLauncher.run(dir, grow.toArray(new String[0]));
        assertEquals(0, r.exit(), r.stderr());
        assertTrue(
                r.stderr().contains("3 -> 4 members, chunk 64K -> 128K, layout left-symmetric -> parity-last"),
                r.stderr());
        assertHolds(data);
        Superblock s = sb("d.img");
        assertEquals(256, s.chunkSectors());
        assertEquals(Raid5Algorithm.PARITY_LAST.mdNumber(), s.layout());
        String mdadm = Tools.mdadm();
        if (mdadm != null) {
            String out = Tools.run(dir, Duration.ofSeconds(30), List.of(mdadm, "--examine", "d.img"))
                    .output();
            assertTrue(out.contains("Raid Devices : 4"), out);
            assertTrue(out.contains("Chunk Size : 128K"), out);
            assertFalse(out.contains("Reshape pos'n"), out);
        }
    }

    /**
     * raid grow --chunk and --layout restripe the same members as mdadm --grow does: the data reads
     * back, check finds 0 mismatched sectors, and mdadm --examine reads the new chunk and layout.
     */
    @Test
    void theChunkAndLayoutChangeAndTheDataStays() throws Exception {
        byte[] data = createAndFill("32M", 40 << 20, 45);
        List<String> change = new ArrayList<>(List.of("grow", "--chunk", "128K", "--layout", "right-asymmetric"));
        change.addAll(OLD);
        RaidLauncher.Result r = RaidLauncher.run(dir, change.toArray(new String[0]));
        assertEquals(0, r.exit(), r.stderr());
        assertTrue(r.stderr().contains("chunk 64K -> 128K, layout left-symmetric -> right-asymmetric"), r.stderr());
        RaidLauncher.Result read =
                raid(List.of("read", "--offset", "0", "--length", Integer.toString(data.length), "--output", "-"), OLD);
        assertArrayEquals(data, read.stdout(), "the data after the change: " + read.stderr());
        RaidLauncher.Result check = raid(List.of("check"), OLD);
        assertEquals(0, check.exit(), check.stderr());
        String said = new String(check.stdout()) + check.stderr();
        assertTrue(said.contains("0 mismatched sectors"), said);
        Superblock s = sb("a.img");
        assertEquals(256, s.chunkSectors());
        assertFalse(s.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE));
        String mdadm = Tools.mdadm();
        if (mdadm != null) {
            String out = Tools.run(dir, Duration.ofSeconds(30), List.of(mdadm, "--examine", "a.img"))
                    .output();
            assertTrue(out.contains("Chunk Size : 128K"), out);
            assertTrue(out.contains("Layout : right-asymmetric"), out);
            assertFalse(out.contains("Reshape pos'n"), out);
        }
    }

    /**
     * raid grow --raid-devices 3 --array-size removes a member as mdadm --grow does (the size first):
     * refused without the size, in one line, writing nothing; then the data up to the size reads back
     * from the three members left, check finds 0 mismatched sectors, the freed member is a spare (said,
     * and as mdadm --examine reads it), and the data offset moved up into the room after the data.
     */
    @Test
    void anArrayLosesAMemberAndKeepsItsDataUpToTheNewSize() throws Exception {
        byte[] data = createAndFill(ALL, "16M", 40 << 20, 46);
        long oldOffset = sb("a.img").dataOffset();
        long newSize = sb("a.img").size() * 512 * 2;
        makeRoomAfterTheData();
        List<Path> files = ALL.stream().map(dir::resolve).toList();
        Map<Path, String> before = MemberFiles.snapshot(files);
        RaidLauncher.Result refused = raid(List.of("grow", "--raid-devices", "3"), ALL);
        assertEquals(ExitCode.USAGE, refused.exit(), refused.stderr());
        assertTrue(refused.stderr().contains("this change will reduce the size of"), refused.stderr());
        assertTrue(refused.stderr().contains(newSize + " bytes (" + newSize / 1024 + "K)"), refused.stderr());
        assertEquals(1, refused.stderr().strip().lines().count(), "one line: " + refused.stderr());
        MemberFiles.assertUnchanged(before, "grow --raid-devices 3 without --array-size");
        // a bare number is KiB to mdadm and would be bytes here: refused, nothing written
        RaidLauncher.Result bare =
                raid(List.of("grow", "--raid-devices", "3", "--array-size", Long.toString(newSize / 1024)), ALL);
        assertEquals(ExitCode.USAGE, bare.exit(), bare.stderr());
        assertTrue(bare.stderr().contains("has no unit"), bare.stderr());
        assertEquals(1, bare.stderr().strip().lines().count(), "one line: " + bare.stderr());
        MemberFiles.assertUnchanged(before, "grow --array-size without a unit");
        RaidLauncher.Result shrink =
                raid(List.of("grow", "--raid-devices", "3", "--array-size", newSize / 1024 + "K"), ALL);
        assertEquals(0, shrink.exit(), shrink.stderr());
        assertTrue(shrink.stderr().contains("4 -> 3 members"), shrink.stderr());
        assertTrue(shrink.stderr().contains("d.img is now a spare"), shrink.stderr());
        assertHolds(Arrays.copyOf(data, (int) newSize), OLD, 3); // the data up to the new size
        for (String m : OLD) {
            assertTrue(sb(m).dataOffset() > oldOffset, m + "'s data offset moved up");
        }
        assertEquals(Superblock.ROLE_SPARE, sb("d.img").role());
        String mdadm = Tools.mdadm();
        if (mdadm != null) {
            String out = Tools.run(dir, Duration.ofSeconds(30), List.of(mdadm, "--examine", "d.img"))
                    .output();
            assertTrue(out.contains("Raid Devices : 3"), out);
            assertTrue(out.contains("Device Role : spare"), out);
            assertTrue(out.contains("Array Size : " + newSize / 1024 + " KiB"), out);
            assertFalse(out.contains("Reshape pos'n"), out);
        }
    }

    @Test
    void refusalsChangeNoFileAndCreateNone() throws Exception {
        createAndFill("16M", 4 << 20, 42);
        List<Path> files = OLD.stream().map(dir::resolve).toList();
        Map<Path, String> before = MemberFiles.snapshot(files);
        String[][] cases = {
            {"5", "d.img", "needs 2 --add file(s), got 1"},
            {"2", "d.img", "no --add, --chunk or --layout with it"},
        };
        for (String[] c : cases) {
            RaidLauncher.Result r = raid(List.of("grow", "--raid-devices", c[0], "--add", c[1]), OLD);
            assertEquals(ExitCode.USAGE, r.exit(), r.stderr());
            assertTrue(r.stderr().contains(c[2]), r.stderr());
            assertEquals(1, r.stderr().strip().lines().count(), "one line: " + r.stderr());
            MemberFiles.assertUnchanged(before, "grow --raid-devices " + c[0]);
            assertFalse(Files.exists(dir.resolve("d.img")), "no file created");
        }
        Files.write(dir.resolve("d.img"), new byte[1 << 20]); // blank, but smaller than a member
        RaidLauncher.Result small = raid(List.of("grow", "--raid-devices", "4", "--add", "d.img"), OLD);
        assertEquals(ExitCode.USAGE, small.exit(), small.stderr());
        assertTrue(small.stderr().contains("d.img holds 1048576 bytes"), small.stderr());
        assertEquals(1 << 20, Files.size(dir.resolve("d.img")), "a refused grow does not extend the file");
        MemberFiles.assertUnchanged(before, "grow onto a short file");
        Files.write(dir.resolve("d.img"), new byte[] {1});
        RaidLauncher.Result busy = raid(List.of("grow", "--raid-devices", "4", "--add", "d.img"), OLD);
        assertEquals(ExitCode.USAGE, busy.exit(), busy.stderr());
        assertTrue(busy.stderr().contains("already holds data"), busy.stderr());
        MemberFiles.assertUnchanged(before, "grow onto a file holding data");
        Files.delete(dir.resolve("d.img"));
        RaidLauncher.Result nothing = raid(List.of("grow", "--continue"), OLD);
        assertEquals(ExitCode.USAGE, nothing.exit(), nothing.stderr());
        assertTrue(nothing.stderr().contains("not reshaping"), nothing.stderr());
        for (Path f : files) {
            Files.delete(f);
        }
        RaidLauncher.Result ppl =
                raid(List.of("create", "--size", "16M", "--chunk", "64K", "--consistency-policy", "ppl"), OLD);
        assertEquals(0, ppl.exit(), ppl.stderr());
        Map<Path, String> withPpl = MemberFiles.snapshot(files);
        RaidLauncher.Result r = raid(List.of("grow", "--raid-devices", "4", "--add", "d.img"), OLD);
        assertEquals(ExitCode.USAGE, r.exit(), r.stderr());
        assertTrue(r.stderr().contains("partial parity log"), r.stderr());
        MemberFiles.assertUnchanged(withPpl, "grow with a partial parity log");
        assertFalse(Files.exists(dir.resolve("d.img")), "the added file created for a refused grow is removed");
    }

    /**
     * Ctrl-C (SIGINT, and SIGTERM alike) stops the grow (paced by --speed-limit-max) at the next batch with the position recorded
     * on every member and says how to resume; mdadm --examine reads the reshape raidfive recorded
     * (position, delta, new offset) as raid examine prints it; --continue finishes it.
     */
    @Test
    void anInterruptedGrowSaysHowToResumeAndMdadmReadsItsPosition() throws Exception {
        byte[] data = createAndFill("640M", 64 << 20, 43);
        String said = growInterruptedMidWay();
        assertTrue(said.contains("interrupted at") && said.contains("raid grow --continue"), said);
        Superblock s = sb("a.img");
        assertTrue(s.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "still reshaping: " + s);
        assertTrue(s.reshapePosition() > 0, "the position reached is recorded: " + s);
        for (String m : ALL) {
            assertEquals(s.reshapePosition(), sb(m).reshapePosition(), m + " records the same position");
        }
        String mdadm = Tools.mdadm();
        if (mdadm != null) {
            String theirs = Tools.run(dir, Duration.ofSeconds(30), List.of(mdadm, "--examine", "d.img"))
                    .output();
            String ours = new String(raid(List.of("examine"), List.of("d.img")).stdout());
            for (String field :
                    List.of("Reshape pos'n", "Delta Devices", "New Offset", "Data Offset", "Raid Devices")) {
                assertEquals(
                        line(theirs, field), line(ours, field), field + "\nmdadm:\n" + theirs + "\nraid:\n" + ours);
                assertTrue(line(theirs, field) != null, field + " in mdadm --examine:\n" + theirs);
            }
        }
        assertTrue(s.reshapePosition() * 512 < data.length, "the data crosses the position: " + s.reshapePosition());
        assertReadsMidReshape(data);
        List<String> cont = new ArrayList<>(List.of("grow", "--continue"));
        cont.addAll(ALL);
        RaidLauncher.Result c = RaidLauncher.run(dir, cont.toArray(new String[0]));
        assertEquals(0, c.exit(), c.stderr());
        assertHolds(data);
    }

    /**
     * {@code raid grow} of {@link #OLD} to 4 members, paced as md's speed_limit_max paces it so that
     * it is surely mid-way when Ctrl-C (SIGINT) stops it; returns what it said on stderr.
     */
    private String growInterruptedMidWay() throws Exception {
        PacedGrow g = startPacedGrow();
        Thread.sleep(300);
        new ProcessBuilder("kill", "-INT", Long.toString(g.process.pid()))
                .start()
                .waitFor();
        assertTrue(g.process.waitFor(60, TimeUnit.SECONDS));
        g.errDone.get(10, TimeUnit.SECONDS);
        return g.err.toString();
    }

    /** A running {@code raid grow} and its stderr, collected until it ends. */
    private record PacedGrow(
            Process process, java.io.ByteArrayOutputStream err, java.util.concurrent.CompletableFuture<?> errDone) {}

    /** {@code raid grow} of {@link #OLD} to 4 members at md's pace of 16M per member, returned once every member records the reshape. */
    private PacedGrow startPacedGrow() throws Exception {
        List<String> grow =
                new ArrayList<>(List.of("grow", "--speed-limit-max", "16M", "--raid-devices", "4", "--add", "d.img"));
        grow.addAll(OLD);
        Process p = RaidLauncher.builder(dir, List.of(), grow.toArray(new String[0]))
                .start();
        RaidLauncher.drain(p.getInputStream());
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        var errDone = RaidLauncher.drain(p.getErrorStream(), err);
        // every member: the grow writes the start on d.img first, then on c, b and a; a member cut
        // short before its start is written fails the start, not the running grow
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!ALL.stream().allMatch(this::reshaping) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return new PacedGrow(p, err, errDone);
    }

    /**
     * {@code raid serve} of an array stopped mid-grow, read and written by qemu-img over NBD: with
     * {@code --read-only} the reshape waits (the members' superblocks do not change) and a write is
     * refused; without it the reshape continues in the background while qemu-img writes 1 MiB across
     * the reshape's position and reads the whole array mid-way, and after the reshape's end (said on
     * stderr) the array reads the same again. The stopped server leaves a finished, clean 4-member
     * array holding the data, check 0.
     */
    @Test
    void raidServeServesTheArrayWhileTheReshapeContinues() throws Exception {
        Tools.assumeInstalled("qemu-img", "qemu-utils");
        byte[] data = createAndFill("128M", 64 << 20, 46);
        growInterruptedMidWay();
        Superblock stopped = sb("a.img");
        assertTrue(stopped.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "mid-reshape: " + stopped);
        assertTrue(stopped.reshapePosition() * 512 < data.length, "the data crosses the position");
        String socket = dir.resolve("raid.sock").toString();
        List<String> readOnly = new ArrayList<>(List.of("--socket", socket, "--read-only"));
        readOnly.addAll(ALL);
        try (Served s = Served.start(dir, readOnly.toArray(new String[0]))) {
            assertTrue(s.stderr().contains("mid-reshape at") && s.awaitLine("the reshape waits", 30), s.stderr());
            assertServes(s, data, "--read-only");
            Files.write(dir.resolve("block.raw"), MemberFiles.random(4096, 47));
            assertTrue(qemuImgWrite(s).exit() != 0, "a write through --read-only is refused");
            assertEquals(0, s.stop("INT"), s.stderr());
        }
        for (String m : ALL) {
            assertEquals(stopped.reshapePosition(), sb(m).reshapePosition(), m + " after raid serve --read-only");
            assertEquals(stopped.events(), sb(m).events(), m + "'s events after raid serve --read-only");
        }
        List<String> serve = new ArrayList<>(List.of("--socket", socket, "--speed-limit-max", "8M"));
        serve.addAll(ALL);
        byte[] tail = MemberFiles.random(1 << 20, 50);
        long grown;
        try (Served s = Served.start(dir, serve.toArray(new String[0]))) {
            assertTrue(s.awaitLine("continues in the background", 30), s.stderr());
            // 1 MiB from 512 KiB below the position: some in the new geometry, the rest in the old
            int at = (int) Math.max(0, stopped.reshapePosition() * 512 - (512 << 10));
            byte[] block = MemberFiles.random(1 << 20, 48);
            Files.write(dir.resolve("block.raw"), block);
            Tools.Result write = qemuImgWrite(s, at);
            assertEquals(0, write.exit(), "a write mid-reshape: " + write.output());
            System.arraycopy(block, 0, data, at, block.length);
            assertServes(s, data, "during the reshape");
            assertFalse(s.stderr().contains("reshape done"), "the I/O met the reshape mid-way:\n" + s.stderr());
            assertTrue(s.awaitLine("reshape done", 120), s.stderr());
            // md's array grows at the reshape's end: a new connection is told 3 data members' size
            assertTrue(s.stderr().contains("new connections see the new size"), s.stderr());
            grown = s.size() / 2 * 3;
            Files.write(dir.resolve("block.raw"), tail);
            Tools.Result last = qemuImgWrite(s, grown - tail.length);
            assertEquals(0, last.exit(), "a write into the new space: " + last.output());
            assertServes(s, data, grown, tail, "after the reshape's end");
            assertEquals(0, s.stop("INT"), s.stderr());
            assertTrue(s.stderr().contains("reshaped"), s.stderr());
        }
        for (String m : ALL) {
            assertTrue(sb(m).isClean(), m + " clean after the stop");
        }
        assertEquals(grown, sb("a.img").size() * 512 * 3, "the size the members record");
        assertHolds(data);
        RaidLauncher.Result r = raid(
                List.of(
                        "read",
                        "--offset",
                        Long.toString(grown - tail.length),
                        "--length",
                        Integer.toString(tail.length),
                        "--output",
                        "-"),
                ALL);
        assertEquals(0, r.exit(), r.stderr());
        assertArrayEquals(tail, r.stdout(), "the last MiB of the grown array, written through raid serve");
    }

    /**
     * {@code kill -9} of a {@code raid serve} that continues a reshape, at a random moment after it
     * acknowledged a client's write (1 MiB, the first round across the position), three rounds, each
     * serving the dirty reshape the last one left: the members record it dirty; {@code raid grow
     * --continue} finishes it (saying the resync is due), {@code raid rebuild} runs the resync, and
     * the array holds the data with every write, check 0.
     */
    @Test
    void serversKilledAfterWritesMidReshapeLoseNoAcknowledgedWrite() throws Exception {
        Tools.assumeInstalled("qemu-img", "qemu-utils");
        long seed = System.nanoTime();
        System.out.println("ReshapeIT seed " + seed);
        Random rnd = new Random(seed);
        byte[] data = createAndFill("128M", 64 << 20, 49);
        growInterruptedMidWay();
        List<String> serve =
                new ArrayList<>(List.of("--socket", dir.resolve("raid.sock").toString(), "--speed-limit-max", "4M"));
        serve.addAll(ALL);
        for (int round = 0; round < 3; round++) {
            try (Served s = Served.start(dir, serve.toArray(new String[0]))) {
                assertTrue(s.awaitLine("continues in the background", 30), s.stderr());
                long position = sb("a.img").reshapePosition() * 512;
                int at = round == 0
                        ? (int) Math.max(0, position - (512 << 10))
                        : rnd.nextInt((data.length - (1 << 20)) / 512) * 512;
                byte[] block = MemberFiles.random(1 << 20, seed + round);
                Files.write(dir.resolve("block.raw"), block);
                Tools.Result write = qemuImgWrite(s, at);
                assertEquals(0, write.exit(), write.output());
                System.arraycopy(block, 0, data, at, block.length);
                Thread.sleep(rnd.nextInt(1500));
                new ProcessBuilder("kill", "-9", Long.toString(s.process().pid()))
                        .start()
                        .waitFor();
                assertTrue(s.process().waitFor(30, TimeUnit.SECONDS));
                System.out.println("round " + round + ": wrote 1 MiB at " + at + ", position " + position);
            }
            for (String m : ALL) {
                Superblock sb = sb(m);
                assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), m + " still reshaping");
                assertFalse(sb.isClean(), m + " records the writes (dirty)");
            }
        }
        List<String> cont = new ArrayList<>(List.of("grow", "--continue"));
        cont.addAll(ALL);
        RaidLauncher.Result c = RaidLauncher.run(dir, cont.toArray(new String[0]));
        assertEquals(0, c.exit(), c.stderr());
        assertTrue(c.stderr().contains("resync is due"), c.stderr());
        RaidLauncher.Result rebuild = raid(List.of("rebuild"), ALL);
        assertEquals(0, rebuild.exit(), rebuild.stderr());
        assertHolds(data);
    }

    /**
     * {@code raid grow --start-only} records the start on every member and returns at once (position
     * 0, nothing moved); {@code raid serve} then runs the whole reshape while it serves, and the
     * stopped server leaves the grown array holding the data, clean, check 0. Without a reshape to
     * start, --start-only is refused.
     */
    @Test
    void aReshapeStartedOnlyIsRunByRaidServe() throws Exception {
        byte[] data = createAndFill("32M", 16 << 20, 51);
        List<String> grow = new ArrayList<>(List.of("grow", "--start-only", "--raid-devices", "4", "--add", "d.img"));
        grow.addAll(OLD);
        RaidLauncher.Result started = RaidLauncher.run(dir, grow.toArray(new String[0]));
        assertEquals(0, started.exit(), started.stderr());
        assertTrue(
                started.stderr().contains("reshape started") && started.stderr().contains("raid serve"),
                started.stderr());
        for (String m : ALL) {
            Superblock sb = sb(m);
            assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), m + " records the reshape");
            assertEquals(0, sb.reshapePosition(), m);
        }
        RaidLauncher.Result refused = raid(List.of("grow", "--start-only", "--continue"), ALL);
        assertEquals(2, refused.exit(), refused.stderr());
        List<String> serve =
                new ArrayList<>(List.of("--socket", dir.resolve("raid.sock").toString()));
        serve.addAll(ALL);
        try (Served s = Served.start(dir, serve.toArray(new String[0]))) {
            assertTrue(s.awaitLine("reshape done", 120), s.stderr());
            assertEquals(0, s.stop("TERM"), s.stderr());
        }
        assertHolds(data);
    }

    /**
     * {@code raid grow} of an array that {@code raid serve} holds is refused (exit 2), writes nothing
     * and creates no file, and says how to reshape a served array: stop it, start the reshape with
     * {@code --start-only}, serve it again (which {@link #aReshapeStartedOnlyIsRunByRaidServe} runs).
     */
    @Test
    void growOfAServedArrayIsRefusedWithTheWayToDoIt() throws Exception {
        createAndFill("32M", 4 << 20, 53);
        List<String> serve =
                new ArrayList<>(List.of("--socket", dir.resolve("raid.sock").toString()));
        serve.addAll(OLD);
        try (Served s = Served.start(dir, serve.toArray(new String[0]))) {
            List<byte[]> before = new ArrayList<>();
            for (String m : OLD) {
                before.add(Files.readAllBytes(dir.resolve(m)));
            }
            List<String> grow = new ArrayList<>(List.of("grow", "--raid-devices", "4", "--add", "d.img"));
            grow.addAll(OLD);
            RaidLauncher.Result refused = RaidLauncher.run(dir, grow.toArray(new String[0]));
            assertEquals(2, refused.exit(), refused.stderr());
            String said = refused.stderr();
            assertTrue(said.contains("is in use by another process"), said);
            assertTrue(
                    said.contains("raid stop a.img b.img c.img")
                            && said.contains("raid grow --start-only")
                            && said.contains("raid serve again"),
                    said);
            assertEquals(1, said.strip().lines().count(), "one line: " + said);
            assertFalse(Files.exists(dir.resolve("d.img")), "no member file created");
            for (int i = 0; i < OLD.size(); i++) {
                assertArrayEquals(before.get(i), Files.readAllBytes(dir.resolve(OLD.get(i))), OLD.get(i) + " changed");
            }
            assertEquals(0, s.stop("TERM"), s.stderr());
        }
    }

    /**
     * A {@code raid serve} that continues a reshape is seen and stopped as any served array is: it
     * publishes live counters, {@code raid monitor} prints the reshape's 20% steps, {@code raid stat}
     * shows its progress, and {@code raid stop}
     * (found by the members it holds, verified by that file) stops it at the next batch with the
     * position checkpointed on every member, clean; {@code raid grow --continue} finishes it.
     */
    @Test
    void raidStatAndRaidStopSeeAServedReshape() throws Exception {
        byte[] data = createAndFill("32M", 16 << 20, 52);
        List<String> grow = new ArrayList<>(List.of("grow", "--start-only", "--raid-devices", "4", "--add", "d.img"));
        grow.addAll(OLD);
        RaidLauncher.Result started = RaidLauncher.run(dir, grow.toArray(new String[0]));
        assertEquals(0, started.exit(), started.stderr());
        List<String> serve = new ArrayList<>(List.of(
                "--socket",
                dir.resolve("raid.sock").toString(),
                "--speed-limit-min",
                "128K",
                "--speed-limit-max",
                "256K"));
        serve.addAll(ALL);
        Process monitor = null;
        try (Served s = Served.start(dir, serve.toArray(new String[0]))) {
            assertTrue(s.awaitLine("continues in the background", 30), s.stderr());
            assertTrue(s.stderr().contains("live counters and events in"), s.stderr());
            List<String> follow = new ArrayList<>(List.of("monitor", "--test"));
            follow.addAll(ALL);
            monitor = RaidLauncher.builder(dir, List.of(), follow.toArray(new String[0]))
                    .start();
            Tools.track(monitor);
            java.io.ByteArrayOutputStream events = new java.io.ByteArrayOutputStream();
            RaidLauncher.drain(monitor.getInputStream(), events);
            RaidLauncher.drain(monitor.getErrorStream());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            // the reshape's 20% steps, in mdadm --monitor's words, from the server's events
            while (!events.toString(java.nio.charset.StandardCharsets.UTF_8).matches("(?s).*Rebuild[2468]0.*")) {
                assertTrue(System.nanoTime() < deadline, "raid monitor saw no step of the reshape: " + events);
                Thread.sleep(20);
            }
            RaidLauncher.Result stat = raid(List.of("stat"), ALL);
            assertEquals(0, stat.exit(), stat.all());
            assertTrue(stat.out().contains(", reshape ") && stat.out().contains("MiB/s"), stat.all());
            RaidLauncher.Result json = raid(List.of("stat", "--json"), ALL);
            assertTrue(json.out().contains("\"reshaping\":1") || json.out().contains("\"reshaping\": 1"), json.all());
            RaidLauncher.Result stop = raid(List.of("stop"), ALL);
            assertEquals(0, stop.exit(), stop.all() + "\n" + s.stderr());
            assertTrue(s.process().waitFor(30, TimeUnit.SECONDS), s.stderr());
            assertEquals(0, s.process().exitValue(), s.stderr());
            assertTrue(s.stderr().contains("the position checkpointed on every member"), s.stderr());
        } finally {
            if (monitor != null) {
                monitor.destroy();
            }
        }
        long position = sb("a.img").reshapePosition();
        for (String m : ALL) {
            Superblock sb = sb(m);
            assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), m + " still mid-reshape");
            assertTrue(sb.isClean(), m + " clean after raid stop");
            assertEquals(position, sb.reshapePosition(), m);
        }
        assertTrue(position > 0, "the reshape moved before the stop");
        RaidLauncher.Result finish = raid(List.of("grow", "--continue"), ALL);
        assertEquals(0, finish.exit(), finish.all());
        assertHolds(data);
    }

    /** qemu-img writes block.raw to the export {@code s} at byte {@code at}. */
    private Tools.Result qemuImgWrite(Served s, long at) throws Exception {
        String target = "driver=raw,offset=" + at + ",size=" + Files.size(dir.resolve("block.raw"))
                + ",file.driver=nbd,file.server.type=unix,file.server.path="
                + s.uri().replaceFirst(".*socket=", "")
                + ",file.export=raid";
        return Tools.run(
                dir,
                Duration.ofSeconds(90),
                List.of("qemu-img", "convert", "-n", "-f", "raw", "--target-image-opts", "block.raw", target));
    }

    private Tools.Result qemuImgWrite(Served s) throws Exception {
        return qemuImgWrite(s, 0);
    }

    /** qemu-img reads the whole export {@code s}: the data, then zeros, at the size it was served at. */
    private void assertServes(Served s, byte[] data, String when) throws Exception {
        assertServes(s, data, s.size(), new byte[0], when);
    }

    /**
     * qemu-img, connecting now, reads the whole export {@code s}: {@code size} bytes, the data, then
     * zeros, then {@code tail} at the end.
     */
    private void assertServes(Served s, byte[] data, long size, byte[] tail, String when) throws Exception {
        Files.deleteIfExists(dir.resolve("back.raw"));
        Tools.runOk(dir, Duration.ofSeconds(120), "qemu-img", "convert", "-f", "raw", "-O", "raw", s.uri(), "back.raw");
        byte[] back = Files.readAllBytes(dir.resolve("back.raw"));
        assertEquals(size, back.length, "the size qemu-img was told " + when);
        assertArrayEquals(data, Arrays.copyOf(back, data.length), "the data read by qemu-img " + when);
        int zerosEnd = back.length - tail.length;
        for (int i = data.length; i < zerosEnd; i++) {
            if (back[i] != 0) {
                throw new AssertionError("byte " + i + " past the data is " + back[i] + " " + when);
            }
        }
        assertArrayEquals(tail, Arrays.copyOfRange(back, zerosEnd, back.length), "the last bytes " + when);
    }

    /**
     * {@code raid read} of an array stopped mid-reshape gives back the data (md's mapping at the
     * recorded position) and changes no superblock.
     */
    private void assertReadsMidReshape(byte[] data) throws Exception {
        List<Superblock> before = new ArrayList<>();
        for (String m : ALL) {
            before.add(sb(m));
        }
        byte[] read = raid(
                        List.of("read", "--offset", "0", "--length", Integer.toString(data.length), "--output", "-"),
                        ALL)
                .stdout();
        assertArrayEquals(
                data, read, "raid read mid-reshape at " + before.get(0).reshapePosition());
        for (int i = 0; i < ALL.size(); i++) {
            Superblock after = sb(ALL.get(i));
            assertEquals(before.get(i).events(), after.events(), ALL.get(i) + "'s events after raid read");
            assertEquals(before.get(i).reshapePosition(), after.reshapePosition());
        }
    }

    /**
     * A member failing under a running grow (b.img cut to half its size, so its reads past that fail)
     * is recorded faulty and the reshape finishes degraded, exit 1, saying how to rebuild; the three
     * members left read the data, and a spare added and rebuilt makes the array whole (check: 0
     * mismatched sectors).
     */
    @Test
    void aMemberFailingMidGrowIsLeftOutAndTheGrowFinishesDegraded() throws Exception {
        byte[] data = createAndFill("64M", 100 << 20, 44);
        PacedGrow g = startPacedGrow();
        Process p = g.process;
        java.io.ByteArrayOutputStream err = g.err;
        var errDone = g.errDone;
        try (java.io.RandomAccessFile b =
                new java.io.RandomAccessFile(dir.resolve("b.img").toFile(), "rw")) {
            b.setLength(32L << 20);
        }
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        errDone.get(10, TimeUnit.SECONDS);
        String said = err.toString();
        assertEquals(1, p.exitValue(), said);
        assertTrue(said.contains("b.img failed and is recorded faulty"), said);
        assertTrue(said.contains("raid add --spare FILE a.img c.img d.img"), said);
        List<String> left = List.of("a.img", "c.img", "d.img");
        RaidLauncher.Result r = raid(
                List.of("read", "--offset", "0", "--length", Integer.toString(data.length), "--output", "-"), left);
        assertArrayEquals(data, r.stdout(), "the data, read degraded: " + r.stderr());
        List<String> add = new ArrayList<>(List.of("add", "--spare", "e.img"));
        add.addAll(left);
        RaidLauncher.Result added = raid(add, List.of());
        assertEquals(0, added.exit(), added.stderr());
        List<String> whole = List.of("a.img", "c.img", "d.img", "e.img");
        RaidLauncher.Result rebuilt = raid(List.of("rebuild"), whole);
        assertEquals(0, rebuilt.exit(), rebuilt.stderr());
        RaidLauncher.Result check = raid(List.of("check"), whole);
        assertEquals(0, check.exit(), check.stderr());
        String checked = new String(check.stdout()) + check.stderr();
        assertTrue(checked.contains("0 mismatched sectors"), checked);
        RaidLauncher.Result again = raid(
                List.of("read", "--offset", "0", "--length", Integer.toString(data.length), "--output", "-"), whole);
        assertArrayEquals(data, again.stdout(), "the data after the rebuild");
    }

    private static String line(String examine, String field) {
        return examine.lines()
                .map(String::strip)
                .filter(l -> l.startsWith(field + " :"))
                .findFirst()
                .orElse(null);
    }

    /** {@code kill -9} of the grow, and in some rounds of its continuation, at random moments. */
    @Test
    void killedReshapesLoseNothing() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeIT seed " + seed);
        Random rnd = new Random(seed);
        for (int round = 0; round < 3; round++) {
            for (String m : ALL) {
                Files.deleteIfExists(dir.resolve(m));
            }
            byte[] data = createAndFill("160M", 192 << 20, round);
            List<String> grow = new ArrayList<>(List.of("grow", "--raid-devices", "4", "--add", "d.img"));
            grow.addAll(OLD);
            killAfter(grow, 600 + rnd.nextInt(1600), round, "grow");
            finishAfterKill(rnd, round, grow, 3, data);
            assertHolds(data);
        }
    }

    /**
     * After {@code start} was killed: in some rounds {@code --continue} is killed too; the array is read
     * mid-way when every member records the reshape (not a start cut short between two superblock
     * writes), then the reshape is finished: continued, or started again when the members still
     * record {@code disksBefore}.
     */
    private void finishAfterKill(Random rnd, int round, List<String> start, int disksBefore, byte[] data)
            throws Exception {
        List<String> cont = new ArrayList<>(List.of("grow", "--continue"));
        cont.addAll(ALL);
        if (rnd.nextBoolean() && reshaping()) {
            killAfter(cont, 100 + rnd.nextInt(800), round, "continue");
        }
        if (ALL.stream().allMatch(this::reshaping)) {
            assertReadsMidReshape(data);
        }
        List<String> finish = reshaping() ? cont : sb("a.img").raidDisks() == disksBefore ? start : null;
        if (finish != null) {
            RaidLauncher.Result r = RaidLauncher.run(dir, finish.toArray(new String[0]));
            assertEquals(0, r.exit(), r.stderr());
        }
    }

    /**
     * {@code kill -9} of a shrink (4 -> 3, members with room after their data) and in some rounds of
     * its continuation, at random moments: read mid-way when stopped so, then finished, the data up to
     * the new size is there and the parity right.
     */
    @Test
    void killedShrinksLoseNothing() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeIT shrink seed " + seed);
        Random rnd = new Random(seed);
        for (int round = 0; round < 2; round++) {
            for (String m : ALL) {
                Files.deleteIfExists(dir.resolve(m));
            }
            byte[] data = createAndFill(ALL, "160M", 192 << 20, round);
            long newSize = sb("a.img").size() * 512 * 2;
            makeRoomAfterTheData();
            List<String> shrink =
                    new ArrayList<>(List.of("grow", "--raid-devices", "3", "--array-size", newSize + "B"));
            shrink.addAll(ALL);
            killAfter(shrink, 300 + rnd.nextInt(1500), round, "shrink");
            finishAfterKill(rnd, round, shrink, 4, data);
            assertHolds(data, OLD, 3);
        }
    }

    /** True when any member (the added one included, if it has a superblock yet) records a reshape. */
    private boolean reshaping() {
        for (String m : ALL) {
            if (reshaping(m)) {
                return true;
            }
        }
        return false;
    }

    private boolean reshaping(String member) {
        try {
            return sb(member).hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE);
        } catch (Exception noSuperblockYet) {
            return false; // d.img before the grow wrote it
        }
    }

    private void killAfter(List<String> args, long delay, int round, String what) throws Exception {
        Process p = RaidLauncher.builder(dir, List.of(), args.toArray(new String[0]))
                .start();
        RaidLauncher.drain(p.getInputStream());
        RaidLauncher.drain(p.getErrorStream());
        Thread.sleep(delay);
        p.destroyForcibly(); // SIGKILL
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        String at;
        try {
            Superblock s = sb("a.img");
            at = "a.img: raid_disks " + s.raidDisks() + ", reshape "
                    + (s.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE) ? "at " + s.reshapePosition() : "none");
        } catch (Exception e) {
            at = e.getMessage();
        }
        System.out.println("ReshapeIT round " + round + ": " + what + " killed after " + delay + " ms, exit "
                + p.exitValue() + "; " + at);
    }
}
