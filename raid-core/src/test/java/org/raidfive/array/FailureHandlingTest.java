package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.layout.Raid5Algorithm;

/** md's failure behaviour under load, proven against a reference image of every acknowledged write. */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FailureHandlingTest {
    private static final int CHUNK = 16 * 1024;
    private static final int DISKS = 4;
    private static final long MEMBER = (1 << 20) + 24L * CHUNK;

    static List<FaultyDisk> faultyMembers(int n, long size) {
        List<FaultyDisk> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(new FaultyDisk(new MemoryDisk(size, "m" + i)));
        }
        return list;
    }

    static Raid5Array create(List<? extends MemberDisk> members, Raid5Algorithm algorithm) throws IOException {
        return Raid5Array.create(
                ArraySpec.builder()
                        .algorithm(algorithm)
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .syncLimits(SyncLimits.UNLIMITED)
                        .build(),
                members);
    }

    static Stream<Arguments> everyLayoutAndSlot() {
        List<Arguments> cases = new ArrayList<>();
        for (Raid5Algorithm a : Raid5Algorithm.values()) {
            for (int slot = 0; slot < DISKS; slot++) {
                cases.add(Arguments.of(a, slot));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} slot {1}")
    @MethodSource("everyLayoutAndSlot")
    void memberDyingUnderLoadLosesNothingDegradedOrAfterRebuild(Raid5Algorithm algorithm, int slot) throws Exception {
        long seed = System.nanoTime();
        System.out.println("memberDying " + algorithm + " slot " + slot + " seed " + seed);
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        try (Raid5Array array = create(members, algorithm)) {
            byte[] image = LoadGenerator.fillRandom(array, seed);
            try (LoadGenerator load = new LoadGenerator(array, image, 3, seed).start()) {
                load.awaitOperations(300);
                if (slot % 2 == 0) {
                    members.get(slot).disappear();
                } else {
                    array.fail(members.get(slot));
                }
                load.awaitOperations(600);
                assertTrue(array.isDegraded(), "degraded after the failure");
                assertFalse(array.isFailed());
                load.stop();
                ArrayOracle.assertArrayHolds(array, image);

                array.addSpare(new MemoryDisk(MEMBER, "spare"));
                LoadGenerator during = new LoadGenerator(array, image, 2, seed + 1).start();
                assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended(), "rebuild finished");
                during.stop();
                assertTrue(array.syncProgress().complete(), "rebuild completed: " + array.syncProgress());
                assertFalse(array.isDegraded(), "healthy after the rebuild");
                ArrayOracle.assertArrayHolds(array, image);
                List<MemberDisk> now = new ArrayList<>();
                for (ArrayStatus.MemberStatus m : array.status().members()) {
                    assertEquals(MemberState.IN_SYNC, m.state(), m.name());
                }
                for (Member m : array.core.table.slots) {
                    now.add(m.disk);
                }
                ArrayOracle.assertParityConsistent(
                        now,
                        array.core.table.slots[0].dataOffsetBytes,
                        array.layout().memberBytesUsed());
            }
        }
    }

    @Test
    void secondFailureStopsTheArrayWithoutSilentCorruptionAndIsRecordedOnDisk() throws Exception {
        long seed = System.nanoTime();
        System.out.println("secondFailure seed " + seed);
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        Raid5Array array = create(members, Raid5Algorithm.LEFT_SYMMETRIC);
        byte[] image = LoadGenerator.fillRandom(array, seed);
        LoadGenerator load =
                new LoadGenerator(array, image, 3, seed).tolerateArrayFailure().start();
        load.awaitOperations(200);
        members.get(1).disappear();
        load.awaitOperations(200);
        members.get(3).disappear();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!array.isFailed()) {
            assertTrue(System.nanoTime() < deadline, "the load reached the second failed member");
            Thread.sleep(5);
        }
        load.stop();
        ArrayFailedException e =
                assertThrows(ArrayFailedException.class, () -> array.read(0, ByteBuffer.allocate(512), 0, 512));
        assertTrue(e.getMessage().contains("failed"), e.getMessage());
        assertThrows(ArrayFailedException.class, () -> array.write(0, ByteBuffer.allocate(512), 0, 512));
        assertTrue(array.status().state().contains("FAILED"), array.status().state());
        // What the survivors say on disk: the failure is recorded before I/O goes on.
        var sb = SuperblockIo.read(members.get(0).inner());
        array.close();
        int faulty = 0;
        for (int dev = 0; dev < DISKS; dev++) {
            if (sb.devRole(dev) == org.raidfive.md.Superblock.ROLE_FAULTY) {
                faulty++;
            }
        }
        assertTrue(faulty >= 1, "the first failure is recorded on the survivors");
    }

    @Test
    void readErrorIsReconstructedAndRewrittenAndTheMemberStays() throws Exception {
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        try (Raid5Array array = create(members, Raid5Algorithm.LEFT_SYMMETRIC)) {
            byte[] image = LoadGenerator.fillRandom(array, 11);
            // Array chunk 0 lives on slot 0 (left-symmetric stripe 0) at the data offset.
            long dataOffset = array.core.table.slots[0].dataOffsetBytes;
            FaultyDisk bad = members.get(0);
            // twice: md retries a failed read page by page first, and corrects only what fails again
            bad.failReads(dataOffset, dataOffset + 4096, 2);
            long writesBefore = bad.writes();
            byte[] got = new byte[8192];
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            assertTrue(java.util.Arrays.equals(got, 0, 8192, image, 0, 8192), "reconstructed bytes returned");
            assertTrue(bad.writes() > writesBefore, "the bad sectors were rewritten");
            assertFalse(array.isDegraded(), "a corrected read error keeps the member");
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            assertTrue(java.util.Arrays.equals(got, 0, 8192, image, 0, 8192));
        }
    }

    @Test
    void readErrorWhoseRewriteFailsIsRecordedAsBadBlocksAsMdDoes() throws Exception {
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        try (Raid5Array array = create(members, Raid5Algorithm.LEFT_SYMMETRIC)) {
            byte[] image = LoadGenerator.fillRandom(array, 12);
            long dataOffset = array.core.table.slots[0].dataOffsetBytes;
            members.get(0).failReads(dataOffset, dataOffset + 4096).failWrites(dataOffset, dataOffset + 4096);
            byte[] got = new byte[4096];
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            assertTrue(java.util.Arrays.equals(got, 0, 4096, image, 0, 4096));
            // md (raid5 R5_WriteError): the sectors go on the member's bad block list; the member stays.
            assertFalse(array.isDegraded());
            assertEquals(MemberState.IN_SYNC, array.core.table.slots[0].state);
            org.raidfive.md.Superblock sb = SuperblockIo.read(members.get(0).inner());
            assertTrue(sb.hasFeature(org.raidfive.md.Superblock.MD_FEATURE_BAD_BLOCKS), "log written");
            org.raidfive.md.BadBlockLog onDisk =
                    SuperblockIo.readBadBlocks(members.get(0).inner(), sb);
            assertTrue(
                    onDisk.overlaps(dataOffset / 512, 8) && !onDisk.overlaps(dataOffset / 512 + 8, 1000), "" + onDisk);
            long readsBefore = members.get(0).reads();
            ArrayOracle.assertArrayHolds(array, image); // the listed sectors are rebuilt, never read
            assertTrue(members.get(0).reads() > readsBefore, "the rest of the member is still read");
        }
    }

    @Test
    void writeErrorFailsTheMemberAndTheWriteStillLands() throws Exception {
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        try (Raid5Array array = create(members, Raid5Algorithm.LEFT_SYMMETRIC)) {
            byte[] image = LoadGenerator.fillRandom(array, 13);
            members.get(2).failWrites(0, Long.MAX_VALUE);
            byte[] data = new byte[3 * CHUNK];
            new java.util.Random(5).nextBytes(data);
            array.write(0, ByteBuffer.wrap(data), 0, data.length);
            System.arraycopy(data, 0, image, 0, data.length);
            assertTrue(array.isDegraded());
            ArrayOracle.assertArrayHolds(array, image);
        }
    }

    @Test
    void removeWaitsForInFlightIoOnTheMember() throws Exception {
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        // Slot 0 counts reads that have completed inside the disk, under the injected latency.
        java.util.concurrent.atomic.AtomicLong completed = new java.util.concurrent.atomic.AtomicLong();
        MemoryDisk backing = new MemoryDisk(MEMBER, "m0");
        MemberDisk counting = new MemberDisk() {
            public long size() {
                return backing.size();
            }

            public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
                backing.read(position, dst, dstOffset, length);
                completed.incrementAndGet();
            }

            public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
                backing.write(position, src, srcOffset, length);
            }

            public void flush() {}

            public String name() {
                return backing.name();
            }

            public void close() {
                backing.close();
            }
        };
        members.set(0, new FaultyDisk(counting));
        try (Raid5Array array = create(members, Raid5Algorithm.LEFT_SYMMETRIC)) {
            byte[] image = LoadGenerator.fillRandom(array, 14);
            ArrayLifecycleTest.awaitClean(array); // no safemode flush from here on
            FaultyDisk slow = members.get(0);
            long opsBefore = slow.operations();
            long completedBefore = completed.get();
            slow.latency(400, java.util.concurrent.TimeUnit.MILLISECONDS);
            byte[] got = new byte[4096];
            Thread reader = new Thread(() -> {
                try {
                    array.read(0, ByteBuffer.wrap(got), 0, 4096); // chunk 0 is on slot 0
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            reader.start();
            while (slow.operations() == opsBefore) { // wait until the read is inside the slow member
                Thread.sleep(1);
            }
            slow.latency(0, java.util.concurrent.TimeUnit.MILLISECONDS);
            array.fail(slow);
            array.remove(slow);
            assertEquals(
                    completedBefore + 1, completed.get(), "remove returned only after the in-flight read completed");
            reader.join();
            assertTrue(java.util.Arrays.equals(got, 0, 4096, image, 0, 4096), "the in-flight read was not lost");
            assertTrue(array.status().members().stream().noneMatch(m -> m.name().equals("m0")), "m0 is gone");
            ArrayOracle.assertArrayHolds(array, image);
        }
    }

    @Test
    void removingAnInSyncMemberIsRefused() throws Exception {
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        try (Raid5Array array = create(members, Raid5Algorithm.LEFT_SYMMETRIC)) {
            ArrayStateException e = assertThrows(ArrayStateException.class, () -> array.remove(members.get(1)));
            assertTrue(e.getMessage().contains("fail it first"), e.getMessage());
        }
    }

    @Test
    void replaceRebuildsOntoTheNewMemberUnderLoadThenRetiresTheOld() throws Exception {
        long seed = System.nanoTime();
        System.out.println("replace seed " + seed);
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        try (Raid5Array array = create(members, Raid5Algorithm.RIGHT_SYMMETRIC)) {
            byte[] image = LoadGenerator.fillRandom(array, seed);
            MemoryDisk fresh = new MemoryDisk(MEMBER, "fresh");
            try (LoadGenerator load = new LoadGenerator(array, image, 2, seed).start()) {
                array.replace(members.get(2), fresh);
                assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
                load.awaitOperations(100);
            }
            assertFalse(array.isDegraded());
            assertEquals(fresh, array.core.table.slots[2].disk, "the new member holds slot 2");
            assertTrue(array.status().members().stream().noneMatch(m -> m.name().equals("m2")), "old member retired");
            ArrayOracle.assertArrayHolds(array, image);
            List<MemberDisk> now = new ArrayList<>();
            for (Member m : array.core.table.slots) {
                now.add(m.disk);
            }
            ArrayOracle.assertParityConsistent(
                    now,
                    array.core.table.slots[0].dataOffsetBytes,
                    array.layout().memberBytesUsed());
        }
    }

    @Test
    void hotSpareTakesOverWhenAMemberFails() throws Exception {
        List<FaultyDisk> members = faultyMembers(DISKS, MEMBER);
        MemoryDisk spare = new MemoryDisk(MEMBER, "hot-spare");
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .syncLimits(SyncLimits.UNLIMITED)
                        .build(),
                members,
                List.of(spare))) {
            byte[] image = LoadGenerator.fillRandom(array, 15);
            members.get(1).disappear();
            byte[] got = new byte[(int) array.size()];
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            assertTrue(java.util.Arrays.equals(got, image));
            // The array's daemon starts recovery soon after the failure, off the I/O path.
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (array.isDegraded()) {
                assertTrue(System.nanoTime() < deadline, "rebuilt onto the hot spare");
                array.awaitSync(Duration.ofMillis(50));
                Thread.sleep(5);
            }
            assertEquals(spare, array.core.table.slots[1].disk);
            ArrayOracle.assertArrayHolds(array, image);
        }
    }
}
