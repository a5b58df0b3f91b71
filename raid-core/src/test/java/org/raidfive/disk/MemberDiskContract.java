package org.raidfive.disk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link MemberDisk} contract, run over every implementation (one subclass each), in the way
 * JCTools runs one QueueSanityTest over every queue. The oracle is a flat byte[] image.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class MemberDiskContract {
    protected static final int SIZE = 8 * 1024 * 1024;
    private final List<MemberDisk> opened = new ArrayList<>();

    /** A fresh, zero-filled disk of exactly {@code size} bytes. */
    protected abstract MemberDisk create(long size) throws IOException;

    /** The transfer alignment the implementation needs (512 for O_DIRECT-style disks, else 1). */
    protected int alignment() {
        return 1;
    }

    protected MemberDisk disk(long size) throws IOException {
        MemberDisk d = create(size);
        opened.add(d);
        return d;
    }

    @AfterEach
    void closeAll() throws IOException {
        for (MemberDisk d : opened) {
            d.close();
        }
    }

    /** Heap, direct (page aligned) or a slice of a larger direct buffer, by {@code kind}. */
    private static ByteBuffer buffer(int kind, int size) {
        int rounded = (size + 4095) & ~4095;
        switch (kind % 3) {
            case 0:
                return ByteBuffer.allocate(size);
            case 1:
                return ByteBuffer.allocateDirect(rounded + 4096).alignedSlice(4096);
            default:
                return ByteBuffer.allocateDirect(rounded + 8192)
                        .position(4096)
                        .slice()
                        .alignedSlice(4096);
        }
    }

    @Test
    void reportsItsSizeAndStartsZeroed() throws IOException {
        MemberDisk d = disk(SIZE);
        assertEquals(SIZE, d.size());
        ByteBuffer b = ByteBuffer.allocate(65536);
        d.read(SIZE - 65536, b, 0, 65536);
        assertTrue(isZero(b.array()));
    }

    @Test
    void randomPositionalIoMatchesReferenceImage() throws IOException {
        long seed = System.nanoTime();
        System.out.println(getClass().getSimpleName() + " random I/O seed " + seed);
        Random random = new Random(seed);
        MemberDisk d = disk(SIZE);
        byte[] image = new byte[SIZE];
        int align = alignment();
        for (int op = 0; op < 400; op++) {
            int len = align * (1 + random.nextInt(128 * 1024 / align));
            long pos = (long) align * random.nextInt((SIZE - len) / align + 1);
            int off = align * random.nextInt(8);
            ByteBuffer b = buffer(op, off + len + 64);
            b.position(3);
            if (random.nextBoolean()) {
                byte[] data = new byte[len];
                random.nextBytes(data);
                b.put(off, data);
                d.write(pos, b, off, len);
                System.arraycopy(data, 0, image, (int) pos, len);
            } else {
                d.read(pos, b, off, len);
                byte[] got = new byte[len];
                b.get(off, got);
                byte[] want = new byte[len];
                System.arraycopy(image, (int) pos, want, 0, len);
                assertArrayEquals(want, got, "read at " + pos + " length " + len + " (seed " + seed + ")");
            }
            assertEquals(3, b.position(), "position is left alone");
        }
        byte[] all = new byte[SIZE];
        ByteBuffer whole = ByteBuffer.wrap(all);
        d.read(0, whole);
        assertEquals(SIZE, whole.position(), "the relative read advances the position to the limit");
        assertArrayEquals(image, all, "whole image (seed " + seed + ")");
    }

    @Test
    void concurrentPositionalIoFromManyThreads() throws Exception {
        long seed = System.nanoTime();
        System.out.println(getClass().getSimpleName() + " concurrency seed " + seed);
        MemberDisk d = disk(SIZE);
        int threads = 6;
        int region = SIZE / threads / 4096 * 4096;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<byte[]>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                results.add(pool.submit(() -> {
                    Random random = new Random(seed + id);
                    byte[] mine = new byte[region];
                    ByteBuffer b = buffer(id, 16384);
                    for (int op = 0; op < 300; op++) {
                        int len = 4096 * (1 + random.nextInt(4));
                        int pos = 4096 * random.nextInt((region - len) / 4096 + 1);
                        byte[] data = new byte[len];
                        random.nextBytes(data);
                        b.put(0, data);
                        d.write((long) id * region + pos, b, 0, len);
                        System.arraycopy(data, 0, mine, pos, len);
                        d.read((long) id * region + pos, b, 0, len);
                        byte[] back = new byte[len];
                        b.get(0, back);
                        assertArrayEquals(data, back, "thread " + id + " read-after-write at " + pos);
                    }
                    return mine;
                }));
            }
            for (int t = 0; t < threads; t++) {
                byte[] want = results.get(t).get();
                byte[] got = new byte[region];
                d.read((long) t * region, ByteBuffer.wrap(got), 0, region);
                assertArrayEquals(want, got, "region of thread " + t + " (seed " + seed + ")");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void outOfRangeIoIsRefusedAndWritesNothing() throws IOException {
        MemberDisk d = disk(SIZE);
        int a = Math.max(alignment(), 512);
        ByteBuffer b = buffer(1, 2 * a);
        for (int i = 0; i < 2 * a; i++) {
            b.put(i, (byte) 0x5a);
        }
        IOException e = assertThrows(java.io.EOFException.class, () -> d.write(SIZE - a, b, 0, 2 * a));
        assertTrue(
                e.getMessage().contains(Long.toString(SIZE - a))
                        && e.getMessage().contains(Long.toString(SIZE)),
                "message names offset and size: " + e.getMessage());
        assertThrows(java.io.EOFException.class, () -> d.read(SIZE, b, 0, a));
        assertThrows(java.io.EOFException.class, () -> d.read(-a, b, 0, a));
        ByteBuffer tail = buffer(1, a);
        d.read(SIZE - a, tail, 0, a);
        for (int i = 0; i < a; i++) {
            assertEquals(0, tail.get(i), "refused write left the last sector untouched");
        }
    }

    @Test
    void flushAndCloseBehave() throws IOException {
        MemberDisk d = disk(SIZE);
        ByteBuffer b = buffer(1, 4096);
        d.write(0, b, 0, 4096);
        d.flush();
        d.close();
        assertThrows(IOException.class, () -> d.read(0, b, 0, 4096));
        d.close();
    }

    @Test
    void largeTransfersCrossAnyInternalBoundary() throws IOException {
        MemberDisk d = disk(SIZE);
        Random random = new Random(7);
        byte[] data = new byte[3 * 1024 * 1024];
        random.nextBytes(data);
        ByteBuffer src = buffer(1, data.length);
        src.put(0, data);
        d.write(4096, src, 0, data.length);
        ByteBuffer dst = buffer(2, data.length);
        d.read(4096, dst, 0, data.length);
        byte[] got = new byte[data.length];
        dst.get(0, got);
        assertArrayEquals(data, got);
    }

    protected static boolean isZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    protected static Duration timeout() {
        return Duration.ofSeconds(60);
    }

    /**
     * Completion-based I/O ({@link AsyncDisk}, natively or through {@link AsyncDisk#of}): many
     * writes in flight at once from several threads land where they should, reads in flight at once
     * return them, every callback runs exactly once, and a range beyond the disk is reported to the
     * callback as an EOFException.
     */
    @Test
    void completionBasedIoManyInFlightMatchesAFlatImage() throws Exception {
        MemberDisk d = disk(SIZE);
        AsyncDisk a = AsyncDisk.of(d);
        int align = Math.max(alignment(), 4096);
        int blocks = SIZE / align;
        byte[] image = new byte[SIZE];
        new Random(77).nextBytes(image);
        java.util.concurrent.CountDownLatch wrote = new java.util.concurrent.CountDownLatch(blocks);
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ConcurrentLinkedQueue<Throwable> errors =
                new java.util.concurrent.ConcurrentLinkedQueue<>();
        IoCallback onWrite = (tag, error) -> {
            calls.incrementAndGet();
            if (error != null) {
                errors.add(error);
            }
            wrote.countDown();
        };
        ExecutorService submitters = Executors.newFixedThreadPool(4);
        List<Future<?>> jobs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int first = t;
            jobs.add(submitters.submit(() -> {
                for (int b = first; b < blocks; b += 4) {
                    ByteBuffer src = ByteBuffer.allocateDirect(align + 4096).alignedSlice(4096);
                    src.put(0, image, b * align, align);
                    a.writeAsync((long) b * align, src, 0, align, onWrite, b);
                }
                return null;
            }));
        }
        for (Future<?> f : jobs) {
            f.get();
        }
        assertTrue(wrote.await(60, java.util.concurrent.TimeUnit.SECONDS), "every write completed");
        assertTrue(errors.isEmpty(), "write errors: " + errors);
        assertEquals(blocks, calls.get(), "one callback per write");
        ByteBuffer[] back = new ByteBuffer[blocks];
        java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(blocks);
        for (int b = 0; b < blocks; b++) {
            back[b] = ByteBuffer.allocateDirect(align + 4096).alignedSlice(4096);
            a.readAsync(
                    (long) b * align,
                    back[b],
                    0,
                    align,
                    (tag, error) -> {
                        if (error != null) {
                            errors.add(error);
                        }
                        read.countDown();
                    },
                    b);
        }
        assertTrue(read.await(60, java.util.concurrent.TimeUnit.SECONDS), "every read completed");
        assertTrue(errors.isEmpty(), "read errors: " + errors);
        for (int b = 0; b < blocks; b++) {
            byte[] got = new byte[align];
            back[b].get(0, got);
            assertArrayEquals(java.util.Arrays.copyOfRange(image, b * align, (b + 1) * align), got, "block " + b);
        }
        java.util.concurrent.CompletableFuture<IOException> beyond = new java.util.concurrent.CompletableFuture<>();
        a.readAsync(
                SIZE,
                ByteBuffer.allocateDirect(align + 4096).alignedSlice(4096),
                0,
                align,
                (tag, error) -> beyond.complete(error),
                0);
        assertTrue(
                beyond.get(30, java.util.concurrent.TimeUnit.SECONDS) instanceof java.io.EOFException,
                "a range beyond the disk is an EOFException for the callback");
        submitters.shutdown();
    }
}
