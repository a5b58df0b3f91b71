package org.raidfive.counter;

import java.util.function.Consumer;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.annotations.Validate;
import org.jetbrains.kotlinx.lincheck.paramgen.ThreadIdGen;
import org.junit.jupiter.api.Test;

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
    private final PercpuRef ref = newRef(r -> {
        releases++;
        for (int h : held) {
            if (h != 0) {
                early = true;
            }
        }
    });

    /** The reference under test (two shared cells); {@link OwnedRefLincheckTest} gives owned ones. */
    PercpuRef newRef(Consumer<PercpuRef> release) {
        return PercpuRef.create(release, 2);
    }

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
    void modelCheck() {
        LincheckBudget.check(PercpuRefLincheckTest.class, LincheckBudget.options(10, 100));
    }
}
