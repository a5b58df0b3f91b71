package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Concurrent random reads and writes against an array, checked against a reference image of every
 * acknowledged write. Each thread owns the sectors {@code s} with {@code s % threads == id}, and
 * writes runs of 1-8 of its own sectors one by one, so the expected content stays exact while
 * writes of different threads share stripes. Reads of own sectors must return exactly what was
 * last written; a read that returns anything else is a silent corruption and fails the run.
 */
final class LoadGenerator implements AutoCloseable {
    private final Raid5Array array;
    private final byte[] image;
    private final int threads;
    private final long seed;
    private final ExecutorService pool;
    private final List<Future<Void>> futures = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong operations = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    private volatile boolean tolerateFailure;

    LoadGenerator(Raid5Array array, byte[] image, int threads, long seed) {
        this.array = array;
        this.image = image;
        this.threads = threads;
        this.seed = seed;
        this.pool = Executors.newFixedThreadPool(threads);
    }

    /** After this, I/O refused with ArrayFailedException stops a thread quietly instead of failing the run. */
    LoadGenerator tolerateArrayFailure() {
        tolerateFailure = true;
        return this;
    }

    LoadGenerator start() {
        int sectors = image.length / 512;
        for (int t = 0; t < threads; t++) {
            int id = t;
            futures.add(pool.submit(() -> {
                Random random = new Random(seed * 31 + id);
                ByteBuffer buf = ByteBuffer.allocateDirect(4096);
                byte[] data = new byte[512];
                byte[] got = new byte[512];
                while (!stop.get()) {
                    int sector = id + threads * random.nextInt(sectors / threads);
                    long off = (long) sector * 512;
                    try {
                        if (random.nextInt(3) == 0) {
                            array.read(off, buf, 0, 512);
                            buf.get(0, got);
                            synchronized (image) {
                                if (!Arrays.equals(got, 0, 512, image, (int) off, (int) off + 512)) {
                                    throw new AssertionError("silent corruption: sector " + sector
                                            + " read back wrong (seed " + seed + ")");
                                }
                            }
                        } else {
                            random.nextBytes(data);
                            buf.put(0, data);
                            array.write(off, buf, 0, 512);
                            synchronized (image) {
                                System.arraycopy(data, 0, image, (int) off, 512);
                            }
                        }
                        operations.incrementAndGet();
                    } catch (ArrayFailedException e) {
                        if (!tolerateFailure) {
                            throw e;
                        }
                        refused.incrementAndGet();
                        // A write refused after the array failed may or may not have reached the
                        // members before failing; its sector is no longer defined.
                        return null;
                    }
                }
                return null;
            }));
        }
        return this;
    }

    /** Waits until at least {@code n} more operations completed. */
    void awaitOperations(long n) throws Exception {
        long target = operations.get() + n;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (operations.get() < target) {
            checkFailures();
            if (System.nanoTime() > deadline) {
                throw new AssertionError("load made no progress: " + operations.get() + " of " + target);
            }
            Thread.sleep(1);
        }
    }

    private void checkFailures() throws Exception {
        for (Future<Void> f : futures) {
            if (f.isDone()) {
                f.get();
            }
        }
    }

    /** Stops the load and rethrows the first failure of any thread. */
    void stop() throws Exception {
        stop.set(true);
        try {
            for (Future<Void> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Override
    public void close() throws Exception {
        stop();
    }

    static byte[] fillRandom(Raid5Array array, long seed) throws IOException {
        byte[] image = new byte[(int) array.size()];
        new Random(seed).nextBytes(image);
        array.write(0, ByteBuffer.wrap(image), 0, image.length);
        return image;
    }
}
