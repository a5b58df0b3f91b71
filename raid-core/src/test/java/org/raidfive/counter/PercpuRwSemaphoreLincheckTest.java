package org.raidfive.counter;

import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.junit.jupiter.api.Test;

/**
 * Lincheck model checking of {@link PercpuRwSemaphore}: a plain (unsynchronised)
 * value is incremented under the write lock and read, twice, under the read
 * lock. Any interleaving where a writer overlaps another writer or a reader
 * shows up as a lost update or a torn read, which no sequential order explains;
 * a lost wake-up shows up as a deadlock.
 */
public class PercpuRwSemaphoreLincheckTest {
    private final PercpuRwSemaphore sem = new PercpuRwSemaphore(2, 0);
    private long value;

    @Operation
    public long increment() {
        sem.writeLock();
        try {
            long v = value + 1;
            value = v;
            return v;
        } finally {
            sem.writeUnlock();
        }
    }

    @Operation
    public long read() {
        sem.readLock();
        try {
            long first = value;
            long second = value;
            return first == second ? first : -1;
        } finally {
            sem.readUnlock();
        }
    }

    @Test
    void modelCheck() {
        LincheckBudget.check(PercpuRwSemaphoreLincheckTest.class, LincheckBudget.options(3, 50));
    }
}
