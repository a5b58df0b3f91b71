package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.raidfive.array.ReshapeTestDisks.assertReadsMidReshape;
import static org.raidfive.array.ReshapeTestDisks.snapshot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.raidfive.array.ReshapeTestDisks.InjectedCrash;
import org.raidfive.array.ReshapeTestDisks.Kept;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.Superblock;

/**
 * md's backward reshapes through {@link OfflineReshape}: removing members (shrink, after the array
 * size was cut) and a chunk or layout change where the free room is after the data. The data offset
 * moves up, the reshape runs from the array's end down to 0, and at the end the members hold the data
 * where raid5_compute_sector puts it in the new geometry ({@link ArrayOracle#assertDataPlacement}),
 * every stripe's parity XORs to zero, the array reads back the reference image, and a removed member
 * is a spare in every superblock. Crashes are injected at every kind of point and resumed from the
 * members in another order.
 */
@Timeout(120)
class BackwardReshapeTest {
    private static final int CHUNK = 64 * 1024;
    /** Members with room after their data: 1 MiB before (the default offset), 4 MiB of data, 3 MiB after. */
    private static final long MEMBER = 8L << 20;

    private static final long DATA = 4L << 20;

    private record Made(List<MemberDisk> members, byte[] image, long oldOffset) {}

    private static Made make(int disks, int chunk, Raid5Algorithm algorithm, long seed) throws Exception {
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < disks; i++) {
            members.add(new Kept(MEMBER, "m" + i));
        }
        byte[] image;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(chunk)
                        .algorithm(algorithm)
                        .memberDataBytes(DATA)
                        .assumeClean(true)
                        .build(),
                members)) {
            image = LoadGenerator.fillRandom(array, seed);
        }
        return new Made(members, image, SuperblockIo.read(members.get(0)).dataOffset() * 512);
    }

    private static long seed(String what) {
        long seed = System.nanoTime();
        System.out.println("BackwardReshapeTest seed " + seed + " " + what);
        return seed;
    }

    /** The array's new size: the first {@code disks - 1} member chunks of each row, as md sizes it. */
    private static long newSize(Made m, int disks, int chunk) {
        return DATA / chunk * chunk * (disks - 1);
    }

    /**
     * The reshape is over on every member; the ones in slots below {@code disks} hold {@code image}
     * (cut or padded to the new size) in md's placement for {@code algorithm} and {@code chunk}, their
     * parity XORs to zero, and they assemble and read it back; the others are spares (or faulty).
     */
    private static void assertReshaped(Made m, int disks, int chunk, Raid5Algorithm algorithm) throws Exception {
        assertReshaped(m.members, m.image, m.oldOffset, disks, chunk, algorithm);
    }

    private static void assertReshaped(
            List<MemberDisk> all, byte[] image, long oldOffset, int disks, int chunk, Raid5Algorithm algorithm)
            throws Exception {
        MemberDisk[] bySlot = new MemberDisk[disks];
        long dataOffset = -1;
        long memberBytes = -1;
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), d.name() + " still reshaping");
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_NEW_OFFSET), d.name() + " still has a new offset");
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS), d.name() + " still says backwards");
            assertEquals(disks, sb.raidDisks(), d.name());
            assertEquals(chunk / 512, sb.chunkSectors(), d.name());
            assertEquals(algorithm.mdNumber(), sb.layout(), d.name());
            if (sb.role() < disks) {
                bySlot[sb.role()] = d;
                dataOffset = sb.dataOffset() * 512;
                memberBytes = sb.size() * 512;
            } else {
                assertTrue(
                        sb.role() == Superblock.ROLE_SPARE || sb.role() == Superblock.ROLE_FAULTY,
                        d.name() + " left the array as a spare, role " + sb.role());
            }
        }
        for (int s = 0; s < disks; s++) {
            assertTrue(bySlot[s] != null, "slot " + s + " is filled");
        }
        assertTrue(dataOffset > oldOffset, "the data offset moved up: " + dataOffset + " > " + oldOffset);
        long size = memberBytes / chunk * chunk * (disks - 1);
        byte[] expected = Arrays.copyOf(image, (int) size);
        List<MemberDisk> slots = Arrays.asList(bySlot);
        ArrayOracle.assertDataPlacement(slots, algorithm.mdNumber(), chunk, dataOffset, expected);
        ArrayOracle.assertParityConsistent(slots, dataOffset, memberBytes);
        try (Raid5Array array = Raid5Array.assemble(slots)) {
            assertFalse(array.status().degraded());
            ArrayOracle.assertArrayHolds(array, expected);
        }
    }

    private static boolean reshaping(List<MemberDisk> members) throws Exception {
        for (MemberDisk d : members) {
            if (SuperblockIo.read(d).hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE)) {
                return true;
            }
        }
        return false;
    }

    @ParameterizedTest(name = "{0} -> {1} members, {2}")
    @CsvSource({
        "4, 3, LEFT_SYMMETRIC",
        "4, 3, RIGHT_ASYMMETRIC",
        "4, 3, PARITY_FIRST",
        "5, 3, LEFT_ASYMMETRIC",
        "5, 4, PARITY_LAST",
        "6, 4, RIGHT_SYMMETRIC",
    })
    void removingMembersRestripesAsMdAndLeavesSpares(int disks, int to, Raid5Algorithm algorithm) throws Exception {
        Made m = make(disks, CHUNK, algorithm, seed(disks + " -> " + to));
        long size = newSize(m, to, CHUNK);
        try (OfflineReshape r = OfflineReshape.shrink(m.members, to, size)) {
            assertTrue(r.backwards());
            assertEquals(disks, r.oldDisks());
            assertEquals(to, r.newDisks());
            assertEquals(size / 512, r.position(), "md starts a shrink at the new array's end");
            for (MemberDisk d : m.members) {
                Superblock sb = SuperblockIo.read(d);
                assertEquals(to - disks, sb.deltaDisks(), d.name());
                assertEquals(to, sb.raidDisks(), d.name());
                assertFalse(
                        sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS),
                        "md's super_1_sync records the bit only when the member count stays: " + d.name());
                assertEquals(
                        OfflineReshape.minOffsetChange(CHUNK / 512, CHUNK / 512, disks - 1, to - 1),
                        sb.newOffset(),
                        "mdadm's min_offset_change, up");
            }
            List<Long> seen = new ArrayList<>();
            assertTrue(r.run(() -> false, seen::add));
            assertEquals(0, r.position());
            for (int i = 1; i < seen.size(); i++) {
                assertTrue(seen.get(i) < seen.get(i - 1), "the position only goes down: " + seen);
            }
            assertEquals(r.sectorsTotal(), r.sectorsDone(r.position()));
        }
        assertReshaped(m, to, CHUNK, algorithm);
        try (Raid5Array array = Raid5Array.assemble(m.members)) {
            assertEquals(disks - to, array.status().spareMembers(), "the removed members are spares");
        }
    }

    /** md's chunk or layout change with the room after the data: backwards, the offset up by choose_offset. */
    @ParameterizedTest(name = "{0} members, {1}K {2} -> {3}K {4}")
    @CsvSource({
        "3, 64, LEFT_SYMMETRIC, 128, LEFT_SYMMETRIC",
        "3, 128, LEFT_SYMMETRIC, 64, LEFT_SYMMETRIC",
        "4, 64, LEFT_SYMMETRIC, 64, RIGHT_ASYMMETRIC",
        "4, 256, PARITY_FIRST, 32, LEFT_ASYMMETRIC",
    })
    void aChunkOrLayoutChangeWithRoomAfterRunsBackwards(
            int disks, int fromK, Raid5Algorithm from, int toK, Raid5Algorithm to) throws Exception {
        Made m = make(disks, fromK * 1024, from, seed(fromK + "K -> " + toK + "K"));
        Superblock first = SuperblockIo.read(m.members.get(0));
        long after = MEMBER / 512 - first.dataOffset() - first.size();
        long min = OfflineReshape.minOffsetChange(fromK * 2L, toK * 2L, disks - 1, disks - 1);
        long off = first.dataOffset();
        long chosen = OfflineReshape.chooseOffset(off, off + after, off + min, off + after);
        List<Long> positions = new ArrayList<>();
        try (OfflineReshape r = OfflineReshape.change(m.members, toK * 1024, to)) {
            assertTrue(r.backwards());
            for (MemberDisk d : m.members) {
                Superblock sb = SuperblockIo.read(d);
                assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS), d.name());
                assertEquals(0, sb.deltaDisks());
                assertEquals(chosen - off, sb.newOffset(), "mdadm's choose_offset, up");
                assertEquals(sb.size(), sb.reshapePosition() / (disks - 1), "starts at the array's end");
            }
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
        assertEquals(chosen * 512, SuperblockIo.read(m.members.get(0)).dataOffset() * 512);
        assertReshaped(m, disks, toK * 1024, to);
    }

    /**
     * A crash anywhere in a shrink or a backward chunk change loses nothing: the next run continues
     * from what the members say (in another order) and the end is checked as every reshape is.
     */
    @ParameterizedTest(name = "{0}, crash at {1} #{2}")
    @CsvSource({
        "shrink, BATCH_READ, 1",
        "shrink, BATCH_READ, 3",
        "shrink, MEMBER_WRITTEN, 1",
        "shrink, MEMBER_WRITTEN, 3",
        "shrink, MEMBER_WRITTEN, 60",
        "shrink, MEMBER_WRITTEN, 150",
        "shrink, CHECKPOINT_MEMBER, 1",
        "shrink, CHECKPOINT_MEMBER, 3",
        "shrink, CHECKPOINT_MEMBER, 9",
        "shrink, FINISH_MEMBER, 1",
        "shrink, FINISH_MEMBER, 3",
        "64K to 128K, BATCH_READ, 2",
        "64K to 128K, MEMBER_WRITTEN, 7",
        "64K to 128K, MEMBER_WRITTEN, 12",
        "64K to 128K, CHECKPOINT_MEMBER, 2",
        "64K to 128K, FINISH_MEMBER, 2",
        "128K to 64K, BATCH_READ, 1",
        "128K to 64K, MEMBER_WRITTEN, 41",
        "128K to 64K, CHECKPOINT_MEMBER, 4",
        "128K to 64K, FINISH_MEMBER, 1",
    })
    void aCrashAnywhereIsResumedFromTheMembersAndLosesNothing(String what, OfflineReshape.Point point, int nth)
            throws Exception {
        boolean shrink = what.equals("shrink");
        int fromK = what.startsWith("128K") ? 128 : 64;
        int toK = shrink ? 64 : 192 - fromK;
        int disks = shrink ? 4 : 3;
        int to = shrink ? 3 : 3;
        Made m = make(
                disks, fromK * 1024, Raid5Algorithm.LEFT_SYMMETRIC, seed(what + " crash at " + point + " #" + nth));
        AtomicInteger seen = new AtomicInteger();
        InjectedCrash crash = assertThrows(InjectedCrash.class, () -> {
            try (OfflineReshape r = shrink
                    ? OfflineReshape.shrink(m.members, to, newSize(m, to, CHUNK))
                    : OfflineReshape.change(m.members, toK * 1024, Raid5Algorithm.LEFT_SYMMETRIC)) {
                r.hook((p, at) -> {
                    if (p == point && seen.incrementAndGet() == nth) {
                        throw new InjectedCrash(p + " #" + nth + " at " + at);
                    }
                });
                r.run(() -> false, p -> {});
            }
        });
        System.out.println("crashed: " + crash.getMessage());
        List<MemberDisk> shuffled = new ArrayList<>(m.members);
        Collections.rotate(shuffled, 2);
        long readAt = assertReadsMidReshape(shuffled, m.image);
        assertTrue(readAt >= 0 || point == OfflineReshape.Point.FINISH_MEMBER, "read mid-reshape at " + readAt);
        if (reshaping(m.members)) {
            try (OfflineReshape r = OfflineReshape.resume(shuffled)) {
                assertTrue(r.backwards() || point == OfflineReshape.Point.FINISH_MEMBER);
                assertTrue(r.run(() -> false, p -> {}));
            }
        } else {
            assertEquals(OfflineReshape.Point.FINISH_MEMBER, point, "only the last steps leave no reshape behind");
        }
        assertReshaped(m, to, toK * 1024, Raid5Algorithm.LEFT_SYMMETRIC);
    }

    /** Stopped and continued several times, the shrink's position goes on down from where it was recorded. */
    @Test
    void aStoppedShrinkIsContinuedWhereItStopped() throws Exception {
        Made m = make(4, CHUNK, Raid5Algorithm.LEFT_SYMMETRIC, seed("stopped shrink"));
        long stoppedAt;
        AtomicInteger batches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.shrink(m.members, 3, newSize(m, 3, CHUNK))) {
            assertFalse(r.run(() -> batches.get() == 2, p -> batches.incrementAndGet()));
            stoppedAt = r.position();
            assertTrue(stoppedAt > 0 && stoppedAt < r.sectorsTotal(), "stopped mid-way at " + stoppedAt);
        }
        for (MemberDisk d : m.members) {
            assertEquals(stoppedAt, SuperblockIo.read(d).reshapePosition(), d.name() + " records the stop");
        }
        ArrayConfigException refused = assertThrows(
                ArrayConfigException.class, () -> Raid5Array.assemble(m.members).close());
        assertTrue(refused.getMessage().contains("reshape"), refused.getMessage());
        while (true) {
            batches.set(0);
            long readAt = assertReadsMidReshape(m.members, m.image);
            assertTrue(readAt > 0 && readAt <= stoppedAt, "read mid-shrink at " + readAt);
            try (OfflineReshape r = OfflineReshape.resume(m.members)) {
                assertTrue(r.position() <= stoppedAt);
                stoppedAt = r.position();
                if (r.run(() -> batches.get() == 3, p -> batches.incrementAndGet())) {
                    break;
                }
                assertTrue(r.position() < stoppedAt, "went down from " + stoppedAt + " to " + r.position());
            }
        }
        assertReshaped(m, 3, CHUNK, Raid5Algorithm.LEFT_SYMMETRIC);
    }

    /**
     * A member failing mid-shrink: the shrink goes on without it, rebuilding its old chunks from their
     * stripes. When it was the member being removed, the smaller array is whole; when it was one that
     * stays, the array is degraded and the removed member, now a spare, is rebuilt into its slot.
     */
    @ParameterizedTest(name = "slot {0} fails")
    @CsvSource({"3", "1"})
    void aMemberFailingMidShrinkIsLeftOut(int failing) throws Exception {
        Made m = make(4, CHUNK, Raid5Algorithm.LEFT_SYMMETRIC, seed("slot " + failing + " fails mid-shrink"));
        List<MemberDisk> given = new ArrayList<>(m.members);
        long middle = m.oldOffset + (2L << 20);
        FaultyDisk faulty = new FaultyDisk(m.members.get(failing)).failReads(middle, middle + (256L << 10));
        given.set(failing, faulty);
        try (OfflineReshape r = OfflineReshape.shrink(given, 3, newSize(m, 3, CHUNK))) {
            assertTrue(r.run(() -> false, p -> {}));
            assertEquals(faulty.name(), r.missingMember());
            assertTrue(faulty.injectedFaults() > 0);
        }
        List<MemberDisk> survivors = new ArrayList<>(m.members);
        MemberDisk lost = survivors.remove(failing);
        int lostDevice = SuperblockIo.read(lost).devNumber();
        for (MemberDisk d : survivors) {
            assertEquals(Superblock.ROLE_FAULTY, SuperblockIo.read(d).devRole(lostDevice), d.name());
        }
        byte[] expected = Arrays.copyOf(m.image, (int) newSize(m, 3, CHUNK));
        if (failing == 3) {
            assertReshaped(survivors, m.image, m.oldOffset, 3, CHUNK, Raid5Algorithm.LEFT_SYMMETRIC);
            return;
        }
        try (Raid5Array array = Raid5Array.assemble(survivors)) {
            assertTrue(array.status().degraded(), "assembled degraded");
            ArrayOracle.assertArrayHolds(array, expected);
            array.startSync();
            assertEquals(
                    SyncOutcome.Result.DONE,
                    array.awaitSync(Duration.ofSeconds(60)).result());
        }
        assertReshaped(survivors, m.image, m.oldOffset, 3, CHUNK, Raid5Algorithm.LEFT_SYMMETRIC);
    }

    /**
     * A shrink stopped with a member that stays recorded faulty: read mid-way without it, both
     * geometries rebuild its chunks from parity; the shrink then finishes degraded.
     */
    @Test
    void aDegradedShrinkStoppedMidWayReadsWithoutTheFailedMember() throws Exception {
        Made m = make(4, CHUNK, Raid5Algorithm.LEFT_ASYMMETRIC, seed("degraded shrink read mid-way"));
        List<MemberDisk> given = new ArrayList<>(m.members);
        long end = m.oldOffset + MEMBER; // fails its first read: the shrink's first batch
        FaultyDisk faulty = new FaultyDisk(m.members.get(1)).failReads(m.oldOffset, end);
        given.set(1, faulty);
        AtomicInteger batches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.shrink(given, 3, newSize(m, 3, CHUNK))) {
            assertFalse(r.run(() -> batches.get() == 2, p -> batches.incrementAndGet()));
            assertEquals(faulty.name(), r.missingMember());
        }
        List<MemberDisk> survivors = new ArrayList<>(m.members);
        survivors.remove(1);
        long readAt = assertReadsMidReshape(survivors, m.image);
        assertTrue(readAt > 0, "stopped mid-way: " + readAt);
        try (OfflineReshape r = OfflineReshape.resume(survivors)) {
            assertTrue(r.run(() -> false, p -> {}));
        }
        try (Raid5Array array = Raid5Array.assemble(survivors)) {
            assertTrue(array.status().degraded(), "assembled degraded");
            ArrayOracle.assertArrayHolds(array, Arrays.copyOf(m.image, (int) newSize(m, 3, CHUNK)));
        }
    }

    /** Refusals of a shrink write nothing: a size too big, a count out of range, no room after the data. */
    @Test
    void shrinkRefusalsWriteNothing() throws Exception {
        Made m = make(4, CHUNK, Raid5Algorithm.LEFT_SYMMETRIC, 3);
        byte[][] before = snapshot(m.members);
        long size = newSize(m, 3, CHUNK);
        ArrayConfigException e =
                assertThrows(ArrayConfigException.class, () -> OfflineReshape.shrink(m.members, 3, size + 512));
        assertTrue(
                e.getMessage().contains("reduce the size of") && e.getMessage().contains(size + " bytes"),
                e.getMessage());
        e = assertThrows(ArrayConfigException.class, () -> OfflineReshape.shrink(m.members, 4, size));
        assertTrue(e.getMessage().contains("not 4"), e.getMessage());
        e = assertThrows(ArrayConfigException.class, () -> OfflineReshape.shrink(m.members, 1, size));
        assertTrue(e.getMessage().contains("not 1"), e.getMessage());
        e = assertThrows(ArrayConfigException.class, () -> OfflineReshape.shrink(m.members.subList(0, 3), 3, size));
        assertTrue(e.getMessage().contains("every member"), e.getMessage());
        for (int i = 0; i < before.length; i++) {
            assertArrayEquals(before[i], snapshot(List.of(m.members.get(i)))[0], "member " + i + " changed");
        }
        // Members whose data reaches their end: no room to move the offset up.
        List<MemberDisk> full = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            full.add(new Kept(MEMBER, "full" + i));
        }
        Raid5Array.create(ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), full)
                .close();
        byte[][] fullBefore = snapshot(full);
        e = assertThrows(ArrayConfigException.class, () -> OfflineReshape.shrink(full, 3, size));
        assertTrue(e.getMessage().contains("full0") && e.getMessage().contains("room missing"), e.getMessage());
        for (int i = 0; i < fullBefore.length; i++) {
            assertArrayEquals(fullBefore[i], snapshot(List.of(full.get(i)))[0], "full member " + i + " changed");
        }
    }
}
