package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.raidfive.array.RoomyArrays.MEMBER;
import static org.raidfive.array.RoomyArrays.make;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.raidfive.array.ReshapeTestDisks.Kept;
import org.raidfive.array.RoomyArrays.Made;
import org.raidfive.disk.AlignedBuffers;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.ForwardingAsyncDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * The I/O an array serves mid-reshape allocates nothing in steady state: 4 KiB reads on both sides
 * of the reshape's position and 4 KiB writes (md's read-modify-write in one chunk, in either
 * geometry) through {@link OfflineReshape#read} and {@link OfflineReshape#write}, counted by the
 * JVM's per-thread allocation counter, healthy and with a member the reshape left out (its chunks
 * rebuilt from the others of their stripe). The reads are checked against a flat reference image
 * that the writes update, so the path measured is the one that serves the right bytes. The reshape's
 * own batches move stripes without allocating per stripe either.
 */
@Timeout(120)
class ReshapeIoAllocationTest {
    @ParameterizedTest(name = "degraded: {0}")
    @ValueSource(booleans = {false, true})
    void readsAndWritesMidReshapeAllocateNothing(boolean degraded) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeIoAllocationTest seed " + seed);
        Made m = make(3, seed);
        Kept added = new Kept(MEMBER, "new0");
        List<MemberDisk> given = new ArrayList<>(m.members());
        if (degraded) { // its first read fails: the reshape leaves it out, and the I/O below rebuilds its chunks
            long dataOffset = SuperblockIo.read(given.get(1)).dataOffset() * 512;
            given.set(1, new FaultyDisk(given.get(1)).failReads(dataOffset, dataOffset + 4096));
        }
        try (OfflineReshape r = OfflineReshape.grow(given, List.of(added))) {
            r.setBatchMemberBytes(64 << 10);
            int[] batches = {0};
            assertFalse(r.run(() -> batches[0]++ == 8, p -> {}));
            assertTrue(r.position() > 0 && r.position() < r.endPosition(), "mid-way: " + r.position());
            assertEquals(degraded, r.missingMember() != null, "the member left out: " + r.missingMember());
            int size = (int) r.reshapingArrayBytes();
            byte[] image = Arrays.copyOf(m.image(), size);
            SplittableRandom random = new SplittableRandom(seed);
            int ops = 20_000;
            int[] offsets = new int[ops];
            boolean[] writes = new boolean[ops];
            for (int i = 0; i < ops; i++) {
                offsets[i] = random.nextInt(size / 4096) * 4096;
                writes[i] = random.nextBoolean();
            }
            byte[] block = new byte[4096];
            random.nextBytes(block);
            ByteBuffer src = AlignedBuffers.allocate(4096);
            src.put(0, block);
            ByteBuffer dst = AlignedBuffers.allocate(4096);
            byte[] got = new byte[4096];
            ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
            long allocated = 0;
            for (int round = 0; round < 3; round++) { // the first two warm up (class loading, the JIT)
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < ops; i++) {
                    if (writes[i]) {
                        r.write(offsets[i], src, 0, 4096);
                    } else {
                        r.read(offsets[i], dst, 0, 4096);
                    }
                }
                allocated = threads.getCurrentThreadAllocatedBytes() - before;
                for (int i = 0; i < ops; i++) {
                    if (writes[i]) {
                        System.arraycopy(block, 0, image, offsets[i], 4096);
                    }
                }
            }
            System.out.println("mid-reshape I/O (degraded " + degraded + "): " + allocated + " bytes allocated over "
                    + ops + " reads and writes");
            for (int at = 0; at < size; at += 4096) {
                r.read(at, dst, 0, 4096);
                dst.get(0, got);
                assertEquals(-1, Arrays.mismatch(image, at, at + 4096, got, 0, 4096), "bytes at " + at);
            }
            // Less than one byte per operation: an allocation per operation would be 16 bytes at least.
            assertTrue(allocated < ops, allocated + " bytes allocated over " + ops + " reads and writes");
            r.markClean();
        }
    }

    /**
     * Moving stripes allocates nothing per stripe: a grow 4 -> 5 on memory members that complete
     * inline (the lanes' path, stripe by stripe, as on page-cache files) or say they do not (each
     * batch's I/O sent at once, as on NBD or O_DIRECT members), its allocations counted per batch on every thread that moves stripes (the
     * run's and its lanes'), in the middle of the run. Each batch still allocates a little of its own
     * (its lanes' tasks), so the bound is per stripe: less than 32 bytes, where one view or one array
     * per stripe would be 48 at least. A stripe's allocations would be in every batch; the batch at the
     * lower quartile leaves out those with a checkpoint (its superblocks) or other work of their own.
     */
    @ParameterizedTest(name = "members complete inline: {0}")
    @ValueSource(booleans = {true, false})
    void movingStripesAllocatesNothingPerStripe(boolean inline) throws Exception {
        int chunk = 16 << 10;
        long member = 40L << 20;
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            members.add(new KeptMember(member, "m" + i, inline));
        }
        Raid5Array.create(
                        ArraySpec.builder()
                                .chunkSize(chunk)
                                .memberDataBytes(32L << 20)
                                .assumeClean(true)
                                .build(),
                        members)
                .close();
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        int batchBytes = 1 << 20;
        int stripesPerBatch = batchBytes / chunk;
        long[] perBatch = new long[64];
        int[] batches = {0};
        long[][] last = {null};
        long[] ids = new long[8];
        int[] idCount = {0};
        try (OfflineReshape r = OfflineReshape.grow(members, List.of(new KeptMember(member, "new0", inline)))) {
            r.setBatchMemberBytes(batchBytes);
            assertTrue(r.run(() -> false, p -> {
                int b = batches[0]++;
                if (b == 2) { // the lanes have started by now: find them once (this allocates)
                    Thread[] all = new Thread[Thread.activeCount() + 8];
                    int n = Thread.enumerate(all);
                    ids[idCount[0]++] = Thread.currentThread().getId();
                    for (int i = 0; i < n && idCount[0] < ids.length; i++) {
                        if (all[i].getName().equals("reshape-lane")) {
                            ids[idCount[0]++] = all[i].getId();
                        }
                    }
                    last[0] = new long[idCount[0]];
                }
                if (b >= 2 && b - 2 < perBatch.length) {
                    long sum = 0;
                    for (int i = 0; i < idCount[0]; i++) {
                        long now = threads.getThreadAllocatedBytes(ids[i]);
                        sum += now - last[0][i];
                        last[0][i] = now;
                    }
                    if (b > 2) {
                        perBatch[b - 3] = sum;
                    }
                }
            }));
        }
        int measured = Math.min(batches[0] - 4, perBatch.length);
        assertTrue(measured >= 8, "batches measured: " + measured);
        long[] sorted = Arrays.copyOf(perBatch, measured);
        Arrays.sort(sorted);
        long quartile = sorted[measured / 4];
        System.out.println(
                "reshape (inline " + inline + "): " + quartile + " bytes allocated per batch of " + stripesPerBatch
                        + " stripes (lower quartile of " + measured + " batches, " + idCount[0] + " threads): "
                        + Arrays.toString(Arrays.copyOf(perBatch, measured)));
        assertTrue(
                quartile < 32L * stripesPerBatch,
                quartile + " bytes allocated per batch of " + stripesPerBatch + " stripes (lower quartile)");
    }

    /**
     * A memory member that outlives the array's close and says it completes inline (the lanes'
     * path), or not (as a device or a link would: the batch's I/O is sent at once).
     */
    private static final class KeptMember extends ForwardingAsyncDisk {
        private final boolean inline;

        KeptMember(long size, String name, boolean inline) {
            super(new MemoryDisk(size, name));
            this.inline = inline;
        }

        @Override
        public boolean completesInline() {
            return inline;
        }

        @Override
        public void close() {}
    }
}
