package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.strategy.managed.ManagedStrategyGuaranteeKt;
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions;

/**
 * One place for the model-checking budget of the counter tests. Defaults
 * keep each class to seconds on a 2-core box (after Lincheck's one-off
 * warm-up of ~20 s per JVM); {@code -Draid.lincheck.scale=N} multiplies
 * the invocations for a deeper run.
 */
final class LincheckBudget {
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

    /**
     * For owned cells: the thread registry ({@link ThreadSlots}, process-wide static state that a
     * thread writes once, on its first use) and the membarrier call are left out of the model: no
     * switch points in them and their statics are not snapshotted (restoring them between
     * invocations would unregister the threads).
     */
    static ModelCheckingOptions ownedCells(ModelCheckingOptions options) {
        return options.addGuarantee(ManagedStrategyGuaranteeKt.forClasses(ThreadSlots.class.getName())
                        .allMethods()
                        .ignore())
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(Membarrier.class.getName())
                        .allMethods()
                        .ignore());
    }

    /** Runs the check, failing with the check's name if it outlives 90 s x scale (a hang fails, not stalls). */
    static void check(Class<?> test, ModelCheckingOptions options) {
        long seconds = 90L * Integer.getInteger("raid.lincheck.scale", 1);
        assertTimeoutPreemptively(
                Duration.ofSeconds(seconds),
                () -> LinChecker.check(test, options),
                () -> test.getSimpleName() + " model check exceeded " + seconds + " s");
    }

    private LincheckBudget() {}
}
