package org.raidfive.counter;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/** {@link PercpuRwSemaphoreLincheckTest}'s operations over a semaphore whose readers use owned cells. */
public class OwnedRwSemaphoreLincheckTest extends PercpuRwSemaphoreLincheckTest {
    @Override
    PercpuRwSemaphore newSemaphore() {
        return new PercpuRwSemaphore(2, 0, Membarrier.available());
    }

    @Test
    @Override
    void modelCheck() {
        assumeTrue(Membarrier.available(), () -> "membarrier unavailable: " + Membarrier.unavailableReason());
        LincheckBudget.check(
                OwnedRwSemaphoreLincheckTest.class, LincheckBudget.ownedCells(LincheckBudget.options(3, 50)));
    }
}
