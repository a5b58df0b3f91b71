package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.Superblock;

/**
 * md's write-intent bitmap kept bit by bit. The oracles are the members' own bytes (the bit as md
 * lays it out, 256 bytes of bitmap superblock then little-endian bits, 8 sectors after the
 * superblock), counts of member I/O, a flat reference image and parity recomputed from scratch.
 */
@Timeout(120)
class WriteIntentBitmapTest {
    private static final int CHUNK = 16 * 1024;
    private static final int BITMAP_CHUNK = 64 * 1024;
    private static final long MEMBER = 8L << 20;
    private static final int DISKS = 4;
    private static final long BITMAP_AT = (Superblock.SUPERBLOCK_OFFSET_SECTORS + 8) * 512;

    /**
     * A member that counts its data-area I/O and, when {@code checkBits} is on, checks that every
     * write to the data area lands only after its bitmap chunk's bit is set on this very member.
     */
    static final class Watched extends ForwardingDisk {
        /** The memory beneath, which outlives the array (a re-add wraps it again). */
        final MemoryDisk memory;

        volatile long dataOffset = Long.MAX_VALUE;
        volatile boolean checkBits;
        final AtomicLong dataReads = new AtomicLong();
        final AtomicLong dataWrites = new AtomicLong();
        final AtomicReference<String> violation = new AtomicReference<>();
        volatile CountDownLatch holdWrites;
        volatile CountDownLatch held;

        Watched(MemoryDisk memory) {
            super(memory);
            this.memory = memory;
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            if (position >= dataOffset) {
                dataReads.incrementAndGet();
            }
            inner.read(position, dst, dstOffset, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            if (position >= dataOffset) {
                dataWrites.incrementAndGet();
                if (checkBits) {
                    long chunk = (position - dataOffset) / BITMAP_CHUNK;
                    ByteBuffer b = ByteBuffer.allocate(1);
                    inner.read(BITMAP_AT + 256 + chunk / 8, b, 0, 1);
                    if ((b.get(0) >> (chunk % 8) & 1) == 0 && violation.get() == null) {
                        violation.set(name() + ": a write to bitmap chunk " + chunk + " landed before its bit was set");
                    }
                }
                CountDownLatch hold = holdWrites;
                if (hold != null) {
                    held.countDown();
                    try {
                        hold.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            inner.write(position, src, srcOffset, length);
        }

        @Override
        public void close() {
            // the MemoryDisk outlives the array: a re-add gives it back through a new view
        }
    }

    private static List<Watched> disks() {
        List<Watched> d = new ArrayList<>();
        for (int i = 0; i < DISKS; i++) {
            d.add(new Watched(new MemoryDisk(MEMBER)));
        }
        return d;
    }

    private static ArraySpec spec(ConsistencyPolicy policy) {
        return ArraySpec.builder()
                .chunkSize(CHUNK)
                .assumeClean(true)
                .consistencyPolicy(policy)
                .bitmapChunk(policy == ConsistencyPolicy.BITMAP ? BITMAP_CHUNK : 0)
                .syncLimits(SyncLimits.UNLIMITED)
                .build();
    }

    private static boolean bitOnDisk(MemberDisk d, long chunk) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(1);
        d.read(BITMAP_AT + 256 + chunk / 8, b, 0, 1);
        return (b.get(0) >> (chunk % 8) & 1) == 1;
    }

    private static void watch(List<Watched> d, Raid5Array array) {
        for (Watched w : d) {
            w.dataOffset = array.core.table.slots[0].dataOffsetBytes;
        }
    }

    /** Two daemon passes with nothing in flight clear every idle bit (md's counter 2, 1, 0). */
    private static void settle(Raid5Array array) throws IOException {
        WriteIntentBitmap.in(array.core).daemonPass();
        WriteIntentBitmap.in(array.core).daemonPass();
    }

    @Test
    void everyWriteLandsOnlyAfterItsChunksBitIsOnEveryMember() throws Exception {
        List<Watched> d = disks();
        long seed = System.nanoTime();
        System.out.println("bit-before-write seed " + seed);
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.BITMAP), d)) {
            watch(d, array);
            byte[] image = LoadGenerator.fillRandom(array, 1);
            settle(array);
            assertEquals(0, WriteIntentBitmap.in(array.core).dirtyChunks(), "idle: every bit cleared");
            for (Watched w : d) {
                w.checkBits = true;
            }
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<Future<?>> done = new ArrayList<>();
            int blocks = image.length / 4096;
            for (int t = 0; t < 3; t++) {
                int me = t;
                done.add(pool.submit(() -> {
                    Random r = new Random(seed + me);
                    byte[] data = new byte[4096];
                    for (int i = 0; i < 300; i++) {
                        int block = r.nextInt(blocks / 3) * 3 + me;
                        r.nextBytes(data);
                        array.write((long) block * 4096, ByteBuffer.wrap(data), 0, 4096);
                        synchronized (image) {
                            System.arraycopy(data, 0, image, block * 4096, 4096);
                        }
                        if (i % 50 == 49) {
                            WriteIntentBitmap.in(array.core).daemonPass(); // clears race the writes
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            pool.shutdown();
            for (Watched w : d) {
                assertEquals(null, w.violation.get());
                assertTrue(w.dataWrites.get() > 0);
            }
            ArrayOracle.assertArrayHolds(array, image);
        }
    }

    @Test
    void aBitIsClearedAfterTwoIdlePassesNeverUnderAWriteInFlight() throws Exception {
        List<Watched> d = disks();
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.BITMAP), d)) {
            watch(d, array);
            LoadGenerator.fillRandom(array, 2);
            settle(array);
            long chunk = 3;
            long at = chunk * BITMAP_CHUNK * (DISKS - 1) + 4096; // a write inside member chunk 3
            long memberChunk = -1;
            CountDownLatch release = new CountDownLatch(1);
            for (Watched w : d) {
                w.held = new CountDownLatch(1);
                w.holdWrites = release;
            }
            Thread writer = new Thread(() -> {
                try {
                    array.write(at, ByteBuffer.wrap(new byte[4096]), 0, 4096);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            writer.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (d.stream().allMatch(w -> w.held.getCount() > 0) && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertTrue(d.stream().anyMatch(w -> w.held.getCount() == 0), "the write is in flight");
            for (int c = 0; c < WriteIntentBitmap.in(array.core).chunks(); c++) {
                if (bitOnDisk(d.get(0), c)) {
                    memberChunk = c;
                }
            }
            assertTrue(memberChunk >= 0, "its bit is set");
            for (int pass = 0; pass < 4; pass++) {
                WriteIntentBitmap.in(array.core).daemonPass();
            }
            assertTrue(bitOnDisk(d.get(0), memberChunk), "never cleared while the write is in flight");
            for (Watched w : d) {
                w.holdWrites = null;
            }
            release.countDown();
            writer.join(10_000);
            // Idle now: md's daemon ages it at one pass and clears it at the next (the array's own
            // daemon may have made the first of these already).
            WriteIntentBitmap.in(array.core).daemonPass();
            WriteIntentBitmap.in(array.core).daemonPass();
            for (Watched w : d) {
                assertFalse(bitOnDisk(w, memberChunk), "cleared on " + w.name() + " after two idle passes");
            }
        }
    }

    @Test
    void aCrashResyncsOnlyTheChunksWritten() throws Exception {
        List<Watched> d = disks();
        Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.BITMAP), d);
        byte[] image;
        long chunks;
        try {
            watch(d, array);
            image = LoadGenerator.fillRandom(array, 3);
            settle(array);
            chunks = WriteIntentBitmap.in(array.core).chunks();
            byte[] data = new byte[4096];
            new Random(4).nextBytes(data);
            for (long off : new long[] {4096, 40L * CHUNK * (DISKS - 1)}) {
                array.write(off, ByteBuffer.wrap(data), 0, 4096);
                System.arraycopy(data, 0, image, (int) off, 4096);
            }
            assertTrue(WriteIntentBitmap.in(array.core).dirtyChunks() <= 2);
            Crash.of(array);
        } catch (Throwable t) {
            array.close();
            throw t;
        }
        for (Watched w : d) {
            w.dataReads.set(0);
        }
        try (Raid5Array again =
                Raid5Array.assemble(new ArrayList<>(d), AssembleOptions.DEFAULT.withSyncLimits(SyncLimits.UNLIMITED))) {
            assertTrue(again.awaitSync(Duration.ofSeconds(60)).ended());
            assertEquals(SyncAction.RESYNC, again.syncProgress().action());
            long stripesPerBit = BITMAP_CHUNK / CHUNK;
            long read = d.stream().mapToLong(w -> w.dataReads.get()).sum();
            assertTrue(
                    read <= 2 * stripesPerBit * DISKS,
                    "the resync read " + read + " member pieces: only the " + "2 dirty bitmap chunks of " + chunks
                            + " (" + stripesPerBit + " stripes each)");
            assertTrue(read > 0, "and it did resync them");
            ArrayOracle.assertArrayHolds(again, image);
            ArrayOracle.assertParityConsistent(
                    d, again.core.table.slots[0].dataOffsetBytes, again.layout().memberBytesUsed());
        }
    }

    @Test
    void aReturningMemberRecoversOnlyWhatItMissedAndItsBitsThenClear() throws Exception {
        List<Watched> d = disks();
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.BITMAP), d)) {
            watch(d, array);
            byte[] image = LoadGenerator.fillRandom(array, 5);
            settle(array);
            array.fail(d.get(3));
            byte[] data = new byte[8192];
            new Random(6).nextBytes(data);
            for (long off : new long[] {0, 20L * CHUNK * (DISKS - 1) + 8192, 100L * CHUNK * (DISKS - 1)}) {
                array.write(off, ByteBuffer.wrap(data), 0, data.length);
                System.arraycopy(data, 0, image, (int) off, data.length);
            }
            settle(array);
            long dirty = WriteIntentBitmap.in(array.core).dirtyChunks();
            assertTrue(dirty >= 1 && dirty <= 3, "degraded writes keep their bits: " + dirty);
            Watched back = new Watched(d.get(3).memory);
            back.dataOffset = d.get(3).dataOffset;
            ReAddOutcome o = array.reAdd(back);
            assertTrue(o.byBitmap(), "by the bitmap: " + o);
            assertEquals(3, o.slot());
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            assertFalse(array.isDegraded());
            long stripesPerBit = BITMAP_CHUNK / CHUNK;
            assertTrue(
                    back.dataWrites.get() <= dirty * stripesPerBit,
                    "recovery wrote " + back.dataWrites.get() + " pieces to the returning member: only its " + dirty
                            + " dirty chunks");
            ArrayOracle.assertArrayHolds(array, image);
            List<MemberDisk> now = List.of(d.get(0), d.get(1), d.get(2), back);
            ArrayOracle.assertParityConsistent(
                    now,
                    array.core.table.slots[0].dataOffsetBytes,
                    array.layout().memberBytesUsed());
            settle(array);
            assertEquals(0, WriteIntentBitmap.in(array.core).dirtyChunks(), "whole again: the bits go");
        }
    }

    @Test
    void aMemberThatLeftBeforeBitsWereClearedIsRebuiltInFullAndToldWhy() throws Exception {
        List<Watched> d = disks();
        Watched spare = new Watched(new MemoryDisk(MEMBER));
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.BITMAP), d)) {
            watch(d, array);
            byte[] image = LoadGenerator.fillRandom(array, 7);
            settle(array);
            array.fail(d.get(3));
            array.write(0, ByteBuffer.wrap(new byte[4096]), 0, 4096);
            System.arraycopy(new byte[4096], 0, image, 0, 4096);
            array.addSpare(spare);
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            settle(array); // whole again: the bits are cleared, events_cleared moves past d3's events
            array.fail(spare);
            array.remove(spare);
            Watched back = new Watched(d.get(3).memory);
            ReAddOutcome o = array.reAdd(back);
            assertFalse(o.byBitmap());
            assertNotNull(o.fullRebuildWhy());
            assertTrue(o.fullRebuildWhy().contains("events_cleared"), o.fullRebuildWhy());
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            ArrayOracle.assertArrayHolds(array, image);
        }
    }

    @Test
    void withoutABitmapAReAddIsAFullRebuild() throws Exception {
        List<Watched> d = disks();
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.RESYNC), d)) {
            watch(d, array);
            byte[] image = LoadGenerator.fillRandom(array, 8);
            array.fail(d.get(2));
            ReAddOutcome o = array.reAdd(new Watched(d.get(2).memory));
            assertFalse(o.byBitmap());
            assertTrue(o.fullRebuildWhy().contains("no write-intent bitmap"), o.fullRebuildWhy());
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            ArrayOracle.assertArrayHolds(array, image);
        }
    }
}
