package org.raidfive.array;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.raidfive.counter.Backoff;
import org.raidfive.counter.ThreadStats;

/**
 * Per-stripe mutual exclusion without an array-wide lock: a fixed table of lock words, a stripe
 * hashing to one of them. Two stripes that share a word just serialise; since a thread holds at
 * most one stripe lock at a time, sharing cannot deadlock.
 *
 * <p>Each word sits alone in a 128-byte span (16 longs apart) so that threads locking different
 * stripes never write the same cache line or its adjacent-line prefetch partner. Locking is a CAS
 * from 0 to 1 (acquire), unlocking a release store of 0; a waiter spins briefly, then yields, then
 * parks with growing sleeps ({@link Backoff}). Holders keep the lock across member I/O, so waiters
 * must not burn a core; no wake-up list keeps lock and unlock allocation-free. Not reentrant.
 */
final class StripeLocks {
    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int STRIDE_SHIFT = 4; // 16 longs = 128 bytes

    private final long[] words;
    private final int mask;

    StripeLocks(int count) {
        if (Integer.bitCount(count) != 1) {
            throw new IllegalArgumentException("stripe lock count must be a power of two: " + count);
        }
        mask = count - 1;
        // One spare stride at each end keeps the first and last words off foreign lines too.
        words = new long[(count + 2) << STRIDE_SHIFT];
    }

    private int index(long stripe) {
        long h = stripe * 0x9E3779B97F4A7C15L;
        return ((int) (h >>> 40) & mask) + 1 << STRIDE_SHIFT;
    }

    /** The array's I/O statistics while live counters are published (else null): counts lock waits. */
    volatile ThreadStats stats;

    void lock(long stripe) {
        int i = index(stripe);
        if (WORDS.compareAndSet(words, i, 0L, 1L)) {
            return;
        }
        IoStats.one(stats, IoStats.LOCK_WAITS);
        for (int attempt = 0; ; attempt++) {
            if ((long) WORDS.getOpaque(words, i) == 0L && WORDS.compareAndSet(words, i, 0L, 1L)) {
                return;
            }
            Backoff.idle(attempt, this);
        }
    }

    /** Takes the stripe's lock if it is free; never waits. */
    boolean tryLock(long stripe) {
        return WORDS.compareAndSet(words, index(stripe), 0L, 1L);
    }

    void unlock(long stripe) {
        WORDS.setRelease(words, index(stripe), 0L);
    }
}
