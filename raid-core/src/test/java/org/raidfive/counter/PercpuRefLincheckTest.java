package org.raidfive.counter;

import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.annotations.Validate;
import org.jetbrains.kotlinx.lincheck.paramgen.ThreadIdGen;
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck model checking of a {@link PercpuRef} reference: every result of
 * every explored interleaving (with mode switches, kill, tryGet/tryGetLive)
 * must be explained by some sequential order of the same operations.
 *
 * <p>A thread may only put or nest a get on a reference it holds: the test
 * keeps a held count per Lincheck thread id ({@link ThreadIdGen}), which the
 * sequential run sees identically, so guards give the same answers in both.
 * Release is checked after each invocation ({@link #releaseExactlyOnceAtZero()}).
 *
 * <p>Two cells, so the sweep is short and interleavings stay few; the cell
 * a Lincheck thread lands in depends on its id, and with 3 threads at least
 * two share one, which the design must also survive.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class PercpuRefLincheckTest {
    private final int[] held = new int[8];
    private volatile int releases;
    private volatile boolean early;
    private final PercpuRef ref = PercpuRef.create(r -> {
        releases++;
        for (int h : held) {
            if (h != 0) {
                early = true;
            }
        }
    }, 2);

    @Operation
    public void get(@Param(name = "tid") int tid) {
        if (held[tid] > 0) {
            ref.get();
            held[tid]++;
        }
    }

    @Operation
    public void put(@Param(name = "tid") int tid) {
        if (held[tid] > 0) {
            held[tid]--;
            ref.put();
        }
    }

    @Operation
    public boolean tryGet(@Param(name = "tid") int tid) {
        if (ref.tryGet()) {
            held[tid]++;
            return true;
        }
        return false;
    }

    @Operation
    public boolean tryGetLive(@Param(name = "tid") int tid) {
        if (ref.tryGetLive()) {
            held[tid]++;
            return true;
        }
        return false;
    }

    @Operation
    public boolean kill() {
        try {
            ref.kill();
            return true;
        } catch (IllegalStateException alreadyDying) {
            return false;
        }
    }

    @Operation
    public void switchToAtomic() {
        ref.switchToAtomicSync();
    }

    @Operation
    public void switchToPercpu() {
        ref.switchToPercpu();
    }

    @Operation
    public boolean isZero() {
        return ref.isZero();
    }

    @Operation
    public boolean isAtomic() {
        return ref.isAtomic();
    }

    /**
     * After each invocation (all threads done): the release ran exactly once
     * if and only if the count is zero, and never while a reference was held.
     * Not an operation: the callback runs after the zero transition, in the
     * thread that made it, so another thread may see "zero" before the
     * callback has finished; that is what a release is, not a linearization
     * failure.
     */
    @Validate
    public void releaseExactlyOnceAtZero() {
        if (early) {
            throw new IllegalStateException("release ran while a reference was held");
        }
        int expected = ref.isAtomic() && ref.isZero() ? 1 : 0;
        if (releases != expected) {
            throw new IllegalStateException("releases " + releases + ", expected " + expected + " for " + ref);
        }
    }

    @Test
    @Timeout(value = 90, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void modelCheck() {
        LinChecker.check(PercpuRefLincheckTest.class, LincheckBudget.options(10, 100));
    }

    /**
     * One place for the model-checking budget of the counter tests. Defaults
     * keep each class to seconds on a 2-core box (after Lincheck's one-off
     * warm-up of ~20 s per JVM); {@code -Draid.lincheck.scale=N} multiplies
     * the invocations for a deeper run.
     */
    static final class LincheckBudget {
        static ModelCheckingOptions options(int iterations, int invocationsPerIteration) {
            int scale = Integer.getInteger("raid.lincheck.scale", 1);
            return new ModelCheckingOptions()
                    .iterations(iterations)
                    .invocationsPerIteration(invocationsPerIteration * scale)
                    .threads(3)
                    .actorsPerThread(3)
                    .actorsBefore(2)
                    .actorsAfter(2)
                    .minimizeFailedScenario(false); // minimising takes minutes on 2 cores; the trace is enough
        }

        private LincheckBudget() {
        }
    }
}
