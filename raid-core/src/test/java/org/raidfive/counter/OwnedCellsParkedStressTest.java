package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Owned cells (PercpuRef's, and the rw-semaphore's readers) with four times more threads than
 * cores, some of them stopped inside their section for up to 2 ms, where a thread descheduled at
 * the worst moment stands. PercpuRef's sections stop after reading the mode as striped, either
 * before their store (a fold then misses it) or after it (a fold then counts it): each must settle
 * right, so awaitZero never returns while one of them goes on to hold a reference, never waits for
 * a reference nobody holds, and a switch to atomic never shows a count that misses one. The
 * rw-semaphore's readers stop likewise, before or after the store that counts their hold. Bounded in time; prints its
 * seed (rerun with -Draid.test.seed=N).
 */
class OwnedCellsParkedStressTest {
    private static final int THREADS = Math.max(8, 4 * Runtime.getRuntime().availableProcessors());
    private static final Duration BOUND = Duration.ofSeconds(60);

    @BeforeAll
    static void needsMembarrier() {
        assumeTrue(Membarrier.available(), () -> "membarrier unavailable: " + Membarrier.unavailableReason());
    }

    @Test
    void killAndAwaitZeroWaitForThreadsStoppedMidSection() {
        long seed = PercpuRefStressTest.seed("killAndAwaitZeroWaitForThreadsStoppedMidSection");
        PercpuRef c = PercpuRef.inflightOwned();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger slipped = new AtomicInteger();
        AtomicInteger timeouts = new AtomicInteger();
        AtomicLong stopsMidSection = new AtomicLong();
        int rounds = 200;
        AtomicInteger roundsRun = new AtomicInteger();
        assertTimeoutPreemptively(BOUND, () -> {
            try (Crowd crowd = new Crowd(seed, rnd -> {
                Runnable stop = pause(rnd, stopsMidSection);
                boolean early = rnd.nextBoolean();
                if (c.tryGetLivePausing(early ? stop : null, early ? null : stop)) {
                    inside.incrementAndGet();
                    for (int spin = rnd.nextInt(20); spin > 0; spin--) {
                        Thread.onSpinWait();
                    }
                    inside.decrementAndGet();
                    putPausing(c, rnd, stopsMidSection);
                }
            })) {
                // Rounds until enough sections have stopped midway (bounded): a thread that sees the
                // ref atomic opens no section, so the rounds rest between kills to let sections run.
                long deadline = System.nanoTime() + 30_000_000_000L;
                for (int round = 0;
                        (round < rounds || stopsMidSection.get() < 300) && System.nanoTime() < deadline;
                        round++) {
                    PercpuRefStressTest.removalRound(c, inside, slipped, timeouts);
                    roundsRun.incrementAndGet();
                    LockSupport.parkNanos(20_000);
                }
            }
        });
        System.out.println("  " + roundsRun.get() + " kills, " + stopsMidSection.get() + " sections stopped midway, "
                + THREADS + " threads on " + Runtime.getRuntime().availableProcessors() + " CPUs");
        assertEquals(0, timeouts.get(), "awaitZero timed out, seed " + seed);
        assertEquals(0, slipped.get(), "references held after awaitZero, seed " + seed);
        assertTrue(stopsMidSection.get() >= 300, "sections barely stopped midway: " + stopsMidSection.get());
        c.switchToAtomicSync();
        assertEquals(0, c.count());
    }

    @Test
    void everyAtomicCountCoversTheReferencesHeldAcrossIt() {
        long seed = PercpuRefStressTest.seed("everyAtomicCountCoversTheReferencesHeldAcrossIt");
        PercpuRef c = PercpuRef.inflightOwned();
        // Each thread bumps its generation after its get (odd: holding) and before its put (even):
        // a thread whose generation is the same odd number before and after the count was read held
        // its reference throughout, so the exact count must include it.
        AtomicLongArray generation = new AtomicLongArray(THREADS);
        AtomicInteger threadIds = new AtomicInteger();
        ThreadLocal<Integer> me = ThreadLocal.withInitial(threadIds::getAndIncrement);
        AtomicInteger low = new AtomicInteger();
        AtomicLong stopsMidSection = new AtomicLong();
        int flips = 600;
        AtomicInteger flipsRun = new AtomicInteger();
        assertTimeoutPreemptively(BOUND, () -> {
            try (Crowd crowd = new Crowd(seed, rnd -> {
                int i = me.get();
                Runnable stop = pause(rnd, stopsMidSection);
                boolean early = rnd.nextBoolean();
                if (c.tryGetLivePausing(early ? stop : null, early ? null : stop)) {
                    generation.incrementAndGet(i);
                    for (int spin = rnd.nextInt(50); spin > 0; spin--) {
                        Thread.onSpinWait();
                    }
                    generation.incrementAndGet(i);
                    putPausing(c, rnd, stopsMidSection);
                }
            })) {
                long[] before = new long[THREADS];
                long start = System.nanoTime();
                long deadline = start + 30_000_000_000L;
                for (int f = 0; (f < flips || stopsMidSection.get() < 300) && System.nanoTime() < deadline; f++) {
                    c.switchToAtomicSync();
                    for (int i = 0; i < THREADS; i++) {
                        before[i] = generation.get(i);
                    }
                    long n = c.exactCountOrMinusOne();
                    int heldThroughout = 0;
                    for (int i = 0; i < THREADS; i++) {
                        long after = generation.get(i);
                        if (after == before[i] && (after & 1) != 0) {
                            heldThroughout++;
                        }
                    }
                    if (n < heldThroughout || n > THREADS) {
                        low.incrementAndGet();
                    }
                    c.switchToPercpu();
                    flipsRun.incrementAndGet();
                    if ((f & 3) == 0) {
                        LockSupport.parkNanos(20_000); // let sections run striped (atomic: none open)
                    }
                }
                System.out.printf(
                        "  %d flips in %.1f s, %d sections stopped midway%n",
                        flipsRun.get(), (System.nanoTime() - start) / 1e9, stopsMidSection.get());
            }
        });
        assertEquals(0, low.get(), "atomic counts below the references held (or above the threads), seed " + seed);
        assertTrue(stopsMidSection.get() >= 300, "sections barely stopped midway: " + stopsMidSection.get());
        c.switchToAtomicSync();
        assertEquals(0, c.count(), "seed " + seed);
    }

    @Test
    void aWriterNeverRunsBesideAReaderStoppedMidSection() {
        long seed = PercpuRefStressTest.seed("aWriterNeverRunsBesideAReaderStoppedMidSection");
        PercpuRwSemaphore sem = new PercpuRwSemaphore(8, 256, true);
        long[] pair = new long[2]; // written under the write lock only; read under the read lock
        AtomicBoolean writing = new AtomicBoolean(); // true while the writer is inside
        AtomicInteger torn = new AtomicInteger();
        AtomicLong stopsMidSection = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        AtomicLong writes = new AtomicLong();
        assertTimeoutPreemptively(BOUND, () -> {
            try (Crowd crowd = new Crowd(seed, rnd -> {
                Runnable stop = pause(rnd, stopsMidSection);
                boolean early = rnd.nextBoolean();
                sem.readLockPausing(early ? stop : null, early ? null : stop);
                try {
                    long a = pair[0];
                    for (int spin = rnd.nextInt(20); spin > 0; spin--) {
                        Thread.onSpinWait();
                    }
                    if (a != pair[1] || writing.get()) {
                        torn.incrementAndGet();
                    }
                    reads.incrementAndGet();
                } finally {
                    sem.readUnlock();
                }
            })) {
                // Writes until enough reader sections have stopped midway (bounded): writers are
                // preferred, so the writer rests between writes to let readers in.
                long deadline = System.nanoTime() + 30_000_000_000L;
                while ((stopsMidSection.get() < 500 || writes.get() < 1_000) && System.nanoTime() < deadline) {
                    sem.writeLock();
                    try {
                        writing.set(true);
                        pair[0]++;
                        for (int spin = 0; spin < 200; spin++) {
                            Thread.onSpinWait();
                        }
                        pair[1]++;
                        writing.set(false);
                    } finally {
                        sem.writeUnlock();
                    }
                    writes.incrementAndGet();
                    LockSupport.parkNanos(20_000);
                }
            }
        });
        System.out.println("  " + writes.get() + " writes, " + reads.get() + " reads, " + stopsMidSection.get()
                + " reader sections stopped midway");
        assertEquals(0, torn.get(), "readers saw the writer inside or its pair half written, seed " + seed);
        assertEquals(writes.get(), pair[0]);
        assertTrue(stopsMidSection.get() >= 500, "sections barely stopped midway: " + stopsMidSection.get());
    }

    /** A put whose section may stop before its store or after it (see {@link #pause}). */
    private static void putPausing(PercpuRef c, SplittableRandom rnd, AtomicLong stops) {
        Runnable stop = pause(rnd, stops);
        boolean early = rnd.nextBoolean();
        c.putPausing(early ? stop : null, early ? null : stop);
    }

    /** Mostly nothing; now and then a yield or a park of up to 2 ms inside the section. */
    private static Runnable pause(SplittableRandom rnd, AtomicLong stops) {
        int r = rnd.nextInt(256);
        if (r == 0) {
            long nanos = 100_000 + rnd.nextLong(1_900_000);
            return () -> {
                stops.incrementAndGet();
                LockSupport.parkNanos(nanos);
            };
        }
        if (r < 8) {
            return () -> {
                stops.incrementAndGet();
                Thread.yield();
            };
        }
        return null;
    }

    interface Step {
        void run(SplittableRandom rnd);
    }

    /** {@link #THREADS} threads repeating a step until closed; a failure is rethrown by close. */
    private static final class Crowd implements AutoCloseable {
        private final Thread[] threads = new Thread[THREADS];
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Crowd(long seed, Step step) {
            for (int i = 0; i < THREADS; i++) {
                SplittableRandom rnd = new SplittableRandom(seed + i);
                threads[i] = new Thread(
                        () -> {
                            while (!stop.get()) {
                                step.run(rnd);
                            }
                        },
                        "crowd-" + i);
                threads[i].setUncaughtExceptionHandler((t, e) -> failure.compareAndSet(null, e));
                threads[i].setDaemon(true);
                threads[i].start();
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("worker failed", failure.get());
            }
        }
    }
}
