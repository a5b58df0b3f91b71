package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.MemberDisk;

/**
 * The {@link MemberDisk} contract, checked against a flat {@code byte[]} reference image: one
 * subclass per implementation (JCTools' QueueSanityTest pattern). Random runs print their seed;
 * rerun one with {@code -Dnbd.seed=N}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
abstract class MemberDiskContractChecks {
    static final long SIZE = 8L << 20;

    @TempDir
    Path tmp;
    MemberDisk disk;

    /** A fresh, zero-filled disk of {@code size} bytes. */
    abstract MemberDisk open(long size) throws Exception;

    /** Releases whatever {@link #open} started (servers, processes). */
    void cleanUp() throws Exception {
    }

    @BeforeEach
    void openDisk() throws Exception {
        disk = open(SIZE);
    }

    @AfterEach
    void closeDisk() throws Exception {
        try {
            disk.close();
        } finally {
            cleanUp();
        }
    }

    static long seed() {
        String fixed = System.getProperty("nbd.seed");
        long seed = fixed != null ? Long.parseLong(fixed) : System.nanoTime();
        System.out.println("seed=" + seed + " (rerun with -Dnbd.seed=" + seed + ")");
        return seed;
    }

    @Test
    void startsZeroedWithItsSize() throws IOException {
        assertEquals(SIZE, disk.size());
        assertArrayEquals(new byte[(int) SIZE], readAll(disk));
    }

    @Test
    void randomPositionalWritesMatchAFlatReference() throws IOException {
        long seed = seed();
        Random random = new Random(seed);
        byte[] reference = new byte[(int) SIZE];
        for (int op = 0; op < 400; op++) {
            int length = randomLength(random);
            long position = (long) (random.nextDouble() * (SIZE - length + 1));
            ByteBuffer buffer = randomBuffer(random, length);
            int offset = buffer.position();
            int savedLimit = buffer.limit();
            String what = "seed " + seed + " op " + op + " at " + position + " length " + length;
            if (random.nextInt(3) > 0) {
                byte[] data = new byte[length];
                random.nextBytes(data);
                buffer.put(offset, data);
                disk.write(position, buffer, offset, length);
                System.arraycopy(data, 0, reference, (int) position, length);
            } else {
                disk.read(position, buffer, offset, length);
                byte[] got = new byte[length];
                buffer.get(offset, got);
                assertArrayEquals(Arrays.copyOfRange(reference, (int) position, (int) position + length), got, what);
            }
            assertEquals(offset, buffer.position(), "position restored, " + what);
            assertEquals(savedLimit, buffer.limit(), "limit restored, " + what);
        }
        assertArrayEquals(reference, readAll(disk), "whole image, seed " + seed);
    }

    @Test
    void concurrentWritersOnDisjointRegionsMatchTheReference() throws Exception {
        long seed = seed();
        int threads = 4;
        long region = SIZE / threads;
        byte[] reference = new byte[(int) SIZE];
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                results.add(pool.submit(() -> {
                    Random random = new Random(seed + id);
                    long base = id * region;
                    for (int op = 0; op < 300; op++) {
                        int length = 1 + random.nextInt(64 * 1024);
                        long position = base + (long) (random.nextDouble() * (region - length + 1));
                        ByteBuffer buffer = randomBuffer(random, length);
                        int offset = buffer.position();
                        if (random.nextBoolean()) {
                            byte[] data = new byte[length];
                            random.nextBytes(data);
                            buffer.put(offset, data);
                            disk.write(position, buffer, offset, length);
                            System.arraycopy(data, 0, reference, (int) position, length);
                        } else {
                            disk.read(position, buffer, offset, length);
                            byte[] got = new byte[length];
                            buffer.get(offset, got);
                            assertArrayEquals(Arrays.copyOfRange(reference, (int) position, (int) position + length),
                                    got, "thread " + id + " op " + op + " seed " + seed);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> result : results) {
                result.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertArrayEquals(reference, readAll(disk), "whole image, seed " + seed);
    }

    @Test
    void outOfRangeCallsThrowEofException() throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(16);
        assertThrows(EOFException.class, () -> disk.read(SIZE - 1, buffer, 0, 2));
        assertThrows(EOFException.class, () -> disk.write(SIZE, buffer, 0, 1));
        assertThrows(EOFException.class, () -> disk.read(-1, buffer, 0, 1));
        assertThrows(EOFException.class, () -> disk.write(Long.MAX_VALUE, buffer, 0, 16));
        disk.read(SIZE, buffer, 0, 0);
        disk.write(SIZE - 16, buffer, 0, 16);
        disk.read(SIZE - 16, buffer, 0, 16);
    }

    @Test
    void defaultMethodsAdvanceTheBufferPosition() throws IOException {
        ByteBuffer src = ByteBuffer.allocate(100);
        for (int i = 0; i < 100; i++) {
            src.put(i, (byte) i);
        }
        src.position(10);
        disk.write(4096, src);
        assertEquals(100, src.position());
        ByteBuffer dst = ByteBuffer.allocateDirect(90);
        disk.read(4096, dst);
        assertEquals(90, dst.position());
        for (int i = 0; i < 90; i++) {
            assertEquals((byte) (i + 10), dst.get(i));
        }
    }

    @Test
    void flushAfterWritesSucceeds() throws IOException {
        disk.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}), 0, 3);
        disk.flush();
    }

    @Test
    void closeIsIdempotentAndLaterCallsFail() throws IOException {
        disk.close();
        disk.close();
        assertThrows(IOException.class, () -> disk.read(0, ByteBuffer.allocate(8), 0, 8));
        assertThrows(IOException.class, () -> disk.write(0, ByteBuffer.allocate(8), 0, 8));
    }

    private static int randomLength(Random random) {
        switch (random.nextInt(10)) {
            case 0: return 1 + random.nextInt(16);
            case 1: return 1 + random.nextInt(1 << 20);
            default: return 1 + random.nextInt(64 * 1024);
        }
    }

    /** Heap or direct, with the data at a random offset inside a larger buffer; position = offset. */
    static ByteBuffer randomBuffer(Random random, int length) {
        int offset = random.nextInt(64);
        int capacity = offset + length + random.nextInt(64);
        ByteBuffer buffer = random.nextBoolean() ? ByteBuffer.allocate(capacity) : ByteBuffer.allocateDirect(capacity);
        return buffer.position(offset);
    }

    static byte[] readAll(MemberDisk disk) throws IOException {
        if (disk.size() > Integer.MAX_VALUE) {
            fail("disk too large for readAll");
        }
        byte[] image = new byte[(int) disk.size()];
        ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
        for (long at = 0; at < disk.size(); at += chunk.capacity()) {
            int n = (int) Math.min(chunk.capacity(), disk.size() - at);
            disk.read(at, chunk, 0, n);
            chunk.get(0, image, (int) at, n);
        }
        return image;
    }
}
