package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.raidfive.array.ReshapeTestDisks.assertReadsMidReshape;
import static org.raidfive.array.ReshapeTestDisks.snapshot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.raidfive.array.ReshapeTestDisks.InjectedCrash;
import org.raidfive.array.ReshapeTestDisks.InlineKept;
import org.raidfive.array.ReshapeTestDisks.Kept;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.Superblock;

/**
 * {@link OfflineReshape} adding members: after it, the members hold the data where Linux md's
 * raid5_compute_sector puts it in the new geometry ({@link ArrayOracle#assertDataPlacement}, an
 * independent mapping), every stripe's parity XORs to zero, the array assembles at its new size and
 * reads back the reference image with zeros after it. Crashes are injected at every kind of point
 * (after a batch's reads, between the member writes of a stripe, between the superblock writes of a
 * checkpoint and of the end); each is resumed from what the members say, and checked the same way.
 */
@Timeout(120)
class OfflineReshapeTest {
    private static final int CHUNK = 64 * 1024;
    private static final long MEMBER = 6L << 20;

    private record Made(List<MemberDisk> members, byte[] image) {}

    private static Made make(int disks, Raid5Algorithm algorithm, long seed) throws IOException {
        return make(disks, algorithm, ConsistencyPolicy.RESYNC, seed);
    }

    /** A filled array of {@code disks} memory members (kept past the array's close) and its reference image. */
    private static Made make(int disks, Raid5Algorithm algorithm, ConsistencyPolicy policy, long seed)
            throws IOException {
        return make(disks, algorithm, policy, CHUNK, seed);
    }

    private static Made make(int disks, Raid5Algorithm algorithm, ConsistencyPolicy policy, int chunk, long seed)
            throws IOException {
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < disks; i++) {
            members.add(new Kept(MEMBER, "m" + i));
        }
        byte[] image;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(chunk)
                        .algorithm(algorithm)
                        .assumeClean(true)
                        .consistencyPolicy(policy)
                        .build(),
                members)) {
            image = LoadGenerator.fillRandom(array, seed);
        }
        return new Made(members, image);
    }

    private static List<MemberDisk> blanks(int n) {
        List<MemberDisk> added = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            added.add(new Kept(MEMBER, "new" + i));
        }
        return added;
    }

    /** The members in slot order, checked against md's placement, parity from scratch and a read-back. */
    private static void assertReshaped(List<MemberDisk> all, byte[] image, Raid5Algorithm algorithm, long oldOffset)
            throws Exception {
        assertReshaped(all, image, algorithm, CHUNK, oldOffset);
    }

    private static void assertReshaped(
            List<MemberDisk> all, byte[] image, Raid5Algorithm algorithm, int chunk, long oldOffset) throws Exception {
        MemberDisk[] bySlot = new MemberDisk[all.size()];
        Superblock any = null;
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), d.name() + " still reshaping");
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_NEW_OFFSET), d.name() + " still has a new offset");
            assertEquals(all.size(), sb.raidDisks());
            bySlot[sb.role()] = d;
            any = sb;
        }
        long dataOffset = any.dataOffset() * 512;
        assertTrue(dataOffset < oldOffset, "data offset moved down: " + dataOffset + " < " + oldOffset);
        long memberBytes = any.size() * 512;
        long newSize = memberBytes / chunk * chunk * (all.size() - 1);
        byte[] grown = Arrays.copyOf(image, (int) newSize);
        ArrayOracle.assertDataPlacement(Arrays.asList(bySlot), algorithm.mdNumber(), chunk, dataOffset, grown);
        ArrayOracle.assertParityConsistent(all, dataOffset, memberBytes);
        try (Raid5Array array = Raid5Array.assemble(all)) {
            ArrayOracle.assertArrayHolds(array, grown);
        }
    }

    private static long dataOffsetOf(MemberDisk d) throws Exception {
        return SuperblockIo.read(d).dataOffset() * 512;
    }

    @ParameterizedTest(name = "{0} members + {1}, {2}")
    @CsvSource({
        "3, 1, LEFT_SYMMETRIC",
        "3, 1, LEFT_ASYMMETRIC",
        "3, 1, RIGHT_SYMMETRIC",
        "3, 1, RIGHT_ASYMMETRIC",
        "3, 1, PARITY_FIRST",
        "3, 1, PARITY_LAST",
        "4, 1, LEFT_SYMMETRIC",
        "4, 2, RIGHT_ASYMMETRIC",
    })
    void growingByMembersRestripesAsMdAndKeepsEveryByte(int disks, int add, Raid5Algorithm algorithm) throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(disks, algorithm, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(add);
        try (OfflineReshape r = OfflineReshape.grow(m.members, added)) {
            assertEquals(disks, r.oldDisks());
            assertEquals(disks + add, r.newDisks());
            assertTrue(r.run(() -> false, p -> {}));
            assertEquals(r.endPosition(), r.position());
        }
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        long drop = OfflineReshape.minOffsetChange(CHUNK / 512, CHUNK / 512, disks - 1, disks + add - 1) * 512;
        assertEquals(oldOffset - drop, dataOffsetOf(all.get(0)), "mdadm's min_offset_change");
        assertReshaped(all, m.image, algorithm, oldOffset);
    }

    /**
     * mdadm's {@code --grow --raid-devices N --chunk C --layout L}: members added and the chunk and/or
     * layout changed in one reshape, forwards with the data offset moved down by min_offset_change over
     * both chunks; crashed at a batch write and at a checkpoint, resumed, and checked against md's
     * placement in the new geometry, parity from scratch and the image.
     */
    @ParameterizedTest(name = "{0} + {1}, {2}K -> {3}K, {4} -> {5}, crash at {6}")
    @CsvSource({
        "3, 1, 64, 128, LEFT_SYMMETRIC, LEFT_SYMMETRIC, NONE",
        "3, 1, 64, 32, LEFT_SYMMETRIC, RIGHT_ASYMMETRIC, NONE",
        "4, 2, 128, 64, LEFT_ASYMMETRIC, LEFT_ASYMMETRIC, NONE",
        "3, 1, 64, 64, LEFT_SYMMETRIC, PARITY_LAST, NONE",
        "3, 1, 64, 128, LEFT_SYMMETRIC, RIGHT_SYMMETRIC, MEMBER_WRITTEN",
        "3, 2, 128, 64, LEFT_SYMMETRIC, LEFT_SYMMETRIC, CHECKPOINT_MEMBER"
    })
    void growingAndChangingTheChunkOrLayoutAtOnce(
            int disks, int add, int fromK, int toK, Raid5Algorithm from, Raid5Algorithm to, String crashAt)
            throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(disks, from, ConsistencyPolicy.RESYNC, fromK << 10, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(add);
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        try (OfflineReshape r = OfflineReshape.grow(m.members, added, toK << 10, to)) {
            assertEquals(disks + add, r.newDisks());
            assertEquals(toK << 10, r.newChunkBytes());
            assertEquals(to, r.newAlgorithm());
            r.setBatchMemberBytes(4 * (Math.max(fromK, toK) << 10));
            if (!crashAt.equals("NONE")) {
                OfflineReshape.Point point = OfflineReshape.Point.valueOf(crashAt);
                AtomicInteger seen = new AtomicInteger();
                r.hook((p, at) -> {
                    if (p == point && seen.incrementAndGet() == 5) {
                        throw new InjectedCrash(p + " #5 at " + at);
                    }
                });
                assertThrows(InjectedCrash.class, () -> r.run(() -> false, p -> {}));
            } else {
                assertTrue(r.run(() -> false, p -> {}));
            }
        }
        if (!crashAt.equals("NONE")) {
            try (OfflineReshape r = OfflineReshape.resume(all)) {
                assertTrue(r.run(() -> false, p -> {}));
            }
        }
        long drop = OfflineReshape.minOffsetChange(fromK * 2L, toK * 2L, disks - 1, disks + add - 1) * 512;
        assertEquals(oldOffset - drop, dataOffsetOf(all.get(0)), "mdadm's min_offset_change over both chunks");
        assertReshaped(all, m.image, to, toK << 10, oldOffset);
    }

    @TempDir
    Path dir;

    /** File members: their calls move a buffer's position, so each lane of a batch needs its own view. */
    @Test
    void fileMembersGrowToo() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            members.add(FileDisk.createOrExtend(dir.resolve("f" + i + ".img"), MEMBER * 2, false));
        }
        byte[] image;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), members)) {
            image = LoadGenerator.fillRandom(array, seed);
        }
        List<MemberDisk> all = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            all.add(
                    i < 4
                            ? FileDisk.open(dir.resolve("f" + i + ".img"))
                            : FileDisk.createOrExtend(dir.resolve("f4.img"), MEMBER * 2, false));
        }
        long oldOffset = dataOffsetOf(all.get(0));
        try (OfflineReshape r = OfflineReshape.grow(all.subList(0, 4), all.subList(4, 5))) {
            assertTrue(r.run(() -> false, p -> {}));
        }
        assertReshaped(all, image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);
    }

    @Test
    void mdadmsOffsetChangeIsAWholeNumberOfOldAndNewStripes() {
        // 64K chunk, 3 -> 4 members: md-vm's mdadm moved the data offset from 2048 to 1664 sectors.
        assertEquals(384, OfflineReshape.minOffsetChange(128, 128, 2, 3));
        assertEquals(4 * 128, OfflineReshape.minOffsetChange(128, 128, 3, 4));
        assertEquals(128 * 2, OfflineReshape.minOffsetChange(128, 128, 2, 4));
    }

    /** InjectedCrash points: the n-th time the reshape passes {@code point}, it stops as a crash would. */
    @ParameterizedTest(name = "crash at {0} #{1}")
    @CsvSource({
        "BATCH_READ, 1",
        "BATCH_READ, 4",
        "MEMBER_WRITTEN, 1",
        "MEMBER_WRITTEN, 3",
        "MEMBER_WRITTEN, 50",
        "MEMBER_WRITTEN, 201",
        "CHECKPOINT_MEMBER, 1",
        "CHECKPOINT_MEMBER, 2",
        "CHECKPOINT_MEMBER, 6",
        "FINISH_MEMBER, 1",
        "FINISH_MEMBER, 3",
    })
    void aCrashAnywhereIsResumedFromTheMembersAndLosesNothing(OfflineReshape.Point point, int nth) throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed + " crash at " + point + " #" + nth);
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(1);
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        AtomicInteger seen = new AtomicInteger();
        boolean crashed = false;
        try (OfflineReshape r = OfflineReshape.grow(m.members, added)) {
            r.hook((p, at) -> {
                if (p == point && seen.incrementAndGet() == nth) {
                    throw new InjectedCrash(p + " #" + nth + " at " + at);
                }
            });
            r.run(() -> false, p -> {});
        } catch (InjectedCrash expected) {
            crashed = true;
        }
        assertTrue(crashed, "the crash point " + point + " #" + nth + " was reached");
        // The members in a shuffled order: the slots come from the superblocks.
        List<MemberDisk> shuffled = new ArrayList<>(all);
        java.util.Collections.rotate(shuffled, 2);
        Superblock[] before = new Superblock[all.size()];
        for (int i = 0; i < all.size(); i++) {
            before[i] = SuperblockIo.read(all.get(i));
        }
        boolean finishedBeforeCrash =
                Arrays.stream(before).noneMatch(sb -> sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE));
        long readAt = assertReadsMidReshape(shuffled, m.image);
        assertTrue(readAt >= 0 || point == OfflineReshape.Point.FINISH_MEMBER, "read mid-reshape at " + readAt);
        if (!finishedBeforeCrash) {
            try (OfflineReshape r = OfflineReshape.resume(shuffled)) {
                assertTrue(r.run(() -> false, p -> {}));
            }
        }
        assertReshaped(all, m.image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);
    }

    /**
     * Members whose I/O completes inline (memory) take the lanes, stripe by stripe, where the other
     * tests' members take the batch submitted at once: the same crash points, resumed, lose nothing.
     */
    @ParameterizedTest(name = "inline members, crash at {0} #{1}")
    @CsvSource({"MEMBER_WRITTEN, 7", "CHECKPOINT_MEMBER, 2", "BATCH_READ, 2"})
    void onInlineMembersACrashIsResumedAndLosesNothing(OfflineReshape.Point point, int nth) throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed + " inline members, crash at " + point + " #" + nth);
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            members.add(new InlineKept(MEMBER, "m" + i));
        }
        byte[] image;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), members)) {
            image = LoadGenerator.fillRandom(array, seed);
        }
        long oldOffset = dataOffsetOf(members.get(0));
        List<MemberDisk> all = new ArrayList<>(members);
        all.add(new InlineKept(MEMBER, "new0"));
        AtomicInteger seen = new AtomicInteger();
        assertThrows(InjectedCrash.class, () -> {
            try (OfflineReshape r = OfflineReshape.grow(members, all.subList(3, 4))) {
                r.setBatchMemberBytes(CHUNK * 4);
                r.hook((p, at) -> {
                    if (p == point && seen.incrementAndGet() == nth) {
                        throw new InjectedCrash(p + " #" + nth + " at " + at);
                    }
                });
                r.run(() -> false, p -> {});
            }
        });
        try (OfflineReshape r = OfflineReshape.resume(all)) {
            assertTrue(r.run(() -> false, p -> {}));
        }
        assertReshaped(all, image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);
    }

    @Test
    void aStoppedReshapeIsRecordedAndOnlyItsContinuationOpensTheArray() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(4, Raid5Algorithm.LEFT_SYMMETRIC, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(1);
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        AtomicInteger batches = new AtomicInteger();
        long stoppedAt;
        try (OfflineReshape r = OfflineReshape.grow(m.members, added)) {
            assertFalse(r.run(() -> batches.get() == 2, p -> batches.incrementAndGet()));
            stoppedAt = r.position();
        }
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE));
            assertEquals(stoppedAt, sb.reshapePosition(), d.name() + "'s recorded position");
            assertEquals(1, sb.deltaDisks());
            assertEquals(5, sb.raidDisks());
        }
        assertTrue(stoppedAt > 0);
        ArrayConfigException refused = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(all));
        assertTrue(refused.getMessage().contains("reshape"), refused.getMessage());
        assertEquals(stoppedAt, assertReadsMidReshape(all, m.image));
        try (OfflineReshape r = OfflineReshape.resume(all)) {
            assertEquals(stoppedAt, r.position());
            assertTrue(r.run(() -> false, p -> {}));
        }
        assertReshaped(all, m.image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);
    }

    /** A clock that moves only when the reshape sleeps: the pacing is checked without timing anything. */
    private static final class FakeClock implements OfflineReshape.Clock {
        long now;
        int sleeps;

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void sleep(long nanos) {
            assertTrue(nanos > 0 && nanos <= 100_000_000L, "slept " + nanos + " ns in one slice");
            now += nanos;
            sleeps++;
        }
    }

    /**
     * md's speed_limit_max paces the reshape: with 1 MiB/s per member, moving the members' data takes
     * (on a clock that moves only while the reshape sleeps) what the limit says, never less, within one
     * sleep slice; the batches shrink to a quarter second's worth, and a stop is heard between slices.
     */
    @Test
    void theSpeedLimitPacesTheReshape() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(1);
        long limit = 1L << 20;
        FakeClock clock = new FakeClock();
        List<long[]> seen = new ArrayList<>();
        try (OfflineReshape r = OfflineReshape.grow(m.members, added)) {
            r.clock(clock);
            r.setSyncLimits(new SyncLimits(limit, limit));
            int newData = r.newDisks() - 1;
            assertTrue(r.run(() -> false, p -> seen.add(new long[] {clock.now, p / newData * 512})));
            long moved = r.endPosition() / newData * 512;
            long due = (long) (moved * 1e9 / limit);
            assertTrue(clock.now >= due, "took " + clock.now + " ns for " + moved + " bytes per member, due " + due);
            assertTrue(clock.now < due + 100_000_000L, "took " + clock.now + " ns, due " + due);
            for (int i = 1; i < seen.size(); i++) {
                long batch = seen.get(i)[1] - seen.get(i - 1)[1];
                assertTrue(batch <= limit / 4, "a batch moved " + batch + " bytes per member");
                assertTrue(
                        seen.get(i - 1)[1] * 1e9 / limit <= seen.get(i)[0] + 1,
                        "batch " + i + " started before the limit allowed it");
            }
        }
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        assertReshaped(all, m.image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);

        Made other = make(3, Raid5Algorithm.LEFT_SYMMETRIC, seed + 1);
        FakeClock slow = new FakeClock();
        try (OfflineReshape r = OfflineReshape.grow(other.members, blanks(1))) {
            r.clock(slow);
            r.setSyncLimits(new SyncLimits(1024, 1024)); // a batch of one stripe is due 64 s later
            assertFalse(r.run(() -> slow.sleeps == 3, p -> {}));
            assertEquals(3, slow.sleeps, "the stop was heard between sleep slices");
            assertEquals(r.position(), SuperblockIo.read(other.members.get(0)).reshapePosition(), "checkpointed");
        }
    }

    /**
     * md's speed_limit_min: a batch during which a client read holds the reshape to the minimum (1
     * MiB/s per member here, the maximum unlimited), and the first batch without one runs at the
     * maximum again. On a clock that moves only while the reshape sleeps, the run takes what the
     * busy batches are due at the minimum, within one sleep slice, and nothing after the reads
     * stopped; every read returns the reference image's bytes.
     */
    @Test
    void clientsIoHoldsTheReshapeToItsMinimumSpeed() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(1);
        long min = 1L << 20;
        FakeClock clock = new FakeClock();
        long[] busyMoved = new long[1];
        long[] last = new long[1];
        long[] quietSince = {-1};
        int[] batches = new int[1];
        try (OfflineReshape r = OfflineReshape.grow(m.members, added)) {
            r.clock(clock);
            r.setBatchMemberBytes(256 << 10);
            r.setSyncLimits(new SyncLimits(min, Long.MAX_VALUE));
            int newData = r.newDisks() - 1;
            ByteBuffer got = ByteBuffer.allocate(4096);
            assertTrue(r.run(() -> false, p -> {
                long at = p / newData * 512;
                if (++batches[0] <= 4) { // a client reads during the first four batches
                    busyMoved[0] += at - last[0];
                    try {
                        long offset = (batches[0] * 7919L * 4096) % (m.image.length - 4096);
                        r.read(offset, got, 0, 4096);
                        assertArrayEquals(Arrays.copyOfRange(m.image, (int) offset, (int) offset + 4096), got.array());
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                } else if (quietSince[0] < 0) {
                    quietSince[0] = clock.now;
                }
                last[0] = at;
            }));
            assertTrue(batches[0] > 5, batches[0] + " batches");
        }
        long due = (long) (busyMoved[0] * 1e9 / min);
        assertTrue(clock.now >= due, "took " + clock.now + " ns for " + busyMoved[0] + " busy bytes, due " + due);
        assertTrue(clock.now < due + 100_000_000L, "took " + clock.now + " ns, due " + due);
        assertEquals(quietSince[0], clock.now, "the reshape slept after the reads stopped");
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        assertReshaped(all, m.image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);
    }

    /**
     * md's degraded reshape: a member failing mid-reshape (a read of old data, a write of the new
     * geometry, or a write to an added member) is recorded faulty on the others and the reshape goes on
     * without it, rebuilding its old chunks from their stripes. The array then assembles degraded and
     * reads the reference image; a spare rebuilt into the slot makes it whole, checked as every reshape
     * is (md's placement, parity from scratch, read-back). On members that complete inline the batch
     * streams stripe by stripe, and a write failing mid-batch has the batch read again, degraded.
     */
    @ParameterizedTest(name = "{0}, inline members {1}")
    @CsvSource({
        "old member read, false",
        "old member write, false",
        "added member write, false",
        "old member superblock write, false",
        "old member read, true",
        "old member write, true",
        "added member write, true"
    })
    void aMemberFailingMidReshapeIsLeftOutAndTheReshapeGoesOnDegraded(String what, boolean inline) throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(1);
        List<MemberDisk> given = new ArrayList<>(m.members);
        List<MemberDisk> giveAdded = new ArrayList<>(added);
        FaultyDisk faulty;
        long middle = oldOffset + (2L << 20);
        if (what.startsWith("added")) {
            faulty = new FaultyDisk(added.get(0)).failWrites(middle - (64L << 10), middle);
            giveAdded.set(0, faulty);
        } else {
            faulty = new FaultyDisk(m.members.get(1));
            if (what.endsWith("read")) {
                faulty.failReads(middle, middle + 4096);
            } else if (!what.contains("superblock")) {
                faulty.failWrites(middle - (512L << 10), middle);
            }
            given.set(1, faulty);
        }
        if (inline) { // members that complete inline stream a batch stripe by stripe on the lanes
            given.replaceAll(ReshapeTestDisks.Inline::new);
            giveAdded.replaceAll(ReshapeTestDisks.Inline::new);
        }
        try (OfflineReshape r = OfflineReshape.grow(given, giveAdded)) {
            if (what.contains("superblock")) {
                faulty.failWrites(4096, 8192); // from the first checkpoint on: md fails the member
            }
            assertTrue(r.run(() -> false, p -> {}));
            assertEquals(faulty.name(), r.missingMember());
            assertTrue(faulty.injectedFaults() > 0);
        }
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        MemberDisk lost = faulty.inner();
        List<MemberDisk> survivors = new ArrayList<>(all);
        survivors.remove(lost);
        assertDegradedThenRebuilt(survivors, lost, m.image, oldOffset);
    }

    /**
     * On members through the page cache a flush is started after each batch and not waited for.
     * Linux reports a write-back error to one fsync only: when that flush takes it, the member must
     * still fail (at the next checkpoint), or the position would be recorded over data never written.
     */
    @Test
    void aWriteBackErrorAnEarlyFlushTookFailsTheMember() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(1);
        List<MemberDisk> given = new ArrayList<>();
        for (MemberDisk d : m.members) {
            given.add(new ReshapeTestDisks.PageCacheOnceFailing(d, Integer.MAX_VALUE));
        }
        // the 1st flush is the start's superblock's, the 2nd the one started after the first batch
        ReshapeTestDisks.PageCacheOnceFailing failing = new ReshapeTestDisks.PageCacheOnceFailing(m.members.get(1), 2);
        given.set(1, failing);
        List<MemberDisk> giveAdded = new ArrayList<>();
        giveAdded.add(new ReshapeTestDisks.PageCacheOnceFailing(added.get(0), Integer.MAX_VALUE));
        try (OfflineReshape r = OfflineReshape.grow(given, giveAdded)) {
            r.setBatchMemberBytes(CHUNK * 2);
            assertTrue(r.run(() -> false, p -> {}));
            assertTrue(failing.flushes() >= 2, "the failing flush was made: " + failing.flushes());
            assertEquals(failing.name(), r.missingMember(), "the member whose write-back failed is left out");
        }
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        MemberDisk lost = m.members.get(1);
        List<MemberDisk> survivors = new ArrayList<>(all);
        survivors.remove(lost);
        assertDegradedThenRebuilt(survivors, lost, m.image, oldOffset);
    }

    /** The survivors record {@code lost} faulty and hold the image degraded; a spare in its place makes the array whole. */
    private static void assertDegradedThenRebuilt(
            List<MemberDisk> survivors, MemberDisk lost, byte[] image, long oldOffset) throws Exception {
        int lostDevice = SuperblockIo.read(lost).devNumber();
        for (MemberDisk d : survivors) {
            Superblock sb = SuperblockIo.read(d);
            assertEquals(Superblock.ROLE_FAULTY, sb.devRole(lostDevice), d.name() + " records the failed member");
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE));
        }
        int disks = survivors.size() + 1;
        long newSize = SuperblockIo.read(survivors.get(0)).size() * 512 / CHUNK * CHUNK * (disks - 1);
        byte[] grown = Arrays.copyOf(image, (int) newSize);
        MemberDisk spare = new Kept(MEMBER, "spare");
        try (Raid5Array array = Raid5Array.assemble(survivors)) {
            assertTrue(array.status().degraded(), "assembled degraded");
            ArrayOracle.assertArrayHolds(array, grown);
            array.addSpare(spare);
            assertEquals(
                    SyncOutcome.Result.DONE,
                    array.awaitSync(java.time.Duration.ofSeconds(60)).result());
        }
        List<MemberDisk> whole = new ArrayList<>(survivors);
        whole.add(0, spare);
        assertReshaped(whole, image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);
    }

    /**
     * A reshape stopped after a member failed is continued without it (the others record it faulty);
     * given back, the failed member is refused (the others no longer list it in its slot).
     */
    @Test
    void aDegradedReshapeIsContinuedWithoutTheFailedMember() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(4, Raid5Algorithm.RIGHT_ASYMMETRIC, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> added = blanks(1);
        List<MemberDisk> given = new ArrayList<>(m.members);
        FaultyDisk faulty = new FaultyDisk(m.members.get(2)).failReads(oldOffset, oldOffset + 4096);
        given.set(2, faulty);
        AtomicInteger batches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.grow(given, added)) {
            assertFalse(r.run(() -> batches.get() == 1, p -> batches.incrementAndGet()));
            assertEquals(faulty.name(), r.missingMember());
        }
        List<MemberDisk> all = new ArrayList<>(m.members);
        all.addAll(added);
        byte[][] beforeRefusal = snapshot(all);
        ArrayConfigException refused = assertThrows(ArrayConfigException.class, () -> OfflineReshape.resume(all));
        assertTrue(refused.getMessage().contains(m.members.get(2).name()), refused.getMessage());
        assertTrue(
                refused.getMessage().contains("leave it out"),
                "mid-reshape the advice is md's: " + refused.getMessage());
        for (int i = 0; i < all.size(); i++) {
            assertArrayEquals(
                    beforeRefusal[i], snapshot(List.of(all.get(i)))[0], "refused, yet member " + i + " changed");
        }
        List<MemberDisk> survivors = new ArrayList<>(all);
        survivors.remove(m.members.get(2));
        assertTrue(assertReadsMidReshape(survivors, m.image) > 0, "read degraded mid-reshape");
        try (OfflineReshape r = OfflineReshape.resume(survivors)) {
            assertEquals("slot 2", r.missingMember());
            assertTrue(r.run(() -> false, p -> {}));
        }
        // assertReshaped's image check runs on the algorithm given: RIGHT_ASYMMETRIC here
        int lostDevice = SuperblockIo.read(m.members.get(2)).devNumber();
        for (MemberDisk d : survivors) {
            assertEquals(Superblock.ROLE_FAULTY, SuperblockIo.read(d).devRole(lostDevice));
        }
        int disks = all.size();
        long newSize = SuperblockIo.read(survivors.get(0)).size() * 512 / CHUNK * CHUNK * (disks - 1);
        byte[] grown = Arrays.copyOf(m.image, (int) newSize);
        MemberDisk spare = new Kept(MEMBER, "spare");
        try (Raid5Array array = Raid5Array.assemble(survivors)) {
            ArrayOracle.assertArrayHolds(array, grown);
            array.addSpare(spare);
            assertEquals(
                    SyncOutcome.Result.DONE,
                    array.awaitSync(java.time.Duration.ofSeconds(60)).result());
        }
        List<MemberDisk> whole = new ArrayList<>(survivors);
        whole.add(0, spare);
        assertReshaped(whole, m.image, Raid5Algorithm.RIGHT_ASYMMETRIC, oldOffset);
    }

    /** A second member failing stops the reshape (RAID-5 cannot lose two), its position recorded. */
    @Test
    void aSecondFailureStopsTheReshape() throws Exception {
        Made m = make(4, Raid5Algorithm.LEFT_SYMMETRIC, 11);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> given = new ArrayList<>(m.members);
        long middle = oldOffset + (2L << 20);
        given.set(0, new FaultyDisk(m.members.get(0)).failReads(middle, middle + 4096));
        given.set(3, new FaultyDisk(m.members.get(3)).failReads(middle, middle + 4096));
        try (OfflineReshape r = OfflineReshape.grow(given, blanks(1))) {
            IOException stopped = assertThrows(IOException.class, () -> r.run(() -> false, p -> {}));
            assertTrue(stopped.getMessage().contains("cannot lose two members"), stopped.getMessage());
        }
    }

    /**
     * md's chunk and layout changes (same members): the data restriped into the new chunk and layout
     * exactly where raid5_compute_sector puts it, parity from scratch, read-back; the data offset moves
     * down to mdadm's choose_offset, and the reshape records only whole rows of the larger chunk.
     */
    @ParameterizedTest(name = "{0} members, {1}K {2} -> {3}K {4}")
    @CsvSource({
        "3, 64, LEFT_SYMMETRIC, 128, LEFT_SYMMETRIC",
        "3, 64, LEFT_SYMMETRIC, 32, LEFT_SYMMETRIC",
        "4, 64, LEFT_SYMMETRIC, 64, RIGHT_ASYMMETRIC",
        "4, 128, PARITY_FIRST, 64, LEFT_ASYMMETRIC",
        "3, 64, RIGHT_SYMMETRIC, 512, PARITY_LAST",
    })
    void changingChunkOrLayoutRestripesAsMd(int disks, int fromK, Raid5Algorithm from, int toK, Raid5Algorithm to)
            throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(disks, from, ConsistencyPolicy.RESYNC, fromK * 1024, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<Long> positions = new ArrayList<>();
        try (OfflineReshape r = OfflineReshape.change(m.members, toK * 1024, to)) {
            assertEquals(disks, r.newDisks());
            r.hook((p, at) -> {
                if (p == OfflineReshape.Point.CHECKPOINT_MEMBER) {
                    positions.add(at);
                }
            });
            assertTrue(r.run(() -> false, p -> {}));
        }
        long row = (long) Math.max(fromK, toK) * 2 * (disks - 1);
        for (long p : positions) {
            assertEquals(0, p % row, "recorded position " + p + " is on a row of the larger chunk (" + row + ")");
        }
        long before = OfflineReshape.mdadmSpaceBefore(SuperblockIo.read(m.members.get(0)), 0);
        assertTrue(dataOffsetOf(m.members.get(0)) < oldOffset);
        assertReshaped(m.members, m.image, to, toK * 1024, oldOffset);
        assertTrue(before >= 0);
    }

    /** mdadm's choose_offset, worked by hand: the middle of the room, aligned as far as it fits. */
    @Test
    void mdadmsChosenOffsetIsTheAlignedMiddle() {
        assertEquals(1024, OfflineReshape.chooseOffset(72, 2048, 72, 2048 - 128));
        assertEquals(1024, OfflineReshape.chooseOffset(72, 2048, 72, 1024));
        assertEquals(1536, OfflineReshape.chooseOffset(1100, 2048, 1100, 1920));
        assertEquals(262144, OfflineReshape.chooseOffset(262144 - 8000, 262144 + 8000, 262144 - 8000, 262144));
    }

    /** InjectedCrash points of a chunk change, growing and shrinking the chunk (rows of two new stripes). */
    @ParameterizedTest(name = "{0}K -> {1}K, crash at {2} #{3}")
    @CsvSource({
        "64, 128, BATCH_READ, 2",
        "64, 128, MEMBER_WRITTEN, 7",
        "64, 128, CHECKPOINT_MEMBER, 2",
        "128, 64, BATCH_READ, 1",
        "128, 64, MEMBER_WRITTEN, 41",
        "128, 64, CHECKPOINT_MEMBER, 4",
        "128, 64, FINISH_MEMBER, 2",
    })
    void aChunkChangeCrashedAnywhereIsResumed(int fromK, int toK, OfflineReshape.Point point, int nth)
            throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed + " crash at " + point + " #" + nth);
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, ConsistencyPolicy.RESYNC, fromK * 1024, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        AtomicInteger seen = new AtomicInteger();
        assertThrows(InjectedCrash.class, () -> {
            try (OfflineReshape r = OfflineReshape.change(m.members, toK * 1024, Raid5Algorithm.LEFT_SYMMETRIC)) {
                r.hook((p, at) -> {
                    if (p == point && seen.incrementAndGet() == nth) {
                        throw new InjectedCrash(p + " #" + nth + " at " + at);
                    }
                });
                r.run(() -> false, p -> {});
            }
        });
        List<MemberDisk> shuffled = new ArrayList<>(m.members);
        java.util.Collections.rotate(shuffled, 1);
        boolean done = m.members.stream().allMatch(d -> {
            try {
                return !SuperblockIo.read(d).hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertReadsMidReshape(shuffled, m.image);
        if (!done || point == OfflineReshape.Point.FINISH_MEMBER) {
            try (OfflineReshape r = OfflineReshape.resume(shuffled)) {
                assertTrue(r.run(() -> false, p -> {}));
            } catch (ArrayConfigException notReshaping) {
                assertTrue(done, notReshaping.getMessage());
            }
        }
        assertReshaped(m.members, m.image, Raid5Algorithm.LEFT_SYMMETRIC, toK * 1024, oldOffset);
    }

    /** A member failing during a chunk change: the rest is rebuilt from old stripes of the other chunk size. */
    @Test
    void aChunkChangeGoesOnDegraded() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(4, Raid5Algorithm.LEFT_ASYMMETRIC, ConsistencyPolicy.RESYNC, 128 * 1024, seed);
        long oldOffset = dataOffsetOf(m.members.get(0));
        List<MemberDisk> given = new ArrayList<>(m.members);
        long middle = oldOffset + (1L << 20);
        FaultyDisk faulty = new FaultyDisk(m.members.get(2)).failReads(middle, middle + 4096);
        given.set(2, faulty);
        try (OfflineReshape r = OfflineReshape.change(given, 32 * 1024, Raid5Algorithm.RIGHT_SYMMETRIC)) {
            assertTrue(r.run(() -> false, p -> {}));
            assertEquals(faulty.name(), r.missingMember());
        }
        List<MemberDisk> survivors = new ArrayList<>(m.members);
        survivors.remove(2);
        long newSize = SuperblockIo.read(survivors.get(0)).size() * 512 / (32 * 1024) * (32 * 1024) * 3;
        byte[] grown = Arrays.copyOf(m.image, (int) newSize);
        MemberDisk spare = new Kept(MEMBER, "spare");
        try (Raid5Array array = Raid5Array.assemble(survivors)) {
            ArrayOracle.assertArrayHolds(array, grown);
            array.addSpare(spare);
            assertEquals(
                    SyncOutcome.Result.DONE,
                    array.awaitSync(java.time.Duration.ofSeconds(60)).result());
        }
        List<MemberDisk> whole = new ArrayList<>(survivors);
        whole.add(0, spare);
        assertReshaped(whole, m.image, Raid5Algorithm.RIGHT_SYMMETRIC, 32 * 1024, oldOffset);
    }

    /** Refusals of a chunk or layout change, nothing written: nothing to change, a chunk not dividing the size, no room. */
    @Test
    void chunkChangeRefusalsWriteNothing() throws Exception {
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, 5);
        byte[][] before = new byte[3][];
        for (int i = 0; i < 3; i++) {
            before[i] = head(m.members.get(i));
        }
        ArrayConfigException same = assertThrows(
                ArrayConfigException.class,
                () -> OfflineReshape.change(m.members, CHUNK, Raid5Algorithm.LEFT_SYMMETRIC));
        assertTrue(same.getMessage().contains("nothing to change"), same.getMessage());
        ArrayConfigException huge = assertThrows(
                ArrayConfigException.class,
                () -> OfflineReshape.change(m.members, 16 << 20, Raid5Algorithm.LEFT_SYMMETRIC));
        assertTrue(huge.getMessage().contains("does not evenly divide"), huge.getMessage());
        ArrayConfigException bad = assertThrows(
                ArrayConfigException.class,
                () -> OfflineReshape.change(m.members, 96 * 1024, Raid5Algorithm.LEFT_SYMMETRIC));
        assertTrue(bad.getMessage().contains("power of two"), bad.getMessage());
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(before[i], head(m.members.get(i)), "member " + i + " unchanged");
        }
    }

    private static byte[] head(MemberDisk d) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(1 << 20);
        d.read(0, b, 0, b.capacity());
        return b.array();
    }

    @Test
    void refusalsWriteNothing() throws Exception {
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, 7);
        byte[][] before = snapshot(m.members);
        // A member missing.
        ArrayConfigException e =
                assertThrows(ArrayConfigException.class, () -> OfflineReshape.grow(m.members.subList(0, 2), blanks(1)));
        assertTrue(e.getMessage().contains("every member"), e.getMessage());
        // A disk to add that is too small.
        e = assertThrows(
                ArrayConfigException.class,
                () -> OfflineReshape.grow(m.members, List.of(new MemoryDisk(MEMBER / 2, "small"))));
        assertTrue(e.getMessage().contains("small"), e.getMessage());
        // A copy of a member in place of another.
        MemberDisk copy = new Kept(MEMBER, "copy");
        byte[] first = snapshot(List.of(m.members.get(0)))[0];
        copy.write(0, ByteBuffer.wrap(first), 0, first.length);
        e = assertThrows(
                ArrayConfigException.class,
                () -> OfflineReshape.grow(List.of(m.members.get(0), m.members.get(1), copy), blanks(1)));
        assertTrue(e.getMessage().contains("both say they are slot 0"), e.getMessage());
        // Nothing to continue.
        e = assertThrows(ArrayConfigException.class, () -> OfflineReshape.resume(m.members));
        assertTrue(e.getMessage().contains("not reshaping"), e.getMessage());
        for (int i = 0; i < before.length; i++) {
            assertArrayEquals(before[i], snapshot(List.of(m.members.get(i)))[0], "member " + i + " changed");
        }
        // A partial parity log: md refuses to reshape with one.
        List<MemberDisk> withPpl = make(3, Raid5Algorithm.LEFT_SYMMETRIC, ConsistencyPolicy.PPL, 8).members;
        byte[][] b = snapshot(withPpl);
        e = assertThrows(ArrayConfigException.class, () -> OfflineReshape.grow(withPpl, blanks(1)));
        assertTrue(e.getMessage().contains("partial parity log"), e.getMessage());
        for (int i = 0; i < b.length; i++) {
            assertArrayEquals(b[i], snapshot(List.of(withPpl.get(i)))[0], "PPL member " + i + " changed");
        }
    }

    /**
     * A write-intent bitmap is kept through the reshape as md keeps it: on the new member too, its
     * events following the superblock's, so the next assembly does not take it for stale.
     */
    @Test
    void aBitmapIsKeptAndNotTakenForStale() throws Exception {
        long seed = System.nanoTime();
        System.out.println("OfflineReshapeTest seed " + seed);
        Made m = make(3, Raid5Algorithm.LEFT_SYMMETRIC, ConsistencyPolicy.BITMAP, seed);
        List<MemberDisk> members = m.members;
        byte[] image = m.image;
        long oldOffset = dataOffsetOf(members.get(0));
        List<MemberDisk> added = blanks(1);
        try (OfflineReshape r = OfflineReshape.grow(members, added)) {
            AtomicInteger batches = new AtomicInteger();
            assertFalse(r.run(() -> batches.get() == 2, p -> batches.incrementAndGet()));
        }
        List<MemberDisk> all = new ArrayList<>(members);
        all.addAll(added);
        try (OfflineReshape r = OfflineReshape.resume(all)) {
            assertTrue(r.run(() -> false, p -> {}));
        }
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertTrue(sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET), d.name());
            assertEquals(sb.events(), SuperblockIo.readBitmap(d, sb).events(), d.name() + "'s bitmap events");
        }
        assertReshaped(all, image, Raid5Algorithm.LEFT_SYMMETRIC, oldOffset);
        try (Raid5Array array = Raid5Array.assemble(all)) {
            assertEquals(ConsistencyPolicy.BITMAP, array.consistencyPolicy());
            assertFalse(array.status().resyncPending(), "the bitmap is not stale: no full resync");
        }
    }
}
