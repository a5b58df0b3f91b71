package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.Superblock;

/** Rebuild with resume, check and repair, speed limits and progress. */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SyncPassTest {
    private static final int CHUNK = 64 * 1024;

    @TempDir
    Path dir;

    private List<MemberDisk> files(String prefix, int n, long size) throws Exception {
        List<MemberDisk> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(FileDisk.createOrExtend(dir.resolve(prefix + i + ".img"), size, false));
        }
        return list;
    }

    private List<MemberDisk> reopen(String... names) throws Exception {
        List<MemberDisk> list = new ArrayList<>();
        for (String n : names) {
            list.add(FileDisk.open(dir.resolve(n)));
        }
        return list;
    }

    @Test
    void rebuildUnderWritesStopsHalfwayResumesAfterReassemblyAndVerifies() throws Exception {
        long seed = System.nanoTime();
        System.out.println("rebuild-resume seed " + seed);
        long member = (1 << 20) + 128L * CHUNK;
        List<MemberDisk> disks = files("r", 4, member);
        byte[] image;
        Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .syncLimits(new SyncLimits(512 * 1024, 2 * 1024 * 1024))
                        .build(),
                disks);
        image = LoadGenerator.fillRandom(array, seed);
        array.fail(disks.get(1));
        array.remove(disks.get(1));
        MemberDisk spare = FileDisk.createOrExtend(dir.resolve("spare.img"), member, false);
        try (LoadGenerator load = new LoadGenerator(array, image, 2, seed).start()) {
            array.addSpare(spare);
            long total = array.layout().memberBytesUsed();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (array.syncProgress() == null || array.syncProgress().doneBytes() < total / 3) {
                assertTrue(System.nanoTime() < deadline, "rebuild progresses");
                Thread.sleep(20);
            }
            SyncProgress p = array.syncProgress();
            assertEquals(SyncAction.RECOVER, p.action());
            assertTrue(p.running());
            assertTrue(p.bytesPerSecond() > 0 && p.bytesPerSecond() < 8 * 1024 * 1024, "limited rate " + p);
            assertNotNull(p.eta());
            load.awaitOperations(200);
        }
        array.close();
        Superblock sb;
        try (FileDisk d = FileDisk.open(dir.resolve("spare.img"))) {
            sb = SuperblockIo.read(d);
        }
        assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET));
        long checkpoint = sb.recoveryOffset() * 512;
        assertTrue(checkpoint > 0 && checkpoint < array.layout().memberBytesUsed(), "checkpoint " + checkpoint);

        List<MemberDisk> again = reopen("r0.img", "spare.img", "r2.img", "r3.img");
        try (Raid5Array resumed = Raid5Array.assemble(
                again, AssembleOptions.DEFAULT.withStartSync(false).withSyncLimits(SyncLimits.UNLIMITED))) {
            assertTrue(resumed.isDegraded());
            ArrayOracle.assertArrayHolds(resumed, image);
            assertEquals(SyncAction.RECOVER, resumed.startSync());
            assertTrue(resumed.syncProgress().doneBytes() >= checkpoint, "resumed from the checkpoint");
            assertTrue(resumed.awaitSync(Duration.ofSeconds(60)).ended());
            assertFalse(resumed.isDegraded());
            ArrayOracle.assertArrayHolds(resumed, image);
            ArrayOracle.assertParityConsistent(
                    again,
                    resumed.core.table.slots[0].dataOffsetBytes,
                    resumed.layout().memberBytesUsed());
        }
    }

    @Test
    void checkFindsEveryInjectedCorruptionAndRepairClearsIt() throws Exception {
        long seed = System.nanoTime();
        System.out.println("scrub seed " + seed);
        Random random = new Random(seed);
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            disks.add(new MemoryDisk((1 << 20) + 32L * CHUNK));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .syncLimits(SyncLimits.UNLIMITED)
                        .build(),
                disks)) {
            LoadGenerator.fillRandom(array, seed);
            array.startCheck(false);
            assertTrue(array.awaitSync(Duration.ofSeconds(30)).ended());
            assertEquals(0, array.mismatchSectors());
            // Corrupt distinct 4 KiB pages on random members (data or parity alike).
            long dataOffset = array.core.table.slots[0].dataOffsetBytes;
            long pages = array.layout().memberBytesUsed() / 4096;
            Set<Long> hit = new TreeSet<>();
            while (hit.size() < 9) {
                long page = random.nextLong(pages);
                if (hit.add(page)) {
                    MemberDisk d = disks.get(random.nextInt(disks.size()));
                    long at = dataOffset + page * 4096 + random.nextInt(4096);
                    ByteBuffer b = ByteBuffer.allocate(1);
                    d.read(at, b, 0, 1);
                    b.put(0, (byte) (b.get(0) ^ 0x80));
                    d.write(at, b, 0, 1);
                }
            }
            array.startCheck(false);
            assertTrue(array.awaitSync(Duration.ofSeconds(30)).ended());
            assertEquals(9 * 8, array.mismatchSectors(), "md counts 8 sectors per mismatched 4 KiB page");
            array.startCheck(true);
            assertTrue(array.awaitSync(Duration.ofSeconds(30)).ended());
            assertEquals(9 * 8, array.mismatchSectors(), "repair reports what it fixed");
            array.startCheck(false);
            assertTrue(array.awaitSync(Duration.ofSeconds(30)).ended());
            assertEquals(0, array.mismatchSectors());
            ArrayOracle.assertParityConsistent(disks, dataOffset, array.layout().memberBytesUsed());
        }
    }

    @Test
    void checkIsRefusedOnADegradedArray() throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            disks.add(new MemoryDisk((1 << 20) + 8L * CHUNK));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            array.fail(disks.get(0));
            ArrayStateException e = assertThrows(ArrayStateException.class, () -> array.startCheck(false));
            assertTrue(e.getMessage().contains("degraded"), e.getMessage());
        }
    }
}
