package org.raidfive.nbd;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The server-wide budget of request and reply payload bytes in flight, beyond what each
 * connection may hold in its own reserve. Lock-free: one word, taken with CAS. It is touched only
 * by connections past their reserve (large requests, or a client that does not take its replies),
 * never on the path of small requests.
 */
final class InFlightBudget {
    private final AtomicLong available;
    private final long total;

    InFlightBudget(long bytes) {
        this.total = bytes;
        this.available = new AtomicLong(bytes);
    }

    /** Takes {@code bytes} if that many are left; never blocks. */
    boolean tryAcquire(long bytes) {
        while (true) {
            long now = available.get();
            if (now < bytes) {
                return false;
            }
            if (available.compareAndSet(now, now - bytes)) {
                return true;
            }
        }
    }

    void release(long bytes) {
        available.addAndGet(bytes);
    }

    long inUse() {
        return total - available.get();
    }
}
