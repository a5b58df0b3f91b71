package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.AsyncIo;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * Member I/O runs in parallel where the members are not memory: a stripe write issues its reads
 * together and its writes together, and completion-based reads through {@link AsyncIo} keep the
 * asked-for depth in flight on the members. Counted, not timed: each member counts the calls
 * running in it at once (members with 2 ms latency make overlap certain), and every byte is checked
 * against a flat image.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ParallelMemberIoTest {
    private static final long MEMBER = 4L << 20;
    private static final int CHUNK = 64 * 1024;

    /** Counts calls in flight on one member, and the most seen at once, across all members of an array. */
    static final class Counting extends ForwardingDisk {
        final FaultyDisk faulty;
        final AtomicInteger now;
        final AtomicInteger max;

        Counting(MemberDisk disk, AtomicInteger now, AtomicInteger max) {
            this(new FaultyDisk(disk), now, max);
        }

        private Counting(FaultyDisk faulty, AtomicInteger now, AtomicInteger max) {
            super(faulty);
            this.faulty = faulty;
            this.now = now;
            this.max = max;
        }

        void latency(long amount, TimeUnit unit) {
            faulty.latency(amount, unit);
        }

        private void enter() {
            max.accumulateAndGet(now.incrementAndGet(), Math::max);
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            enter();
            try {
                inner.read(position, dst, dstOffset, length);
            } finally {
                now.decrementAndGet();
            }
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            enter();
            try {
                inner.write(position, src, srcOffset, length);
            } finally {
                now.decrementAndGet();
            }
        }
    }

    @Test
    void aSmallWriteIssuesItsReadsTogetherAndItsWritesTogether() throws Exception {
        AtomicInteger now = new AtomicInteger();
        AtomicInteger max = new AtomicInteger();
        List<Counting> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(new Counting(new MemoryDisk(MEMBER), now, max));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            byte[] image = LoadGenerator.fillRandom(array, 3);
            for (Counting d : disks) {
                d.latency(2, TimeUnit.MILLISECONDS);
            }
            max.set(0);
            byte[] block = new byte[4096];
            new Random(4).nextBytes(block);
            array.write(8192, ByteBuffer.wrap(block), 0, 4096); // read-modify-write: 2 reads, then 2 writes
            System.arraycopy(block, 0, image, 8192, 4096);
            assertEquals(2, max.get(), "the old data and old parity were read at once, then both written at once");
            for (Counting d : disks) {
                d.latency(0, TimeUnit.MILLISECONDS);
            }
            ArrayOracle.assertArrayHolds(array, image);
        }
    }

    @Test
    void completionBasedReadsKeepTheDepthInFlightOnTheMembers() throws Exception {
        AtomicInteger now = new AtomicInteger();
        AtomicInteger max = new AtomicInteger();
        List<Counting> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(new Counting(new MemoryDisk(MEMBER), now, max));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            byte[] image = LoadGenerator.fillRandom(array, 5);
            for (Counting d : disks) {
                d.latency(2, TimeUnit.MILLISECONDS);
            }
            max.set(0);
            int depth = 32;
            int reads = 256;
            byte[][] got = new byte[reads][];
            long[] at = new long[reads];
            Random r = new Random(6);
            CountDownLatch done = new CountDownLatch(reads);
            AtomicInteger failures = new AtomicInteger();
            try (AsyncIo io = new AsyncIo(array, 1, depth)) {
                for (int i = 0; i < reads; i++) {
                    at[i] = 4096L * r.nextInt((int) (array.size() / 4096));
                    ByteBuffer b = ByteBuffer.allocateDirect(4096);
                    int n = i;
                    io.submitRead(
                            at[i],
                            b,
                            0,
                            4096,
                            new AsyncIo.Completion<Object>() {
                                @Override
                                public void completed(Object a) {
                                    got[n] = new byte[4096];
                                    b.get(0, got[n]);
                                    done.countDown();
                                }

                                @Override
                                public void failed(Object a, IOException e) {
                                    failures.incrementAndGet();
                                    done.countDown();
                                }
                            },
                            null);
                }
                assertTrue(done.await(60, TimeUnit.SECONDS));
            }
            assertEquals(0, failures.get());
            for (int i = 0; i < reads; i++) {
                assertArrayEquals(java.util.Arrays.copyOfRange(image, (int) at[i], (int) at[i] + 4096), got[i]);
            }
            assertTrue(
                    max.get() >= depth / 2,
                    "one AsyncIo worker kept " + max.get() + " member reads in flight " + "at once (asked for " + depth
                            + ")");
        }
    }

    /**
     * At a depth that saturates the I/O threads a stripe makes its member calls itself, one after
     * another ({@code MemberPhase}'s serial mode): writes and reads stay exact, also when a member
     * starts failing in the middle (its errors come back through the same calls).
     */
    @Test
    void writesAtADepthThatSaturatesTheIoThreadsStayExactWhenAMemberFails() throws Exception {
        AtomicInteger now = new AtomicInteger();
        AtomicInteger max = new AtomicInteger();
        List<Counting> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(new Counting(new MemoryDisk(MEMBER), now, max));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            byte[] image = LoadGenerator.fillRandom(array, 7);
            for (Counting d : disks) {
                d.latency(200, TimeUnit.MICROSECONDS);
            }
            int depth = 2 * org.raidfive.disk.IoThreads.saturation();
            long seed = System.nanoTime();
            System.out.println("writesAtADepthThatSaturatesTheIoThreads seed " + seed);
            Random r = new Random(seed);
            int blocks = (int) (array.size() / 4096);
            int writes = Math.min(4 * depth, blocks);
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < blocks; i++) {
                order.add(i);
            }
            java.util.Collections.shuffle(order, r); // each block written once: no two writes in flight overlap
            CountDownLatch done = new CountDownLatch(writes);
            AtomicInteger failures = new AtomicInteger();
            try (AsyncIo io = new AsyncIo(array, 1, depth)) {
                for (int i = 0; i < writes; i++) {
                    if (i == writes / 2) {
                        disks.get(1).faulty.failAfter(0); // every call on slot 1 fails from here on
                    }
                    long at = 4096L * order.get(i);
                    byte[] data = new byte[4096];
                    r.nextBytes(data);
                    System.arraycopy(data, 0, image, (int) at, 4096);
                    ByteBuffer b = ByteBuffer.wrap(data);
                    io.submitWrite(
                            at,
                            b,
                            0,
                            4096,
                            new AsyncIo.Completion<Object>() {
                                @Override
                                public void completed(Object a) {
                                    done.countDown();
                                }

                                @Override
                                public void failed(Object a, IOException e) {
                                    failures.incrementAndGet();
                                    done.countDown();
                                }
                            },
                            null);
                }
                assertTrue(done.await(60, TimeUnit.SECONDS));
            }
            assertEquals(0, failures.get(), "a degraded array takes every write");
            assertEquals(MemberState.FAULTY, array.core.table.slots[1].state);
            for (Counting d : disks) {
                d.latency(0, TimeUnit.MILLISECONDS);
            }
            ArrayOracle.assertArrayHolds(array, image);
        }
    }
}
