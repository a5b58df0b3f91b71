package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.Superblock;

/**
 * {@link Raid5Array#growMemberBytes} (md's {@code --grow --size}) against a flat reference image and
 * parity recomputed from the members: data kept, the new region resynced, refusals writing nothing,
 * and every point a crash can cut the grow at assembling to a whole array.
 */
class GrowMemberBytesTest {
    private static final int CHUNK = 64 * 1024;
    private static final long SMALL = 2L << 20;
    private static final long LARGE = 4L << 20;

    /** A member whose disk grows under it, as a file or a volume does; records writes while asked. */
    static final class GrowingDisk extends ForwardingDisk {
        volatile long visible;
        final int index;
        /** Writes made while recording, by every disk sharing it, in order: {index, position, bytes}. */
        final List<Object[]> log;

        volatile boolean recording;

        GrowingDisk(MemoryDisk capacity, long visible, int index, List<Object[]> log) {
            super(capacity);
            this.visible = visible;
            this.index = index;
            this.log = log;
        }

        @Override
        public long size() {
            return visible;
        }

        private void check(long position, int length) throws EOFException {
            if (position < 0 || position + length > visible) {
                throw new EOFException(name() + ": " + length + " bytes at " + position + " lie past " + visible);
            }
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            check(position, length);
            super.read(position, dst, dstOffset, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            check(position, length);
            if (recording) {
                byte[] b = new byte[length];
                src.get(srcOffset, b, 0, length);
                synchronized (log) {
                    log.add(new Object[] {index, position, b});
                }
            }
            super.write(position, src, srcOffset, length);
        }

        /** The test owns the memory: closing the array leaves it for the next assembly. */
        @Override
        public void close() {}

        byte[] image() throws IOException {
            byte[] all = new byte[(int) inner().size()];
            inner().read(0, ByteBuffer.wrap(all), 0, all.length);
            return all;
        }
    }

    private static List<GrowingDisk> disks(int n, long visible) {
        List<GrowingDisk> d = new ArrayList<>();
        List<Object[]> log = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            d.add(new GrowingDisk(new MemoryDisk(LARGE + (1 << 20), "m" + i), visible, i, log));
        }
        return d;
    }

    private static ArraySpec spec(ConsistencyPolicy policy) {
        return ArraySpec.builder()
                .chunkSize(CHUNK)
                .consistencyPolicy(policy)
                .syncLimits(SyncLimits.UNLIMITED)
                .build();
    }

    private static void awaitSyncDone(Raid5Array a) throws InterruptedException {
        SyncOutcome o = a.awaitSync(Duration.ofMinutes(1));
        assertTrue(
                o.result() == SyncOutcome.Result.DONE || o.result() == SyncOutcome.Result.NONE,
                "pass ended " + o.result());
    }

    private static byte[] fill(Raid5Array a, long from, Random rnd) throws IOException {
        byte[] data = new byte[(int) (a.size() - from)];
        rnd.nextBytes(data);
        a.write(from, ByteBuffer.wrap(data), 0, data.length);
        return data;
    }

    private static long dataOffset(GrowingDisk d) throws Exception {
        return superblock(d).dataOffset() * 512;
    }

    private static Superblock superblock(GrowingDisk d) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(4096);
        d.inner().read(Superblock.SUPERBLOCK_OFFSET, b, 0, 4096);
        return Superblock.decode(b, d.name());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = new byte[a.length + b.length];
        System.arraycopy(a, 0, c, 0, a.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP"})
    void growKeepsTheDataResyncsTheNewStripesAndRecordsMdsSizes(ConsistencyPolicy policy) throws Exception {
        long seed = System.nanoTime();
        System.out.println("GrowMemberBytesTest seed " + seed);
        Random rnd = new Random(seed);
        List<GrowingDisk> d = disks(4, SMALL);
        byte[] image;
        try (Raid5Array a = Raid5Array.create(spec(policy), d)) {
            awaitSyncDone(a);
            image = fill(a, 0, rnd);
            d.forEach(g -> g.visible = LARGE);
            long max = a.maxMemberBytes();
            assertEquals((LARGE - dataOffset(d.get(0))) / CHUNK * CHUNK, max);
            assertTrue(a.growMemberBytes(max));
            assertEquals(max * 3, a.size());
            assertEquals(max, a.layout().memberBytesUsed());
            awaitSyncDone(a);
            // The new stripes were resynced: parity holds over every member byte in use.
            ArrayOracle.assertParityConsistent(d, dataOffset(d.get(0)), max);
            byte[] old = new byte[image.length];
            a.read(0, ByteBuffer.wrap(old), 0, old.length);
            assertArrayEquals(image, old, "the data written before the grow");
            image = concat(image, fill(a, image.length, rnd));
            assertFalse(a.growMemberBytes(max), "growing to the size in use changes nothing");
        }
        for (GrowingDisk g : d) {
            Superblock sb = superblock(g);
            assertEquals((LARGE - dataOffset(g)) / 512, sb.dataSize(), g.name() + "'s data size");
            assertEquals(image.length / 3 / 512, sb.size(), g.name() + "'s size");
            assertEquals(-1L, sb.resyncOffset(), g.name() + " records the array in sync");
        }
        try (Raid5Array a = Raid5Array.assemble(d)) {
            ArrayOracle.assertArrayHolds(a, image);
        }
        ArrayOracle.assertParityConsistent(d, dataOffset(d.get(0)), image.length / 3);
    }

    /**
     * Files extended while the array over them is open: the array asks its members for their size
     * again and grows online, without being stopped, as md grows into a resized device. Checked on
     * the files after a fresh assembly: every byte against the image, md's sizes in the superblocks,
     * parity recomputed from the members.
     */
    @Test
    void anOpenArrayGrowsIntoFilesExtendedUnderIt(@TempDir Path dir) throws Exception {
        long seed = System.nanoTime();
        System.out.println("GrowMemberBytesTest files seed " + seed);
        Random rnd = new Random(seed);
        List<Path> paths = new ArrayList<>();
        List<FileDisk> files = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Path p = dir.resolve("m" + i);
            paths.add(p);
            files.add(FileDisk.createOrExtend(p, SMALL, false));
        }
        byte[] image;
        long max;
        try (Raid5Array a = Raid5Array.create(spec(ConsistencyPolicy.RESYNC), files)) {
            awaitSyncDone(a);
            image = fill(a, 0, rnd);
            long used = a.layout().memberBytesUsed();
            for (Path p : paths) {
                try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
                    f.setLength(LARGE);
                }
            }
            max = a.maxMemberBytes();
            assertTrue(max > used, "the array sees the room the files gained: " + max + " > " + used);
            assertTrue(a.growMemberBytes(max));
            assertEquals(max * 3, a.size());
            awaitSyncDone(a);
            image = concat(image, fill(a, image.length, rnd));
        }
        List<FileDisk> again = new ArrayList<>();
        for (Path p : paths) {
            again.add(FileDisk.open(p));
        }
        try (Raid5Array a = Raid5Array.assemble(again)) { // closes the files
            assertEquals(max * 3, a.size());
            ArrayOracle.assertArrayHolds(a, image);
            long dataOffset = a.core.table.slots[0].dataOffsetBytes;
            ByteBuffer b = ByteBuffer.allocate(4096);
            again.get(0).read(Superblock.SUPERBLOCK_OFFSET, b, 0, 4096);
            Superblock sb = Superblock.decode(b, "m0");
            assertEquals(max / 512, sb.size(), "m0's size");
            assertEquals((LARGE - dataOffset) / 512, sb.dataSize(), "m0's data size");
            ArrayOracle.assertParityConsistent(again, dataOffset, max);
        }
    }

    /**
     * md grows a degraded array too, and resyncs nothing until it is whole: the missing member's
     * blocks in the new stripes are what parity says, and the rebuild onto a spare makes every
     * stripe whole.
     */
    @Test
    void aDegradedArrayGrowsAndTheRebuildMakesTheNewStripesWhole() throws Exception {
        long seed = System.nanoTime();
        System.out.println("GrowMemberBytesTest seed " + seed);
        Random rnd = new Random(seed);
        List<GrowingDisk> d = disks(5, SMALL);
        List<GrowingDisk> survivors = new ArrayList<>(d.subList(0, 4));
        try (Raid5Array a = Raid5Array.create(spec(ConsistencyPolicy.RESYNC), d.subList(0, 4))) {
            awaitSyncDone(a);
            byte[] image = fill(a, 0, rnd);
            a.fail(d.get(1));
            a.remove(d.get(1));
            survivors.remove(d.get(1));
            d.forEach(g -> g.visible = LARGE);
            assertTrue(a.growMemberBytes(a.maxMemberBytes()));
            assertEquals(null, a.startSync(), "nothing to resync with while degraded");
            assertTrue(a.status().resyncPending(), "the new stripes wait for a resync");
            image = concat(image, fill(a, image.length, rnd));
            ArrayOracle.assertArrayHolds(a, image);
            a.addSpare(d.get(4));
            awaitSyncDone(a);
            assertFalse(a.isDegraded());
            survivors.add(d.get(4));
            ArrayOracle.assertArrayHolds(a, image);
            ArrayOracle.assertParityConsistent(
                    survivors, dataOffset(d.get(0)), a.layout().memberBytesUsed());
        }
    }

    @Test
    void refusalsWriteNothing() throws Exception {
        List<GrowingDisk> d = disks(3, SMALL);
        try (Raid5Array a = Raid5Array.create(spec(ConsistencyPolicy.RESYNC), d)) {
            awaitSyncDone(a);
            d.get(0).visible = LARGE;
            d.get(1).visible = LARGE;
            List<byte[]> images = new ArrayList<>();
            for (GrowingDisk g : d) {
                images.add(g.image());
            }
            long used = a.layout().memberBytesUsed();
            assertEquals(used, a.maxMemberBytes(), "m2 did not grow: it bounds the size");
            ArrayConfigException noRoom =
                    assertThrows(ArrayConfigException.class, () -> a.growMemberBytes(used + CHUNK));
            assertTrue(noRoom.getMessage().startsWith("m2 has room for "), noRoom.getMessage());
            ArrayConfigException shrink =
                    assertThrows(ArrayConfigException.class, () -> a.growMemberBytes(used - CHUNK));
            assertTrue(shrink.getMessage().contains("would shrink it"), shrink.getMessage());
            for (int i = 0; i < d.size(); i++) {
                assertArrayEquals(images.get(i), d.get(i).image(), d.get(i).name() + " changed by a refused grow");
            }
            assertEquals(used * 2, a.size());
        }
        List<GrowingDisk> p = disks(3, SMALL + (1 << 20)); // the log's megabyte before the data
        try (Raid5Array a = Raid5Array.create(spec(ConsistencyPolicy.PPL), p)) {
            awaitSyncDone(a);
            p.forEach(g -> g.visible = LARGE);
            List<byte[]> images = new ArrayList<>();
            for (GrowingDisk g : p) {
                images.add(g.image());
            }
            ArrayConfigException ppl =
                    assertThrows(ArrayConfigException.class, () -> a.growMemberBytes(a.maxMemberBytes()));
            assertTrue(ppl.getMessage().contains("partial parity log"), ppl.getMessage());
            for (int i = 0; i < p.size(); i++) {
                assertArrayEquals(images.get(i), p.get(i).image(), p.get(i).name() + " changed by a refused grow");
            }
        }
    }

    /**
     * Every prefix of the grow's writes, as a crash would leave the members: each assembles (no force)
     * to the old size or the new, holds the data written before, and its resync makes parity whole.
     */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP"})
    void everyCrashPointAssemblesWhole(ConsistencyPolicy policy) throws Exception {
        long seed = System.nanoTime();
        System.out.println("GrowMemberBytesTest seed " + seed);
        Random rnd = new Random(seed);
        List<GrowingDisk> d = disks(4, SMALL);
        byte[] image;
        long newMemberBytes;
        try (Raid5Array a = Raid5Array.create(spec(policy), d)) {
            awaitSyncDone(a);
            image = fill(a, 0, rnd);
        }
        List<byte[]> base = new ArrayList<>();
        for (GrowingDisk g : d) {
            base.add(g.image());
            g.visible = LARGE;
        }
        try (Raid5Array a = Raid5Array.assemble(d)) {
            d.forEach(g -> g.recording = true);
            newMemberBytes = a.maxMemberBytes();
            a.growMemberBytes(newMemberBytes);
            d.forEach(g -> g.recording = false);
        }
        List<Object[]> order = new ArrayList<>(d.get(0).log);
        long oldArray = image.length;
        int sawOld = 0;
        int sawNew = 0;
        for (int k = 0; k <= order.size(); k++) {
            List<GrowingDisk> copy = new ArrayList<>();
            for (int i = 0; i < d.size(); i++) {
                MemoryDisk m = new MemoryDisk(LARGE + (1 << 20), "m" + i);
                m.write(0, ByteBuffer.wrap(base.get(i)), 0, base.get(i).length);
                copy.add(new GrowingDisk(m, LARGE, i, new ArrayList<>()));
            }
            for (int j = 0; j < k; j++) {
                Object[] w = order.get(j);
                byte[] b = (byte[]) w[2];
                copy.get((Integer) w[0]).inner().write((Long) w[1], ByteBuffer.wrap(b), 0, b.length);
            }
            try (Raid5Array a = Raid5Array.assemble(copy)) {
                long size = a.size();
                assertTrue(
                        size == oldArray || size == newMemberBytes * 3,
                        "crash after write " + k + " of " + order.size() + ": size " + size);
                if (size == oldArray) {
                    sawOld++;
                } else {
                    sawNew++;
                }
                byte[] got = new byte[image.length];
                a.read(0, ByteBuffer.wrap(got), 0, got.length);
                assertArrayEquals(image, got, "crash after write " + k + ": the data written before the grow");
                a.startSync();
                awaitSyncDone(a);
                ArrayOracle.assertParityConsistent(
                        copy, dataOffset(copy.get(0)), a.layout().memberBytesUsed());
            }
        }
        assertTrue(sawOld > 0 && sawNew > 0, "old " + sawOld + ", new " + sawNew);
        System.out.println(
                policy + ": " + (order.size() + 1) + " crash points, " + sawOld + " old size, " + sawNew + " new size");
    }
}
