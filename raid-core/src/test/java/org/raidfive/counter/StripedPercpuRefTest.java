package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * {@link PercpuRefContract} for refs that start striped in shared, tombstoned cells
 * ({@link CounterMode#PERCPU_SHARED}; what {@link CounterMode#PERCPU} is without membarrier).
 * {@link OwnedPercpuRefTest} runs the same contract over owned cells.
 */
class StripedPercpuRefTest extends PercpuRefContract {
    @Override
    PercpuRef newRef(Consumer<PercpuRef> release, PercpuRef.Flag... extra) {
        return PercpuRef.create(release, PaddedWords.defaultSlots(), extra);
    }

    @Override
    PercpuRef newInflight() {
        return PercpuRef.inflightCounter(CounterMode.PERCPU_SHARED);
    }

    @Test
    void sharedModeUsesSharedCells() {
        assertFalse(newInflight().ownedCells());
        assertFalse(newRef(r -> {}).ownedCells());
    }

    @Override
    boolean startsStriped() {
        return true;
    }

    @Test
    void stripedCounterGoesBackToStripedAfterQuiesce() {
        PercpuRef c = newInflight();
        assertFalse(c.isAtomic());
        c.switchToAtomicSync();
        assertTrue(c.isAtomic());
        c.switchToPercpu();
        assertFalse(c.isAtomic());
    }

    @Test
    void twoSlotsShareNothingButStayExact() {
        PercpuRef c = PercpuRef.inflightCounter(CounterMode.PERCPU, 2);
        c.get(7);
        c.switchToAtomicSync();
        assertEquals(7, c.count());
    }

    @Test
    void slotCountFollowsTheCpuCountAndIsBounded() {
        int slots = PaddedWords.defaultSlots();
        int cpus = Runtime.getRuntime().availableProcessors();
        assertEquals(1, Integer.bitCount(slots));
        assertTrue(slots >= Math.min(PaddedWords.MAX_SLOTS, 2 * cpus));
        assertTrue(slots <= PaddedWords.MAX_SLOTS);
    }

    @Test
    void consecutiveThreadIdsGetDistinctCells() {
        int slots = 8;
        int shift = PaddedWords.slotShift(slots);
        for (long id = 1; id < 10_000; id++) {
            assertFalse(slotOf(id, shift) == slotOf(id + 1, shift), "ids " + id + "," + (id + 1));
        }
        // and the cells are 128 bytes apart
        int[] idx = new int[slots];
        for (int s = 0; s < slots; s++) {
            idx[s] = PaddedWords.cellBase(2) + (s << PaddedWords.SPAN_SHIFT);
        }
        assertTrue(Arrays.stream(idx).allMatch(i -> (i - PaddedWords.cellBase(2)) % 16 == 0));
    }

    private static int slotOf(long id, int shift) {
        return (int) ((id * 0x9E3779B97F4A7C15L) >>> shift);
    }
}
