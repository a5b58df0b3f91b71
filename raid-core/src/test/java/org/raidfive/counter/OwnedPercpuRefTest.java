package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link PercpuRefContract} for refs that start striped in owned cells (plain stores, membarrier on
 * a switch): what {@link CounterMode#PERCPU} is where membarrier(2) works. Skipped, and said so,
 * where it does not (CI's Linux has it; {@code -Draidfive.counters.membarrier=false} turns it off).
 */
class OwnedPercpuRefTest extends PercpuRefContract {
    @BeforeAll
    static void needsMembarrier() {
        assumeTrue(Membarrier.available(), () -> "membarrier unavailable: " + Membarrier.unavailableReason());
    }

    @Override
    PercpuRef newRef(Consumer<PercpuRef> release, PercpuRef.Flag... extra) {
        return PercpuRef.createOwned(release, extra);
    }

    @Override
    PercpuRef newInflight() {
        return PercpuRef.inflightOwned();
    }

    @Override
    boolean startsStriped() {
        return true;
    }

    @Test
    void percpuModeTakesOwnedCellsWhereMembarrierWorks() {
        assertTrue(PercpuRef.inflightCounter(CounterMode.PERCPU).ownedCells());
        assertTrue(PercpuRef.create(r -> {}).ownedCells());
        assertFalse(PercpuRef.inflightCounter(CounterMode.PERCPU_SHARED).ownedCells());
        assertFalse(PercpuRef.inflightCounter(CounterMode.ATOMIC).ownedCells());
    }

    /**
     * A section that raced a kill settles by what the kill's fold read: stopped before its store
     * (the fold read the cell without it) it takes the store back and fails, as a tryGetLive after
     * the kill must; stopped after its store (the fold counted it) it holds its reference, counted
     * once. The switch runs inside the section, in the section's own thread, at the stop.
     */
    @Test
    void aSectionThatRacedAKillSettlesByWhatTheFoldRead() {
        PercpuRef missed = newInflight();
        assertFalse(missed.tryGetLivePausing(missed::kill, null), "taken after the kill's fold missed it");
        assertEquals(0, missed.exactCountOrMinusOne());
        assertTrue(missed.isZero());

        PercpuRef counted = newInflight();
        assertTrue(counted.tryGetLivePausing(null, counted::kill), "the kill's fold counted it");
        assertEquals(1, counted.exactCountOrMinusOne());
        assertFalse(counted.isZero());
        counted.put();
        assertTrue(counted.isZero());
    }

    /**
     * Gets and puts that raced a switch, before and after their store, and across a switch to
     * atomic and back (ABA): every one is counted exactly once, in atomic mode at once and in
     * every fold after.
     */
    @Test
    void sectionsThatRacedASwitchAreCountedExactlyOnce() {
        PercpuRef c = newInflight();
        Runnable toAtomic = c::switchToAtomicSync;
        Runnable thereAndBack = () -> {
            c.switchToAtomicSync();
            c.switchToPercpu();
        };
        long expected = 0;
        for (Runnable before : new Runnable[] {null, toAtomic, thereAndBack}) {
            for (Runnable after : new Runnable[] {null, toAtomic, thereAndBack}) {
                c.switchToPercpu();
                assertTrue(c.tryGetLivePausing(before, after));
                expected++;
                c.switchToAtomicSync();
                assertEquals(
                        expected, c.exactCountOrMinusOne(), "get, stops " + (before != null) + "/" + (after != null));
                c.switchToPercpu();
                c.switchToAtomicSync();
                assertEquals(expected, c.exactCountOrMinusOne(), "get, folded again");
            }
        }
        for (Runnable before : new Runnable[] {null, toAtomic, thereAndBack}) {
            for (Runnable after : new Runnable[] {null, toAtomic, thereAndBack}) {
                c.switchToPercpu();
                c.putPausing(before, after);
                expected--;
                c.switchToAtomicSync();
                assertEquals(
                        expected, c.exactCountOrMinusOne(), "put, stops " + (before != null) + "/" + (after != null));
            }
        }
        assertEquals(0, expected);
        assertTrue(c.isZero());
    }

    @Test
    void aSwitchIssuesOneMembarrierAndFoldsWhatTheCellsGainedSinceTheLastFold() {
        PercpuRef c = newInflight();
        c.get(5);
        long before = Membarrier.barriers();
        c.switchToAtomicSync();
        assertEquals(before + 1, Membarrier.barriers());
        assertEquals(5, c.count());
        c.switchToPercpu();
        c.put(2); // the cell now holds 3; the last fold took 5 from it
        c.switchToAtomicSync();
        assertEquals(3, c.count());
        c.switchToAtomicSync(); // already atomic: no barrier
        assertEquals(before + 2, Membarrier.barriers());
    }

    @Test
    void aThreadThatEndedLeavesItsCountToWhoeverTakesItsSlot() throws InterruptedException {
        PercpuRef c = newInflight();
        Thread t = new Thread(() -> c.get(7));
        t.start();
        t.join();
        for (int i = 0; i < 4 * ThreadSlots.CAPACITY; i++) { // enough threads to reuse the ended ones' slots
            Thread u = new Thread(() -> {
                c.get();
                c.put();
            });
            u.start();
            u.join();
        }
        c.switchToAtomicSync();
        assertEquals(7, c.count());
    }
}
