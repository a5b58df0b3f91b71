package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The two revive races an adversarial review found, as two-thread rounds with random jitter: the
 * main thread revives ({@code reinit()}) while a partner drops the last reference (a reference with
 * ALLOW_REINIT) or takes a plain reference (an in-flight counter). Each round is checked against
 * what any sequential order of the two operations allows. The first implementation fails both
 * within a few thousand rounds on two cores; every run is bounded in rounds and time and prints
 * its seed (rerun one with -Draid.test.seed=N).
 */
class ReviveRaceStressTest {
    private static final int ROUNDS = 200_000;
    private static final long MAX_NANOS = Duration.ofSeconds(4).toNanos();
    private static final int JITTER = 64;

    /**
     * Lifetime 1 ends with the partner's put; the main thread revives as soon as it can and then
     * kills lifetime 2. Sequentially: two releases, each at zero in atomic mode. A release claimed
     * late by the partner's put inside lifetime 2 shows up as a release at count one, and lifetime 2
     * then never releases.
     */
    @Test
    void theLastPutsReleaseStaysInTheLifetimeItEnds() {
        long seed = PercpuRefStressTest.seed("theLastPutsReleaseStaysInTheLifetimeItEnds");
        AtomicInteger releases = new AtomicInteger();
        AtomicReference<String> badRelease = new AtomicReference<>();
        Rounds rounds = new Rounds(seed);
        PercpuRef[] current = new PercpuRef[1];
        int[] done = new int[1];
        assertTimeoutPreemptively(
                Duration.ofSeconds(60),
                () -> rounds.run(
                        () -> {
                            releases.set(0);
                            PercpuRef ref = PercpuRef.create(
                                    r -> {
                                        releases.incrementAndGet();
                                        if (!(r.isAtomic() && r.isZero())) {
                                            badRelease.compareAndSet(null, "release outside its lifetime's zero: " + r);
                                        }
                                    },
                                    2,
                                    PercpuRef.Flag.ALLOW_REINIT);
                            ref.get(); // the partner's reference
                            ref.kill(); // drops the initial one: the partner's put ends lifetime 1
                            current[0] = ref;
                        },
                        () -> current[0].put(),
                        () -> {
                            PercpuRef ref = current[0];
                            for (; ; ) {
                                try {
                                    ref.reinit();
                                    break;
                                } catch (IllegalStateException notYetZero) {
                                    Thread.onSpinWait();
                                }
                            }
                            ref.kill(); // ends lifetime 2: its own release
                        },
                        round -> {
                            if (badRelease.get() != null || releases.get() != 2) {
                                throw new AssertionError("round " + round + ", seed " + seed + ": " + releases.get()
                                        + " releases for 2 lifetimes"
                                        + (badRelease.get() == null ? "" : "; " + badRelease.get())
                                        + "; " + current[0]);
                            }
                            done[0]++;
                        }));
        System.out.println("theLastPutsReleaseStaysInTheLifetimeItEnds: " + done[0] + " rounds");
    }

    /**
     * A killed in-flight counter at zero (atomic, and not forced to stay so): the partner takes a reference and reads the exact count
     * at once; the main thread reinits (which needs exact zero). Sequentially either the reinit comes
     * first (the counter is striped when the partner reads, so the exact read is -1) or the get does
     * (the reinit fails). A reinit that checks zero and revives in two steps lets a get in between:
     * the partner reads 1 in atomic mode and the reinit still succeeds.
     */
    @Test
    void aReinitThatSucceedsNeverHidesAConcurrentGet() {
        long seed = PercpuRefStressTest.seed("aReinitThatSucceedsNeverHidesAConcurrentGet");
        PercpuRef[] current = new PercpuRef[1];
        long[] partnerRead = new long[1];
        boolean[] reinitOk = new boolean[1];
        int[] done = new int[1];
        assertTimeoutPreemptively(
                Duration.ofSeconds(60),
                () -> rounds(seed)
                        .run(
                                () -> {
                                    PercpuRef counter = PercpuRef.inflightCounter(CounterMode.PERCPU, 2);
                                    counter.kill(); // atomic and dying at zero; a switch to atomic would force it to
                                    // stay atomic
                                    current[0] = counter;
                                },
                                () -> {
                                    current[0].get();
                                    partnerRead[0] = current[0].exactCountOrMinusOne();
                                },
                                () -> {
                                    try {
                                        current[0].reinit();
                                        reinitOk[0] = true;
                                    } catch (IllegalStateException notZero) {
                                        reinitOk[0] = false;
                                    }
                                },
                                round -> {
                                    if (reinitOk[0] && partnerRead[0] == 1L) {
                                        throw new AssertionError("round " + round + ", seed " + seed
                                                + ": reinit succeeded over a get the partner saw counted in atomic mode; "
                                                + current[0]);
                                    }
                                    assertEquals(1L, current[0].count(), "count after the round, seed " + seed);
                                    done[0]++;
                                }));
        System.out.println("aReinitThatSucceedsNeverHidesAConcurrentGet: " + done[0] + " rounds");
    }

    private static Rounds rounds(long seed) {
        return new Rounds(seed);
    }

    interface RoundCheck {
        void check(int round);
    }

    /**
     * Rounds of one partner action against one main action, both started from a spin handshake and
     * delayed by a random number of spin-waits so that their steps interleave in every way.
     */
    static final class Rounds {
        private final long seed;
        private volatile int go;
        private volatile int finished;
        private volatile boolean stop;

        Rounds(long seed) {
            this.seed = seed;
        }

        void run(Runnable setUp, Runnable partnerAction, Runnable mainAction, RoundCheck check) throws Exception {
            SplittableRandom mainRandom = new SplittableRandom(seed);
            SplittableRandom partnerRandom = mainRandom.split();
            AtomicReference<Throwable> partnerFailure = new AtomicReference<>();
            Thread partner = new Thread(
                    () -> {
                        int seen = 0;
                        while (!stop) {
                            int round = go;
                            if (round == seen) {
                                Thread.onSpinWait();
                                continue;
                            }
                            seen = round;
                            spin(partnerRandom.nextInt(JITTER));
                            try {
                                partnerAction.run();
                            } catch (Throwable t) {
                                partnerFailure.compareAndSet(null, t);
                            }
                            finished = round;
                        }
                    },
                    "revive-race-partner");
            partner.setDaemon(true);
            partner.start();
            long deadline = System.nanoTime() + MAX_NANOS;
            try {
                for (int round = 1; round <= ROUNDS && System.nanoTime() < deadline; round++) {
                    setUp.run();
                    go = round; // publishes the set-up state to the partner
                    spin(mainRandom.nextInt(JITTER));
                    mainAction.run();
                    while (finished != round) {
                        Thread.onSpinWait();
                    }
                    if (partnerFailure.get() != null) {
                        throw new AssertionError(
                                "partner failed in round " + round + ", seed " + seed, partnerFailure.get());
                    }
                    check.check(round);
                }
            } finally {
                stop = true;
                partner.join(10_000);
            }
        }

        private static void spin(int n) {
            for (int i = 0; i < n; i++) {
                Thread.onSpinWait();
            }
        }
    }
}
