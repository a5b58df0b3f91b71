package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.raidfive.array.RoomyArrays.MEMBER;
import static org.raidfive.array.RoomyArrays.make;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.array.ReshapeTestDisks.Kept;
import org.raidfive.array.RoomyArrays.Made;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;

/**
 * {@link Raid5Array#reshape}: a running array changes its shape while it serves I/O, as md's does
 * under {@code mdadm --grow}. Every byte read during and after the reshape is checked against a flat
 * reference image that the writes made during it update; the array {@link OnlineReshape#finish}
 * gives back has the new shape, holds the image, and its parity recomputed from scratch matches.
 * Refusals leave the array open, serving, and its members as they were.
 */
@Timeout(120)
class OnlineReshapeTest {
    /** md's per-member rates, low enough that the I/O below meets the reshape mid-way. */
    private static final SyncLimits SLOW = new SyncLimits(2L << 20, 4L << 20);

    @Test
    void aGrowServesReadsAndWritesThroughoutAndFinishesIntoTheNewArray() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OnlineReshapeTest seed " + seed);
        Made m = make(3, seed);
        Kept added = new Kept(MEMBER, "new0");
        List<MemberDisk> all = new ArrayList<>(m.members());
        all.add(added);
        Raid5Array array = Raid5Array.assemble(m.members());
        byte[] expected = Arrays.copyOf(m.image(), (int) array.size());
        SplittableRandom random = new SplittableRandom(seed);
        writeRandom(array, expected, random, 8); // the array is dirty when the reshape starts
        OnlineReshape online =
                array.reshape(ReshapeSpec.addMembers(List.of(added)).withSyncLimits(SLOW));
        assertThrows(IOException.class, () -> array.read(0, ByteBuffer.allocate(512), 0, 512), "the old handle");
        long oldSize = expected.length;
        assertEquals(oldSize, online.size(), "md's size while a grow runs");
        AtomicLong midway = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        CompletableFuture<Void> client = CompletableFuture.runAsync(() -> {
            try {
                byte[] got = new byte[64 << 10];
                while (!done.get()) {
                    double at = online.fractionDone();
                    int len = random.nextInt(1, 129) * 512;
                    int offset = random.nextInt((int) ((oldSize - len) / 512) + 1) * 512;
                    if (random.nextBoolean()) {
                        online.read(offset, ByteBuffer.wrap(got), 0, len);
                        int mismatch = Arrays.mismatch(expected, offset, offset + len, got, 0, len);
                        if (mismatch >= 0) {
                            throw new AssertionError("byte " + (offset + mismatch) + " read at " + at
                                    + " of the reshape differs from the image (seed " + seed + ")");
                        }
                    } else {
                        byte[] block = new byte[len];
                        random.nextBytes(block);
                        online.write(offset, ByteBuffer.wrap(block), 0, len);
                        System.arraycopy(block, 0, expected, offset, len);
                    }
                    if (at > 0 && at < 1) {
                        midway.incrementAndGet();
                    }
                }
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        try {
            assertTrue(online.completion().get(60, TimeUnit.SECONDS), "the reshape ended");
        } finally {
            done.set(true);
        }
        client.get(30, TimeUnit.SECONDS);
        System.out.println("  " + midway + " reads and writes met the reshape mid-way");
        assertTrue(midway.get() > 10, "only " + midway + " reads and writes met the reshape mid-way");
        long newSize = online.size();
        assertTrue(newSize > oldSize, "md's size once the grow ended: " + newSize);
        byte[] grown = Arrays.copyOf(expected, (int) newSize); // md zeroes the new space
        try (Raid5Array after = online.finish()) {
            assertThrows(IOException.class, () -> online.read(0, ByteBuffer.allocate(512), 0, 512));
            assertEquals(newSize, after.size());
            assertEquals(4, after.layout().disks());
            ArrayOracle.assertArrayHolds(after, grown);
            writeRandom(after, grown, random, 8);
        }
        assertReshapedAndConsistent(all, grown);
    }

    @Test
    void aReshapeClosedMidwayIsResumedOnlineAndLosesNothing() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OnlineReshapeTest seed " + seed);
        Made m = make(3, seed);
        List<MemberDisk> all = new ArrayList<>(m.members());
        Raid5Array array = Raid5Array.assemble(m.members());
        // a spare of the array becomes the new data member
        Kept spare = new Kept(MEMBER, "spare0");
        array.addSpare(spare, false);
        all.add(spare);
        ArrayStateException notAdded = assertThrows(
                ArrayStateException.class,
                () -> array.reshape(ReshapeSpec.addMembers(List.of(new Kept(MEMBER, "other")))));
        assertTrue(notAdded.getMessage().contains("spare0"), notAdded.getMessage());
        OnlineReshape online =
                array.reshape(ReshapeSpec.addMembers(List.of(spare)).withSyncLimits(SLOW));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (online.fractionDone() < 0.2) {
            assertTrue(System.nanoTime() < deadline, "the reshape moved");
            Thread.sleep(10);
        }
        online.close();
        assertFalse(online.completion().get(10, TimeUnit.SECONDS), "stopped before its end");
        long stoppedAt = -1;
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), d.name() + " records the reshape");
            assertTrue(sb.isClean(), d.name() + " clean after the close");
            stoppedAt = sb.reshapePosition();
        }
        assertTrue(stoppedAt > 0, "checkpointed mid-way: " + stoppedAt);
        OnlineReshape resumed = OnlineReshape.resume(all, SyncLimits.UNLIMITED);
        byte[] head = new byte[(int) resumed.size()];
        resumed.read(0, ByteBuffer.wrap(head), 0, head.length);
        assertArrayEquals(Arrays.copyOf(m.image(), head.length), head, "read as the resumed reshape maps it");
        assertTrue(resumed.completion().get(60, TimeUnit.SECONDS));
        byte[] grown = Arrays.copyOf(m.image(), (int) resumed.size());
        try (Raid5Array after = resumed.finish()) {
            ArrayOracle.assertArrayHolds(after, grown);
        }
        assertReshapedAndConsistent(all, grown);
    }

    @Test
    void aRefusedReshapeLeavesTheArrayOpenServingAndItsMembersAsTheyWere() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OnlineReshapeTest seed " + seed);
        Made m = make(4, seed);
        try (Raid5Array array = Raid5Array.assemble(m.members())) {
            byte[] expected = Arrays.copyOf(m.image(), (int) array.size());
            long eventsBefore = SuperblockIo.read(m.members().get(0)).events();
            // three members hold less than the array: the reshape itself refuses, after the hand-over began
            ArrayConfigException tooBig = assertThrows(
                    ArrayConfigException.class, () -> array.reshape(ReshapeSpec.removeMembers(3, array.size())));
            assertTrue(tooBig.getMessage().contains("reduce the size"), tooBig.getMessage());
            for (MemberDisk d : m.members()) {
                Superblock sb = SuperblockIo.read(d);
                assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), d.name() + " not reshaping");
                assertEquals(4, sb.raidDisks(), d.name());
                assertEquals(eventsBefore, sb.events(), d.name() + ": nothing written (the array was clean)");
            }
            ArrayOracle.assertArrayHolds(array, expected);
            writeRandom(array, expected, new SplittableRandom(seed), 16);
            ArrayOracle.assertArrayHolds(array, expected);
            array.fail(m.members().get(2));
            ArrayStateException degraded = assertThrows(
                    ArrayStateException.class, () -> array.reshape(ReshapeSpec.changeChunkAndLayout(0, null)));
            assertTrue(degraded.getMessage().contains("every member in sync"), degraded.getMessage());
            writeRandom(array, expected, new SplittableRandom(seed + 1), 16);
            ArrayOracle.assertArrayHolds(array, expected);
        }
    }

    @Test
    void aPausedReshapeServesWithoutMovingUntilStartedAndAReadOnlyOneNeverMoves() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OnlineReshapeTest seed " + seed);
        Made m = make(3, seed);
        Kept added = new Kept(MEMBER, "new0");
        List<MemberDisk> all = new ArrayList<>(m.members());
        all.add(added);
        Raid5Array array = Raid5Array.assemble(m.members());
        byte[] expected = Arrays.copyOf(m.image(), (int) array.size());
        array.reshape(ReshapeSpec.addMembers(List.of(added)).withSyncLimits(SLOW))
                .close();
        long recorded = SuperblockIo.read(added).reshapePosition();
        long events = SuperblockIo.read(added).events();

        OnlineReshape readOnly = OnlineReshape.readOnly(all);
        assertEquals(recorded, readOnly.state().position());
        byte[] got = new byte[expected.length];
        readOnly.read(0, ByteBuffer.wrap(got), 0, got.length);
        assertArrayEquals(expected, got, "read at the recorded position");
        assertThrows(IOException.class, () -> readOnly.write(0, ByteBuffer.allocate(512), 0, 512));
        assertThrows(IOException.class, () -> readOnly.start(SyncLimits.UNLIMITED, p -> {}));
        assertThrows(IOException.class, readOnly::finish);
        readOnly.close();
        assertFalse(readOnly.completion().get(1, TimeUnit.SECONDS));
        for (MemberDisk d : all) {
            assertEquals(recorded, SuperblockIo.read(d).reshapePosition(), d.name() + ": nothing moved");
            assertEquals(events, SuperblockIo.read(d).events(), d.name() + ": nothing written");
        }

        OnlineReshape paused = OnlineReshape.paused(all);
        writeRandom(paused, expected, new SplittableRandom(seed), 16);
        Thread.sleep(100);
        assertEquals(recorded, paused.position(), "nothing moves before start");
        assertEquals(recorded, SuperblockIo.read(added).reshapePosition());
        List<Long> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        paused.start(SyncLimits.UNLIMITED, heard::add);
        assertThrows(IOException.class, () -> paused.start(SyncLimits.UNLIMITED, p -> {}), "started once");
        assertTrue(paused.completion().get(60, TimeUnit.SECONDS));
        assertFalse(heard.isEmpty());
        for (int i = 1; i < heard.size(); i++) {
            assertTrue(heard.get(i) > heard.get(i - 1), "the position heard only rises: " + heard);
        }
        assertEquals(paused.state().newArrayBytes() / 512, heard.get(heard.size() - 1), "heard at the end");
        byte[] grown = Arrays.copyOf(expected, (int) paused.size());
        try (Raid5Array after = paused.finish()) {
            ArrayOracle.assertArrayHolds(after, grown);
        }
        assertReshapedAndConsistent(all, grown);
    }

    @Test
    void theArraysListenersAndLiveCountersGoOnThroughTheReshapeAndIntoTheNewArray(@TempDir Path dir) throws Exception {
        long seed = System.nanoTime();
        System.out.println("OnlineReshapeTest seed " + seed);
        Made m = make(3, seed);
        Kept added = new Kept(MEMBER, "new0");
        Raid5Array array = Raid5Array.assemble(m.members());
        Path file = dir.resolve("reshaping.counters");
        array.publishCounters(file);
        List<ArrayEvent> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        array.addListener(heard::add);
        byte[] expected = Arrays.copyOf(m.image(), (int) array.size());
        // slow enough to be mid-way while another process reads the counters
        OnlineReshape online = array.reshape(
                ReshapeSpec.addMembers(List.of(added)).withSyncLimits(new SyncLimits(256 << 10, 512 << 10)));
        SplittableRandom random = new SplittableRandom(seed);
        long writes = 0;
        long writeBytes = 0;
        for (int i = 0; i < 40; i++) {
            int len = random.nextInt(1, 65) * 512;
            int offset = random.nextInt((expected.length - len) / 512 + 1) * 512;
            byte[] block = new byte[len];
            random.nextBytes(block);
            online.write(offset, ByteBuffer.wrap(block), 0, len);
            System.arraycopy(block, 0, expected, offset, len);
            writes++;
            writeBytes += len;
        }
        Thread.sleep(3 * ArrayCounters.TICK_MILLIS);
        Map<String, Long> seen = ArrayCountersTest.dump(file);
        assertEquals(1L, seen.get("array reshaping"), "published as a reshape: " + seen);
        assertEquals(writes, seen.get("array writes"), "the writes served: " + seen);
        assertEquals(writeBytes, seen.get("array write_bytes"));
        assertEquals(online.progress().totalBytes(), seen.get("array sync_total_bytes"));
        assertTrue(seen.get("array sync_position_bytes") > 0, "moved: " + seen);
        assertTrue(seen.get("new0 writes") > 0, "the added member's writes counted: " + seen);
        assertEquals(3L, seen.get("new0 slot"));
        assertEquals(0L, seen.get("new0 state"), "in sync");
        online.setSyncLimits(SyncLimits.UNLIMITED);
        assertTrue(online.completion().get(60, TimeUnit.SECONDS));
        Thread.sleep(3 * ArrayCounters.TICK_MILLIS);
        Map<String, Long> ended = ArrayCountersTest.dump(file);
        assertEquals(0L, ended.get("array reshaping"), "ended, before finish: " + ended);
        assertEquals(0L, ended.get("array sync_total_bytes"), "no pass once it ended: " + ended);
        byte[] grown = Arrays.copyOf(expected, (int) online.size());
        try (Raid5Array after = online.finish()) {
            assertTrue(Files.exists(file), "the new array publishes in the same file");
            Map<String, Long> now = ArrayCountersTest.dump(file);
            assertEquals(null, now.get("array reshaping"), "the new array's counters: " + now);
            assertEquals(0L, now.get("array writes"), "counted afresh: " + now);
            ArrayOracle.assertArrayHolds(after, grown);
            after.write(0, ByteBuffer.allocate(4096), 0, 4096);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (heard.stream().noneMatch(e -> e.kind() == ArrayEvent.Kind.DIRTY)) {
                assertTrue(System.nanoTime() < deadline, "the new array's events reach the listener: " + heard);
                Thread.sleep(10);
            }
        }
        assertFalse(Files.exists(file), "deleted when the new array closed");
        List<String> reshapeEvents = new ArrayList<>();
        for (ArrayEvent e : heard) {
            if (e.pass() != null && e.pass().action() == SyncAction.RESHAPE) {
                reshapeEvents.add(e.kind() + (e.kind() == ArrayEvent.Kind.PASS_PROGRESS ? " " + e.percent() : ""));
            }
        }
        assertEquals(
                List.of(
                        "PASS_STARTED",
                        "PASS_PROGRESS 20",
                        "PASS_PROGRESS 40",
                        "PASS_PROGRESS 60",
                        "PASS_PROGRESS 80",
                        "PASS_FINISHED"),
                reshapeEvents,
                "the reshape's events, heard by the array's listener: " + heard);
        ArrayEvent finished = heard.stream()
                .filter(e -> e.kind() == ArrayEvent.Kind.PASS_FINISHED)
                .findFirst()
                .orElseThrow();
        assertEquals("done", finished.detail());
        assertTrue(finished.pass().complete(), finished.pass().toString());
    }

    /** {@code n} random writes of 1 to 64 sectors through {@code disk}, applied to {@code image}. */
    private static void writeRandom(MemberDisk disk, byte[] image, SplittableRandom random, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            int len = random.nextInt(1, 65) * 512;
            int offset = random.nextInt((image.length - len) / 512 + 1) * 512;
            byte[] block = new byte[len];
            random.nextBytes(block);
            disk.write(offset, ByteBuffer.wrap(block), 0, len);
            System.arraycopy(block, 0, image, offset, len);
        }
    }

    /** Every member at the new shape, no reshape recorded, parity from scratch consistent, the image read back. */
    private static void assertReshapedAndConsistent(List<MemberDisk> all, byte[] image) throws Exception {
        Superblock any = null;
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), d.name() + " still reshaping");
            assertEquals(all.size(), sb.raidDisks(), d.name());
            assertTrue(sb.isClean(), d.name() + " clean");
            any = sb;
        }
        ArrayOracle.assertParityConsistent(all, any.dataOffset() * 512, any.size() * 512);
        try (Raid5Array array = Raid5Array.assemble(all)) {
            ArrayOracle.assertArrayHolds(array, image);
        }
    }
}
