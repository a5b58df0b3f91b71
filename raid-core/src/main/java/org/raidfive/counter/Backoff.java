package org.raidfive.counter;

import java.util.concurrent.locks.LockSupport;

/**
 * The one way raidfive waits for another thread without a wake-up: spin a little (the holder is
 * usually on another core and about to finish), then yield (it may share this core), then park with
 * sleeps that double from 1 us to 200 us (it is descheduled, or holds on across I/O). Stateless: the
 * caller counts its attempts, so a wait allocates nothing. Used by the stripe locks, AsyncIo's free
 * requests and submitter slots and a reference's release.
 */
public final class Backoff {
    static final int SPINS = 128;
    static final int YIELDS = 16;
    static final long MIN_PARK_NANOS = 1_000;
    static final long MAX_PARK_NANOS = 200_000;

    private Backoff() {}

    /**
     * Waits once, the {@code attempt}-th time (from 0) the caller found what it waits for not yet
     * there; {@code blocker} is what a thread dump shows it parked on.
     */
    public static void idle(int attempt, Object blocker) {
        if (attempt < SPINS) {
            Thread.onSpinWait();
        } else if (attempt < SPINS + YIELDS) {
            Thread.yield();
        } else {
            int doublings = Math.min(attempt - SPINS - YIELDS, 8);
            LockSupport.parkNanos(blocker, Math.min(MAX_PARK_NANOS, MIN_PARK_NANOS << doublings));
        }
    }
}
