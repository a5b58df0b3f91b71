package org.raidfive.counter;

import java.time.Duration;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.paramgen.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Lincheck model checking of a striped in-flight counter (the engine's
 * {@code nrPending}): get/put racing switches, kill/resurrect and
 * tryGetLive, with {@link #isZero()} and {@link #awaitZeroNow()} required to
 * be exact whenever the counter is atomic.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class InflightCounterLincheckTest {
    private final int[] held = new int[8];
    private final PercpuRef counter = newCounter();

    /** The counter under test (two shared cells); {@link OwnedInflightCounterLincheckTest} gives owned ones. */
    PercpuRef newCounter() {
        return PercpuRef.inflightCounter(CounterMode.PERCPU, 2);
    }

    @Operation
    public void get(@Param(name = "tid") int tid) {
        counter.get();
        held[tid]++;
    }

    @Operation
    public void put(@Param(name = "tid") int tid) {
        if (held[tid] > 0) {
            held[tid]--;
            counter.put();
        }
    }

    @Operation
    public boolean tryGetLive(@Param(name = "tid") int tid) {
        if (counter.tryGetLive()) {
            held[tid]++;
            return true;
        }
        return false;
    }

    @Operation
    public boolean kill() {
        try {
            counter.kill();
            return true;
        } catch (IllegalStateException alreadyDying) {
            return false;
        }
    }

    @Operation
    public boolean resurrect() {
        try {
            counter.resurrect();
            return true;
        } catch (IllegalStateException notDying) {
            return false;
        }
    }

    @Operation
    public void switchToAtomic() {
        counter.switchToAtomicSync();
    }

    @Operation
    public void switchToPercpu() {
        counter.switchToPercpu();
    }

    @Operation
    public boolean isZero() {
        return counter.isZero();
    }

    @Operation
    public boolean isAtomic() {
        return counter.isAtomic();
    }

    /** awaitZero with a zero timeout: true iff exactly zero now; -1 if striped (it refuses). */
    @Operation
    public int awaitZeroNow() throws InterruptedException {
        try {
            return counter.awaitZero(Duration.ZERO) ? 1 : 0;
        } catch (IllegalStateException striped) {
            return -1;
        }
    }

    @Test
    void modelCheck() {
        LincheckBudget.check(InflightCounterLincheckTest.class, LincheckBudget.options(10, 100));
    }
}
