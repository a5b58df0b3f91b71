package org.raidfive.array;

import org.raidfive.counter.ThreadStats;

/**
 * The layout of the I/O statistics the array and each member keep while live counters are
 * published ({@link ArrayCounters}), and the adds the I/O path makes: nothing at all while the
 * stats are null (one field read), else the calling thread's own cells.
 */
final class IoStats {
    static final int READS = 0;
    static final int WRITES = 1;
    static final int READ_BYTES = 2;
    static final int WRITE_BYTES = 3;
    static final int ERRORS = 4;
    /** Array only: times a writer found its stripe locked. */
    static final int LOCK_WAITS = 5;

    static final int MEMBER_WIDTH = 5;
    static final int ARRAY_WIDTH = 6;

    private IoStats() {}

    /** One read or write of {@code bytes}, if {@code stats} is on. */
    static void io(ThreadStats stats, boolean write, long bytes) {
        if (stats != null) {
            long[] own = stats.mine();
            ThreadStats.add(own, write ? WRITES : READS, 1);
            ThreadStats.add(own, write ? WRITE_BYTES : READ_BYTES, bytes);
        }
    }

    /** One of counter {@code counter} (an error, a lock wait), if {@code stats} is on. */
    static void one(ThreadStats stats, int counter) {
        if (stats != null) {
            stats.add(counter, 1);
        }
    }
}
