package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@link PercpuRefContract} for refs that start atomic: references created
 * with {@link PercpuRef.Flag#INIT_ATOMIC} and {@link CounterMode#ATOMIC}
 * in-flight counters.
 */
class AtomicPercpuRefTest extends PercpuRefContract {
    @Override
    PercpuRef newRef(Consumer<PercpuRef> release, PercpuRef.Flag... extra) {
        PercpuRef.Flag[] flags = Stream.concat(Stream.of(PercpuRef.Flag.INIT_ATOMIC), Stream.of(extra))
                .toArray(PercpuRef.Flag[]::new);
        return PercpuRef.create(release, flags);
    }

    @Override
    PercpuRef newInflight() {
        return PercpuRef.inflightCounter(CounterMode.ATOMIC);
    }

    @Override
    boolean startsStriped() {
        return false;
    }

    @Test
    void atomicCounterModeNeverStripes() {
        PercpuRef c = newInflight();
        assertTrue(c.isAtomic());
        c.switchToPercpu();
        assertTrue(c.isAtomic());
        c.get();
        c.switchToAtomicSync();
        c.switchToPercpu();
        assertTrue(c.isAtomic());
        c.put();
        assertTrue(c.isZero());
    }
}
