package org.raidfive.counter;

import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.junit.jupiter.api.Test;

/**
 * Lincheck model checking of {@link PercpuRwSemaphore}: a plain (unsynchronised)
 * value is incremented under the write lock and read, twice, under the read
 * lock, where it also looks whether a writer is inside. Any interleaving where
 * a writer overlaps another writer or a reader shows up as a lost update, a
 * torn read or a writer seen inside (-1), which no sequential order explains;
 * a lost wake-up shows up as a deadlock.
 */
public class PercpuRwSemaphoreLincheckTest {
    private final PercpuRwSemaphore sem = newSemaphore();
    private long value;
    private boolean writing;

    /** The semaphore under test (two shared cells); {@link OwnedRwSemaphoreLincheckTest} gives owned ones. */
    PercpuRwSemaphore newSemaphore() {
        return new PercpuRwSemaphore(2, 0);
    }

    @Operation
    public long increment() {
        sem.writeLock();
        try {
            writing = true;
            long v = value + 1;
            value = v;
            writing = false;
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
            boolean writerInside = writing;
            long second = value;
            return first == second && !writerInside ? first : -1;
        } finally {
            sem.readUnlock();
        }
    }

    @Test
    void modelCheck() {
        LincheckBudget.check(PercpuRwSemaphoreLincheckTest.class, LincheckBudget.options(3, 50));
    }
}
