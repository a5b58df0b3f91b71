package org.raidfive.counter;

import java.util.concurrent.locks.ReentrantReadWriteLock;

// Interim stand-in until the counter branch lands.
public final class PercpuRwSemaphore {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    public void readLock() {
        lock.readLock().lock();
    }

    public void readUnlock() {
        lock.readLock().unlock();
    }

    public void writeLock() {
        lock.writeLock().lock();
    }

    public void writeUnlock() {
        lock.writeLock().unlock();
    }
}
