package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.AsyncIo;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

@Timeout(120)
class AsyncIoTest {
    private static final int BLOCK = 4096;

    /** Counts the completions of a batch and remembers the first failure. */
    private static final class Batch implements AsyncIo.Completion<Integer> {
        final CountDownLatch done;
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final ConcurrentLinkedQueue<Integer> completed = new ConcurrentLinkedQueue<>();

        Batch(int count) {
            done = new CountDownLatch(count);
        }

        @Override
        public void completed(Integer attachment) {
            completed.add(attachment);
            done.countDown();
        }

        @Override
        public void failed(Integer attachment, IOException e) {
            error.compareAndSet(null, e);
            done.countDown();
        }

        void await() throws InterruptedException {
            assertTrue(done.await(60, TimeUnit.SECONDS), "batch did not complete");
            assertNull(error.get(), () -> "a request failed: " + error.get());
        }
    }

    @Test
    void asyncWritesAndReadsThroughAnArrayMatchAReferenceImage() throws Exception {
        long seed = System.nanoTime();
        System.out.println("AsyncIoTest seed " + seed);
        Random random = new Random(seed);
        List<MemberDisk> members = ArrayDataTest.memoryMembers(4, 2L << 20);
        ArraySpec spec =
                ArraySpec.builder().chunkSize(16 * 1024).assumeClean(true).build();
        try (Raid5Array array = Raid5Array.create(spec, members);
                AsyncIo io = new AsyncIo(array, 3, 32)) {
            int blocks = (int) (array.size() / BLOCK);
            byte[] image = new byte[blocks * BLOCK];
            ByteBuffer[] buffers = new ByteBuffer[blocks];
            for (int round = 0; round < 4; round++) {
                // One round writes every block once, from its own buffer: requests in flight never overlap.
                List<Integer> order = shuffled(blocks, random);
                Batch batch = new Batch(blocks);
                for (int b : order) {
                    byte[] data = new byte[BLOCK];
                    random.nextBytes(data);
                    System.arraycopy(data, 0, image, b * BLOCK, BLOCK);
                    buffers[b] = ByteBuffer.allocateDirect(BLOCK).put(0, data);
                    io.submitWrite((long) b * BLOCK, buffers[b], 0, BLOCK, batch, b);
                }
                batch.await();
                assertEquals(blocks, batch.completed.size());
            }
            Batch reads = new Batch(blocks);
            for (int b : shuffled(blocks, random)) {
                buffers[b] = ByteBuffer.allocate(BLOCK + 8);
                io.submitRead((long) b * BLOCK, buffers[b], 8, BLOCK, reads, b);
            }
            reads.await();
            for (int b = 0; b < blocks; b++) {
                byte[] got = new byte[BLOCK];
                buffers[b].get(8, got);
                assertArrayEquals(java.util.Arrays.copyOfRange(image, b * BLOCK, (b + 1) * BLOCK), got, "block " + b);
            }
            // The synchronous path reads the same bytes: the writes really reached the array.
            ByteBuffer all = ByteBuffer.allocate(image.length);
            array.read(0, all, 0, image.length);
            assertArrayEquals(image, all.array());
        }
    }

    @Test
    void manyRequestsAreInFlightAtOnceAndTheSubmitterBoundHolds() throws Exception {
        GatedDisk disk = new GatedDisk(new MemoryDisk(1 << 20));
        try (AsyncIo io = new AsyncIo(disk, 4, 64)) {
            AsyncIo.Submitter submitter = io.submitter(24);
            Batch batch = new Batch(40);
            Thread producer = new Thread(() -> {
                try {
                    for (int i = 0; i < 40; i++) {
                        submitter.submitRead((long) i * BLOCK, ByteBuffer.allocateDirect(BLOCK), 0, BLOCK, batch, i);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            producer.start();
            // All four workers block inside the disk; the other 20 of the submitter's 24 wait queued.
            assertTrue(disk.awaitEntered(4), "every worker runs a request at once");
            waitUntil(() -> submitter.inFlight() == 24);
            producer.join(200);
            assertTrue(producer.isAlive(), "the 25th submit waits for a slot while 24 are in flight");
            assertEquals(24, io.inFlight());
            assertEquals(4, disk.peakConcurrent.get(), "no more requests run than there are workers");
            disk.open();
            batch.await();
            producer.join();
            assertEquals(40, batch.completed.size());
            // A slot is given back just after its completion runs: wait for the counts to settle.
            waitUntil(() -> submitter.inFlight() == 0 && io.inFlight() == 0);
        }
    }

    @Test
    void closeWaitsForEveryAcceptedRequestAndThenRefusesSubmits() throws Exception {
        GatedDisk disk = new GatedDisk(new MemoryDisk(1 << 20));
        AsyncIo io = new AsyncIo(disk, 2, 16);
        Batch batch = new Batch(16);
        for (int i = 0; i < 16; i++) {
            io.submitWrite((long) i * BLOCK, ByteBuffer.allocateDirect(BLOCK), 0, BLOCK, batch, i);
        }
        assertTrue(disk.awaitEntered(2));
        Thread closer = new Thread(() -> {
            try {
                io.close();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        closer.start();
        closer.join(200);
        assertTrue(closer.isAlive(), "close waits while requests are in flight");
        disk.open();
        closer.join();
        assertEquals(16, batch.completed.size(), "every accepted request completed before close returned");
        assertEquals(0, io.inFlight());
        assertThrows(
                IllegalStateException.class, () -> io.submitRead(0, ByteBuffer.allocate(BLOCK), 0, BLOCK, batch, 99));
        io.close(); // idempotent
        disk.inner().read(0, ByteBuffer.allocate(BLOCK)); // the disk stays open
    }

    @Test
    void completionsCanChainTheNextRequestAndFailuresReachTheCallback() throws Exception {
        MemoryDisk disk = new MemoryDisk(1 << 20);
        try (AsyncIo io = new AsyncIo(disk, 2, 4)) {
            AsyncIo.Submitter submitter = io.submitter(1);
            int total = 10_000;
            AtomicInteger done = new AtomicInteger();
            CountDownLatch finished = new CountDownLatch(1);
            ByteBuffer buf = ByteBuffer.allocateDirect(BLOCK);
            AsyncIo.Completion<ByteBuffer> chain = new AsyncIo.Completion<>() {
                @Override
                public void completed(ByteBuffer b) {
                    int n = done.incrementAndGet();
                    if (n == total) {
                        finished.countDown();
                        return;
                    }
                    try {
                        submitter.submitRead((long) (n % 256) * BLOCK, b, 0, BLOCK, this, b);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }

                @Override
                public void failed(ByteBuffer b, IOException error) {
                    throw new AssertionError(error);
                }
            };
            submitter.submitRead(0, buf, 0, BLOCK, chain, buf);
            assertTrue(finished.await(60, TimeUnit.SECONDS));
            assertEquals(total, done.get());

            Batch bad = new Batch(1);
            io.submitRead(disk.size(), ByteBuffer.allocate(BLOCK), 0, BLOCK, bad, 0);
            assertTrue(bad.done.await(10, TimeUnit.SECONDS));
            assertInstanceOf(EOFException.class, bad.error.get(), "reading past the end fails with EOF");
        }
        assertThrows(IndexOutOfBoundsException.class, () -> {
            try (AsyncIo io = new AsyncIo(disk, 1, 1)) {
                io.submitRead(0, ByteBuffer.allocate(10), 8, BLOCK, new Batch(1), 0);
            }
        });
    }

    /** An array under AsyncIo reports refusals as a member would, each said once. */
    @Test
    void refusalsThroughAnArrayAreEofForRangeAndSaidOnce() throws Exception {
        List<MemberDisk> members = ArrayDataTest.memoryMembers(4, 2L << 20);
        try (Raid5Array array = Raid5Array.create(
                        ArraySpec.builder()
                                .chunkSize(16 * 1024)
                                .assumeClean(true)
                                .name("edge")
                                .build(),
                        members);
                AsyncIo io = new AsyncIo(array, 2, 8)) {
            Batch beyond = new Batch(1);
            io.submitWrite(array.size(), ByteBuffer.allocateDirect(BLOCK), 0, BLOCK, beyond, 0);
            assertTrue(beyond.done.await(10, TimeUnit.SECONDS));
            assertInstanceOf(EOFException.class, beyond.error.get(), "a write past the array's end is EOF");

            Batch misaligned = new Batch(1);
            io.submitRead(100, ByteBuffer.allocateDirect(BLOCK), 0, 512, misaligned, 0);
            assertTrue(misaligned.done.await(10, TimeUnit.SECONDS));
            String message = misaligned.error.get().getMessage();
            assertEquals(
                    message.indexOf(array.name()),
                    message.lastIndexOf(array.name()),
                    "the array is named once: " + message);
            assertTrue(message.contains("not aligned"), message);
        }
    }

    @Test
    void steadyStateSubmitAndCompleteAllocateNothing() throws Exception {
        MemoryDisk disk = new MemoryDisk(1 << 20);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (AsyncIo io = new AsyncIo(disk, 2, 8)) {
            AsyncIo.Submitter submitter = io.submitter(8);
            ByteBuffer buf = ByteBuffer.allocateDirect(BLOCK);
            AtomicInteger completed = new AtomicInteger();
            AsyncIo.Completion<Object> counter = new AsyncIo.Completion<>() {
                @Override
                public void completed(Object attachment) {
                    completed.incrementAndGet();
                }

                @Override
                public void failed(Object attachment, IOException error) {
                    throw new AssertionError(error);
                }
            };
            Object token = new Object();
            int warm = 50_000;
            for (int i = 0; i < warm; i++) {
                submitter.submitRead(0, buf, 0, 512, counter, token);
            }
            waitUntil(() -> completed.get() == warm);
            long[] ids = workerIds();
            long before = threads.getCurrentThreadAllocatedBytes();
            long workersBefore = sum(threads.getThreadAllocatedBytes(ids));
            int n = 100_000;
            for (int i = 0; i < n; i++) {
                submitter.submitRead(0, buf, 0, 512, counter, token);
            }
            waitUntil(() -> completed.get() == warm + n);
            long submitBytes = threads.getCurrentThreadAllocatedBytes() - before;
            long workerBytes = sum(threads.getThreadAllocatedBytes(ids)) - workersBefore;
            System.out.println("AsyncIo allocation over " + n + " requests: submitter " + submitBytes + " B, workers "
                    + workerBytes + " B");
            // Less than one byte per request: a per-request allocation would be at least 16 bytes each.
            assertTrue(submitBytes < n, "submitter allocated " + submitBytes + " bytes");
            assertTrue(workerBytes < n, "workers allocated " + workerBytes + " bytes");
        }
    }

    private static long[] workerIds() {
        List<Long> ids = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("asyncio-")) {
                ids.add(t.getId());
            }
        }
        assertFalse(ids.isEmpty());
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    private static long sum(long[] values) {
        long s = 0;
        for (long v : values) {
            s += Math.max(0, v);
        }
        return s;
    }

    private static List<Integer> shuffled(int n, Random random) {
        List<Integer> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(i);
        }
        java.util.Collections.shuffle(list, random);
        return list;
    }

    private static void waitUntil(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not reached within 60 s");
            }
            Thread.sleep(1);
        }
    }

    /** Holds every I/O at a gate until {@link #open()}, counting how many wait there at once. */
    private static final class GatedDisk extends ForwardingDisk {
        final CountDownLatch gate = new CountDownLatch(1);
        final AtomicInteger concurrent = new AtomicInteger();
        final AtomicInteger peakConcurrent = new AtomicInteger();

        GatedDisk(MemberDisk delegate) {
            super(delegate);
        }

        void open() {
            gate.countDown();
        }

        boolean awaitEntered(int n) throws InterruptedException {
            waitUntil(() -> concurrent.get() >= n);
            return true;
        }

        private void pass() throws IOException {
            peakConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
            try {
                if (!gate.await(60, TimeUnit.SECONDS)) {
                    throw new IOException("gate never opened");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException();
            } finally {
                concurrent.decrementAndGet();
            }
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            pass();
            inner.read(position, dst, dstOffset, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            pass();
            inner.write(position, src, srcOffset, length);
        }

        @Override
        public String name() {
            return "gated " + inner.name();
        }
    }
}
