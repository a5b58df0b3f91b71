package org.raidfive.counter;

import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.paramgen.ThreadIdGen;
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions;
import org.junit.jupiter.api.Test;

/**
 * Lincheck aimed at the one race the design exists for: a get/put that read
 * "striped" racing the switcher's sweep of its cell. Only the operations
 * involved, on two threads, so the model checker spends its budget on the
 * interleavings that matter; {@link #count()} exposes a lost or doubled
 * count whenever the counter is atomic. (A non-atomic sweep, read then
 * write instead of getAndSet, is found by this test within its default
 * budget; the broader tests need about ten times more.)
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class SweepRaceLincheckTest {
    private final int[] held = new int[4];
    private final PercpuRef counter = PercpuRef.inflightCounter(CounterMode.PERCPU, 2);

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
    public void switchToAtomic() {
        counter.switchToAtomicSync();
    }

    @Operation
    public void switchToPercpu() {
        counter.switchToPercpu();
    }

    /** The exact count if atomic, else -1 (one read of the count word decides). */
    @Operation
    public long count() {
        return counter.exactCountOrMinusOne();
    }

    @Test
    void modelCheck() {
        int scale = Integer.getInteger("raid.lincheck.scale", 1);
        LincheckBudget.check(
                SweepRaceLincheckTest.class,
                new ModelCheckingOptions()
                        .iterations(15)
                        .invocationsPerIteration(100 * scale)
                        .threads(2)
                        .actorsPerThread(4)
                        .actorsBefore(1)
                        .actorsAfter(1)
                        .minimizeFailedScenario(false));
    }
}
