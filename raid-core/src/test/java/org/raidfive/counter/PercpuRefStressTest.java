package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Timed multi-threaded runs of {@link PercpuRef} against mode switches,
 * kills and concurrent switchers. Every run is bounded (a hang fails with
 * the test name) and prints its seed; rerun one with -Draid.test.seed=N.
 */
class PercpuRefStressTest {
    static final int WORKERS = 3;
    private static final int MAX_HELD = 8;
    private static final Duration BOUND = Duration.ofSeconds(40);

    @ParameterizedTest
    @EnumSource(
            value = CounterMode.class,
            names = {"PERCPU", "PERCPU_SHARED"})
    void hundredThousandModeFlipsUnderLoadLoseNothing(CounterMode mode) {
        long seed = seed("hundredThousandModeFlipsUnderLoadLoseNothing " + mode);
        PercpuRef c = PercpuRef.inflightCounter(mode);
        AtomicLong badCounts = new AtomicLong();
        AtomicLong flips = new AtomicLong();
        AtomicLong ops = new AtomicLong();
        assertTimeoutPreemptively(BOUND, () -> {
            Workers w = new Workers(seed, (rnd, stop) -> randomWalk(c, rnd, stop, ops));
            // On a loaded 2-core machine the flips can finish before the workers are scheduled much:
            // keep flipping (within the bound) until the workers did enough to overlap them.
            long giveUpAt = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            for (int i = 0; i < 100_000 || (ops.get() <= 100_000 && System.nanoTime() < giveUpAt); i++) {
                c.switchToAtomicSync();
                long n = c.count(); // exact: only in-flight walkers' references
                if (n < 0 || n > (long) WORKERS * MAX_HELD) {
                    badCounts.incrementAndGet();
                }
                c.switchToPercpu();
                flips.incrementAndGet();
            }
            w.stopAndJoin();
        });
        c.switchToAtomicSync();
        assertEquals(0, badCounts.get(), "counts out of range while atomic");
        assertEquals(0, c.count(), "final count after 100k flips, seed " + seed);
        assertTrue(c.isZero());
        assertTrue(flips.get() >= 100_000, "flips: " + flips.get());
        System.out.println("  " + ops.get() + " worker get/put operations overlapped " + flips.get() + " flips");
        assertTrue(ops.get() > 100_000, "workers barely ran: " + ops.get());
    }

    @ParameterizedTest
    @EnumSource(
            value = CounterMode.class,
            names = {"PERCPU", "PERCPU_SHARED"})
    void twoSwitchersAtOnceLoseNothing(CounterMode mode) {
        long seed = seed("twoSwitchersAtOnceLoseNothing " + mode);
        PercpuRef c = PercpuRef.inflightCounter(mode);
        assertTimeoutPreemptively(BOUND, () -> {
            Workers w = new Workers(seed, (rnd, stop) -> randomWalk(c, rnd, stop, new AtomicLong()));
            PercpuRefContract.runThreads(2, id -> {
                for (int i = 0; i < 25_000; i++) {
                    c.switchToAtomicSync();
                    if (id == 0) {
                        c.switchToPercpu();
                    } else {
                        c.switchToAtomic(x -> {});
                        c.switchToPercpu();
                    }
                }
            });
            w.stopAndJoin();
        });
        c.switchToAtomicSync();
        assertEquals(0, c.count(), "seed " + seed);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void releaseRunsExactlyOnceAndNeverEarlyWhenKilledDuringFlipsAndLoad(boolean ownedCells) {
        assumeTrue(!ownedCells || Membarrier.available(), "membarrier unavailable");
        for (int round = 0; round < 20; round++) {
            long seed =
                    seed("releaseRunsExactlyOnceAndNeverEarly round " + round + (ownedCells ? " owned" : " shared"));
            AtomicInteger releases = new AtomicInteger();
            AtomicLongArray held = new AtomicLongArray(WORKERS);
            AtomicInteger early = new AtomicInteger();
            AtomicInteger liveAfterConfirm = new AtomicInteger();
            AtomicInteger confirmed = new AtomicInteger();
            Consumer<PercpuRef> release = x -> {
                if (releases.incrementAndGet() != 1) {
                    early.incrementAndGet();
                }
                for (int i = 0; i < WORKERS; i++) {
                    if (held.get(i) != 0) {
                        early.incrementAndGet();
                    }
                }
            };
            PercpuRef r =
                    ownedCells ? PercpuRef.createOwned(release) : PercpuRef.create(release, PaddedWords.defaultSlots());
            assertTimeoutPreemptively(BOUND, () -> {
                Workers w = new Workers(seed, (rnd, stop) -> {
                    int me = rnd.id;
                    int mine = 0;
                    while (true) {
                        boolean afterConfirm = confirmed.get() != 0;
                        if (mine < MAX_HELD && r.tryGetLive()) {
                            if (afterConfirm) {
                                liveAfterConfirm.incrementAndGet();
                            }
                            held.incrementAndGet(me);
                            mine++;
                        } else if (mine == 0) {
                            if (afterConfirm) {
                                return; // killed and nothing held: done
                            }
                        }
                        if (mine > 0 && (rnd.nextInt(3) == 0 || mine == MAX_HELD || afterConfirm)) {
                            held.decrementAndGet(me);
                            mine--;
                            if (releases.get() != 0) {
                                early.incrementAndGet(); // we still hold a reference
                            }
                            r.put();
                        }
                    }
                });
                SplittableRandom rnd = new SplittableRandom(seed);
                int flips = 200 + rnd.nextInt(2000);
                for (int i = 0; i < flips; i++) {
                    r.switchToAtomicSync();
                    r.switchToPercpu();
                }
                r.killAndConfirm(x -> confirmed.set(1));
                w.join();
            });
            assertEquals(1, releases.get(), "releases, seed " + seed);
            assertEquals(0, early.get(), "early or repeated release, seed " + seed);
            assertEquals(0, liveAfterConfirm.get(), "tryGetLive succeeded after kill confirmation, seed " + seed);
            assertTrue(r.isZero());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = CounterMode.class,
            names = {"PERCPU", "PERCPU_SHARED"})
    void memberRemovalProtocolNeverLetsAnOperationSlipPastAwaitZero(CounterMode mode) {
        long seed = seed("memberRemovalProtocolNeverLetsAnOperationSlipPastAwaitZero " + mode);
        PercpuRef c = PercpuRef.inflightCounter(mode);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger slipped = new AtomicInteger();
        AtomicInteger timeouts = new AtomicInteger();
        assertTimeoutPreemptively(BOUND, () -> {
            Workers w = new Workers(seed, (rnd, stop) -> {
                while (!stop.get()) {
                    if (c.tryGetLive()) {
                        inside.incrementAndGet();
                        for (int spin = rnd.nextInt(50); spin > 0; spin--) {
                            Thread.onSpinWait();
                        }
                        inside.decrementAndGet();
                        c.put();
                    }
                }
            });
            for (int round = 0; round < 3_000; round++) {
                removalRound(c, inside, slipped, timeouts);
            }
            w.stopAndJoin();
        });
        assertEquals(0, timeouts.get());
        assertEquals(0, slipped.get(), "operations inside after awaitZero, seed " + seed);
        c.switchToAtomicSync();
        assertEquals(0, c.count());
    }

    @ParameterizedTest
    @EnumSource(
            value = CounterMode.class,
            names = {"PERCPU", "PERCPU_SHARED"})
    void quiesceOfStripedCounterSeesEveryStartedOperation(CounterMode mode) {
        // The engine's quiesce: stop new work (here: a flag), switch to atomic, await zero, switch back.
        long seed = seed("quiesceOfStripedCounterSeesEveryStartedOperation " + mode);
        PercpuRef c = PercpuRef.inflightCounter(mode);
        PercpuRwSemaphore gate = new PercpuRwSemaphore(mode == CounterMode.PERCPU);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger slipped = new AtomicInteger();
        assertTimeoutPreemptively(BOUND, () -> {
            Workers w = new Workers(seed, (rnd, stop) -> {
                while (!stop.get()) {
                    gate.readLock(); // config read side, as Raid5Array will
                    c.get();
                    gate.readUnlock();
                    inside.incrementAndGet();
                    inside.decrementAndGet();
                    c.put();
                }
            });
            for (int round = 0; round < 2_000; round++) {
                gate.writeLock();
                c.switchToAtomicSync();
                if (!c.awaitZero(Duration.ofSeconds(10)) || inside.get() != 0) {
                    slipped.incrementAndGet();
                }
                c.switchToPercpu();
                gate.writeUnlock();
            }
            w.stopAndJoin();
        });
        assertEquals(0, slipped.get(), "seed " + seed);
        c.switchToAtomicSync();
        assertEquals(0, c.count());
    }

    /**
     * One round of the member-removal protocol: kill, await zero (a timeout counts in {@code timeouts}),
     * then look 20 times that no operation is {@code inside} and the count is still zero (each miss
     * counts in {@code slipped}), and resurrect.
     */
    static void removalRound(PercpuRef c, AtomicInteger inside, AtomicInteger slipped, AtomicInteger timeouts)
            throws InterruptedException {
        c.kill();
        if (!c.awaitZero(Duration.ofSeconds(10))) {
            timeouts.incrementAndGet();
        }
        for (int look = 0; look < 20; look++) {
            if (inside.get() != 0 || !c.isZero()) {
                slipped.incrementAndGet();
            }
            Thread.onSpinWait();
        }
        c.resurrect();
    }

    /**
     * One worker's random walk: hold 0..MAX_HELD references, in single and batched gets and puts; the
     * operations done are added to {@code ops} every 1024 and at the end.
     */
    private static void randomWalk(PercpuRef c, WorkerRandom rnd, AtomicBooleanView stop, AtomicLong ops) {
        int mine = 0;
        long done = 0;
        while (!stop.get()) {
            if (++done == 1024) {
                ops.addAndGet(done);
                done = 0;
            }
            int op = rnd.nextInt(8);
            if (op < 3 && mine < MAX_HELD) {
                c.get();
                mine++;
            } else if (op < 6 && mine > 0) {
                c.put();
                mine--;
            } else if (op == 6 && mine + 3 <= MAX_HELD) {
                c.get(3);
                mine += 3;
            } else if (op == 7 && mine >= 2) {
                c.put(2);
                mine -= 2;
            }
        }
        c.put(mine);
        ops.addAndGet(done);
    }

    static long seed(String test) {
        long seed = Long.getLong("raid.test.seed", System.nanoTime());
        System.out.println(test + ": seed " + seed + " (rerun with -Draid.test.seed=" + seed + ")");
        return seed;
    }

    interface AtomicBooleanView {
        boolean get();
    }

    /** Per-worker random source; {@code id} is the worker index. */
    static final class WorkerRandom {
        final int id;
        private final SplittableRandom rnd;

        WorkerRandom(int id, long seed) {
            this.id = id;
            this.rnd = new SplittableRandom(seed + id);
        }

        int nextInt(int bound) {
            return rnd.nextInt(bound);
        }
    }

    interface WorkerBody {
        void run(WorkerRandom rnd, AtomicBooleanView stop);
    }

    /** {@link #WORKERS} threads running a body until told to stop; failures are rethrown on join. */
    static final class Workers {
        private final Thread[] threads = new Thread[WORKERS];
        private final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        private final java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                new java.util.concurrent.atomic.AtomicReference<>();

        Workers(long seed, WorkerBody body) {
            for (int i = 0; i < WORKERS; i++) {
                WorkerRandom rnd = new WorkerRandom(i, seed);
                threads[i] = new Thread(() -> body.run(rnd, stop::get), "stress-worker-" + i);
                threads[i].setUncaughtExceptionHandler((t, e) -> failure.compareAndSet(null, e));
                threads[i].setDaemon(true);
                threads[i].start();
            }
        }

        void stopAndJoin() throws InterruptedException {
            stop.set(true);
            join();
        }

        void join() throws InterruptedException {
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("worker failed", failure.get());
            }
        }
    }
}
