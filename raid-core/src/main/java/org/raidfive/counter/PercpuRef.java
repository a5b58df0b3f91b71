package org.raidfive.counter;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

// Interim stand-in (atomic only) until the counter branch lands.
public final class PercpuRef {
    private final AtomicLong count = new AtomicLong();

    public static PercpuRef inflightCounter(CounterMode mode) {
        return new PercpuRef();
    }

    public void get() {
        count.incrementAndGet();
    }

    public void put() {
        count.decrementAndGet();
    }

    public boolean isAtomic() {
        return true;
    }

    public void switchToAtomicSync() {
    }

    public void switchToPercpu() {
    }

    public boolean awaitZero(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (count.get() != 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }
}
