package org.raidfive.counter;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** {@link PercpuRefLincheckTest}'s operations over a reference with owned cells. */
public class OwnedRefLincheckTest extends PercpuRefLincheckTest {
    @Override
    PercpuRef newRef(Consumer<PercpuRef> release) {
        return Membarrier.available() ? PercpuRef.createOwned(release) : super.newRef(release);
    }

    @Test
    @Override
    void modelCheck() {
        assumeTrue(Membarrier.available(), () -> "membarrier unavailable: " + Membarrier.unavailableReason());
        LincheckBudget.check(OwnedRefLincheckTest.class, LincheckBudget.ownedCells(LincheckBudget.options(10, 100)));
    }
}
