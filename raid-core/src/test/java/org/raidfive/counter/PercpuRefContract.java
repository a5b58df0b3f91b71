package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour every {@link PercpuRef} has, whichever mode it runs in
 * (as JCTools' QueueSanityTest): one subclass per mode.
 */
@Timeout(20)
abstract class PercpuRefContract {
    private static final Duration SHORT = Duration.ofMillis(50);
    private static final Duration LONG = Duration.ofSeconds(10);

    /** A reference (initial ref + release) in this contract's mode. */
    abstract PercpuRef newRef(Consumer<PercpuRef> release, PercpuRef.Flag... extra);

    /** An in-flight counter in this contract's mode. */
    abstract PercpuRef newInflight();

    /** True if refs from this contract start striped. */
    abstract boolean startsStriped();

    // ----------------------------------------------------------- in-flight counter

    @Test
    void inflightCounterStartsAtZero() {
        PercpuRef c = newInflight();
        assertEquals(0, c.count());
        c.switchToAtomicSync();
        assertTrue(c.isAtomic());
        assertTrue(c.isZero());
        assertEquals(0, c.count());
    }

    @Test
    void inflightCounterCountsGetsMinusPuts() {
        PercpuRef c = newInflight();
        for (int i = 0; i < 1000; i++) {
            c.get();
        }
        for (int i = 0; i < 400; i++) {
            c.put();
        }
        c.get(50);
        c.put(20);
        assertEquals(630, c.count());
        c.switchToAtomicSync();
        assertEquals(630, c.count());
        assertFalse(c.isZero());
        c.put(630);
        assertTrue(c.isZero());
    }

    @Test
    void inflightCounterPassesThroughZeroRepeatedly() {
        PercpuRef c = newInflight();
        c.switchToAtomicSync();
        for (int i = 0; i < 1000; i++) {
            c.get();
            assertFalse(c.isZero());
            c.put();
            assertTrue(c.isZero());
        }
        c.switchToPercpu();
        for (int i = 0; i < 1000; i++) {
            c.get();
            c.put();
        }
        c.switchToAtomicSync();
        assertTrue(c.isZero());
    }

    @Test
    void switchRoundTripsPreserveTheCount() {
        PercpuRef c = newInflight();
        c.get(5);
        for (int i = 0; i < 100; i++) {
            c.switchToAtomicSync();
            assertEquals(5, c.count());
            c.get();
            c.switchToPercpu();
            c.put();
            assertEquals(5, c.count());
        }
        c.switchToAtomicSync();
        assertEquals(5, c.count());
    }

    @Test
    void awaitZeroReturnsAtOnceWhenIdle() throws InterruptedException {
        PercpuRef c = newInflight();
        c.switchToAtomicSync();
        assertTrue(c.awaitZero(Duration.ZERO));
    }

    @Test
    void awaitZeroTimesOutWhileAnOperationIsInFlight() throws InterruptedException {
        PercpuRef c = newInflight();
        c.get();
        c.switchToAtomicSync();
        long t0 = System.nanoTime();
        assertFalse(c.awaitZero(SHORT));
        assertTrue(System.nanoTime() - t0 >= SHORT.toNanos());
    }

    @Test
    void awaitZeroWakesOnThePutThatDrains() {
        PercpuRef c = newInflight();
        c.get(3);
        c.switchToAtomicSync();
        assertTimeoutPreemptively(LONG, () -> {
            Thread putter = new Thread(() -> {
                for (int i = 0; i < 3; i++) {
                    sleep(5);
                    c.put();
                }
            });
            putter.start();
            assertTrue(c.awaitZero(LONG));
            putter.join();
        });
        assertTrue(c.isZero());
    }

    @Test
    void awaitZeroWakesTwoWaiters() {
        PercpuRef c = newInflight();
        c.get();
        c.switchToAtomicSync();
        assertTimeoutPreemptively(LONG, () -> {
            AtomicInteger woke = new AtomicInteger();
            List<Thread> waiters = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Thread t = new Thread(() -> {
                    try {
                        if (c.awaitZero(LONG)) {
                            woke.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                t.start();
                waiters.add(t);
            }
            sleep(20);
            c.put();
            for (Thread t : waiters) {
                t.join();
            }
            assertEquals(2, woke.get());
        });
    }

    @Test
    void awaitZeroIsInterruptible() {
        PercpuRef c = newInflight();
        c.get();
        c.switchToAtomicSync();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> c.awaitZero(LONG));
        assertFalse(Thread.interrupted());
    }

    @Test
    void killedInflightCounterRefusesTryGetLiveButStillCounts() throws InterruptedException {
        PercpuRef c = newInflight();
        assertTrue(c.tryGetLive());
        c.kill();
        assertTrue(c.isDying());
        assertTrue(c.isAtomic());
        assertFalse(c.tryGetLive());
        assertEquals(1, c.count());
        c.get(); // an operation that already holds the member may nest
        c.put();
        assertFalse(c.awaitZero(SHORT));
        c.put();
        assertTrue(c.awaitZero(Duration.ZERO));
        assertTrue(c.isZero());
        c.resurrect();
        assertFalse(c.isDying());
        assertTrue(c.tryGetLive());
        assertTrue(c.tryGet());
        c.put(2);
        c.switchToAtomicSync();
        assertTrue(c.isZero());
    }

    @Test
    void tryGetOnInflightCounterAlwaysSucceeds() {
        PercpuRef c = newInflight();
        c.switchToAtomicSync();
        assertTrue(c.tryGet());
        c.put();
        assertTrue(c.tryGet());
        assertEquals(1, c.count());
    }

    @Test
    void getAndPutMayHappenInDifferentThreads() {
        PercpuRef c = newInflight();
        assertTimeoutPreemptively(LONG, () -> {
            int n = 100_000;
            Thread getter = new Thread(() -> {
                for (int i = 0; i < n; i++) {
                    c.get();
                }
            });
            getter.start();
            getter.join();
            Thread putter = new Thread(() -> {
                for (int i = 0; i < n; i++) {
                    c.put();
                }
            });
            putter.start();
            putter.join();
        });
        c.switchToAtomicSync();
        assertTrue(c.isZero());
    }

    @Test
    void concurrentGetPutPairsLeaveExactZero() {
        PercpuRef c = newInflight();
        assertTimeoutPreemptively(
                LONG,
                () -> runThreads(3, t -> {
                    for (int i = 0; i < 200_000; i++) {
                        c.get();
                        c.put();
                    }
                }));
        c.switchToAtomicSync();
        assertEquals(0, c.count());
    }

    @Test
    void deltaOutOfRangeIsRejected() {
        PercpuRef c = newInflight();
        assertThrows(IllegalArgumentException.class, () -> c.get(-1));
        assertThrows(IllegalArgumentException.class, () -> c.put((1L << 32) + 1));
        assertDoesNotThrow(() -> c.get(0));
        assertEquals(0, c.count());
    }

    @Test
    void isZeroIsFalseInStripedModeEvenAtZero() {
        PercpuRef c = newInflight();
        c.switchToAtomicSync();
        c.switchToPercpu();
        if (c.isAtomic()) {
            assertTrue(c.isZero()); // an always-atomic counter
        } else {
            assertFalse(c.isZero());
            assertThrows(IllegalStateException.class, () -> c.awaitZero(SHORT));
        }
    }

    // ------------------------------------------------------------------- references

    @Test
    void referenceStartsWithItsInitialReference() {
        PercpuRef r = newRef(x -> {});
        assertEquals(startsStriped(), !r.isAtomic());
        assertEquals(1, r.count());
        r.switchToAtomicSync();
        assertEquals(1, r.count());
        assertFalse(r.isZero());
    }

    @Test
    void releaseRunsOnceWhenKilledRefDrains() {
        AtomicInteger releases = new AtomicInteger();
        PercpuRef r = newRef(x -> releases.incrementAndGet());
        r.get();
        r.get();
        r.kill();
        assertEquals(0, releases.get());
        assertEquals(2, r.count());
        r.put();
        assertEquals(0, releases.get());
        r.put();
        assertEquals(1, releases.get());
        assertTrue(r.isZero());
        assertFalse(r.tryGet());
        assertFalse(r.tryGetLive());
        assertEquals(1, releases.get());
    }

    @Test
    void killWithNoOtherReferenceReleasesInTheKillingThread() {
        AtomicReference<Thread> releasedIn = new AtomicReference<>();
        PercpuRef r = newRef(x -> releasedIn.set(Thread.currentThread()));
        r.kill();
        assertEquals(Thread.currentThread(), releasedIn.get());
    }

    @Test
    void releaseReceivesTheRefAndSeesItZero() {
        AtomicReference<PercpuRef> seen = new AtomicReference<>();
        AtomicInteger zeroAtRelease = new AtomicInteger();
        PercpuRef r = newRef(x -> {
            seen.set(x);
            if (x.isZero()) {
                zeroAtRelease.incrementAndGet();
            }
        });
        r.kill();
        assertEquals(r, seen.get());
        assertEquals(1, zeroAtRelease.get());
    }

    @Test
    void tryGetLiveFailsInsideAndAfterKillConfirmation() {
        AtomicInteger liveInConfirm = new AtomicInteger(-1);
        PercpuRef r = newRef(x -> {});
        r.get(); // keep it from releasing
        assertTrue(r.tryGetLive());
        r.killAndConfirm(x -> liveInConfirm.set(x.tryGetLive() ? 1 : 0));
        assertEquals(0, liveInConfirm.get());
        assertFalse(r.tryGetLive());
        assertTrue(r.tryGet()); // not released: plain tryGet still works
        assertEquals(3, r.count());
    }

    @Test
    void killTwiceIsRejected() {
        PercpuRef r = newRef(x -> {});
        r.get();
        r.kill();
        assertThrows(IllegalStateException.class, r::kill);
    }

    @Test
    void deadRefStaysAtomic() {
        PercpuRef r = newRef(x -> {});
        r.get();
        r.kill();
        r.switchToPercpu();
        assertTrue(r.isAtomic());
        assertEquals(1, r.count());
    }

    @Test
    void resurrectBeforeReleaseRestoresTheInitialReference() {
        AtomicInteger releases = new AtomicInteger();
        PercpuRef r = newRef(x -> releases.incrementAndGet());
        r.get();
        r.kill();
        assertEquals(1, r.count());
        r.resurrect();
        assertFalse(r.isDying());
        assertEquals(startsStriped(), !r.isAtomic());
        assertEquals(2, r.count());
        assertTrue(r.tryGetLive());
        r.put(2);
        r.kill();
        assertEquals(1, releases.get());
    }

    @Test
    void resurrectOfLiveRefIsRejected() {
        PercpuRef r = newRef(x -> {});
        assertThrows(IllegalStateException.class, r::resurrect);
    }

    @Test
    void reinitAfterReleaseNeedsAllowReinitUnlessStartedAtomic() {
        AtomicInteger releases = new AtomicInteger();
        PercpuRef plain = newRef(x -> releases.incrementAndGet());
        plain.kill();
        assertEquals(1, releases.get());
        if (startsStriped()) {
            assertThrows(IllegalStateException.class, plain::reinit);
        } else {
            plain.reinit(); // INIT_ATOMIC implies ALLOW_REINIT, as in the kernel
            assertEquals(1, plain.count());
        }

        PercpuRef reusable = newRef(x -> releases.incrementAndGet(), PercpuRef.Flag.ALLOW_REINIT);
        for (int round = 0; round < 3; round++) {
            reusable.kill();
            assertTrue(reusable.isZero());
            reusable.reinit();
            assertFalse(reusable.isDying());
            assertEquals(1, reusable.count());
            assertEquals(startsStriped(), !reusable.isAtomic());
        }
        assertEquals(4, releases.get());
    }

    @Test
    void reinitOfNonZeroRefIsRejected() {
        PercpuRef r = newRef(x -> {}, PercpuRef.Flag.ALLOW_REINIT);
        r.get();
        r.kill();
        assertThrows(IllegalStateException.class, r::reinit);
    }

    @Test
    void initDeadStartsAtZeroUntilReinit() {
        AtomicInteger releases = new AtomicInteger();
        PercpuRef r = newRef(x -> releases.incrementAndGet(), PercpuRef.Flag.INIT_DEAD);
        assertTrue(r.isDying());
        assertTrue(r.isZero());
        assertFalse(r.tryGet());
        r.reinit();
        assertEquals(1, r.count());
        assertTrue(r.tryGetLive());
        r.put();
        r.kill();
        assertEquals(1, releases.get());
    }

    @Test
    void switchToAtomicRunsItsCallbackAfterTheSwitch() {
        PercpuRef r = newRef(x -> {});
        AtomicInteger atomicInCallback = new AtomicInteger();
        r.switchToAtomic(x -> atomicInCallback.set(x.isAtomic() ? 1 : 2));
        assertEquals(1, atomicInCallback.get());
        r.switchToPercpu();
        assertFalse(r.isAtomic()); // an explicit switch back clears INIT_ATOMIC's force, as in the kernel
    }

    @Test
    void releaseIsNeverCalledWhileAReferenceIsHeld() {
        AtomicInteger held = new AtomicInteger();
        AtomicInteger early = new AtomicInteger();
        AtomicInteger releases = new AtomicInteger();
        PercpuRef r = newRef(x -> {
            releases.incrementAndGet();
            if (held.get() != 0) {
                early.incrementAndGet();
            }
        });
        CountDownLatch started = new CountDownLatch(2);
        assertTimeoutPreemptively(LONG, () -> {
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Thread th = new Thread(() -> {
                    started.countDown();
                    while (r.tryGetLive()) {
                        held.incrementAndGet();
                        held.decrementAndGet();
                        r.put();
                    }
                });
                th.start();
                ts.add(th);
            }
            started.await();
            sleep(20);
            r.kill();
            for (Thread th : ts) {
                th.join();
            }
        });
        assertEquals(1, releases.get());
        assertEquals(0, early.get());
    }

    static void runThreads(int n, Consumer<Integer> body) throws InterruptedException {
        List<Thread> ts = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < n; i++) {
            int id = i;
            Thread t = new Thread(() -> body.accept(id), "worker-" + i);
            t.setUncaughtExceptionHandler((th, e) -> failure.compareAndSet(null, e));
            t.start();
            ts.add(t);
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("worker failed", failure.get());
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
