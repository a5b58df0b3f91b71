package org.raidfive.counter;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link InflightCounterLincheckTest}'s operations over an in-flight counter with owned cells: the
 * one-word add, the second read of the mode, the settling of a section that raced a fold and the
 * fold by difference, under every interleaving the model checker tries (it runs accesses
 * sequentially consistently, so it checks the protocol; the membarrier's part, the hardware
 * reordering, is jcstress's: {@code OwnedCellsJcstress}).
 */
public class OwnedInflightCounterLincheckTest extends InflightCounterLincheckTest {
    @Override
    PercpuRef newCounter() {
        return Membarrier.available() ? PercpuRef.inflightOwned() : super.newCounter();
    }

    @Test
    @Override
    void modelCheck() {
        assumeTrue(Membarrier.available(), () -> "membarrier unavailable: " + Membarrier.unavailableReason());
        LincheckBudget.check(
                OwnedInflightCounterLincheckTest.class, LincheckBudget.ownedCells(LincheckBudget.options(10, 100)));
    }
}
