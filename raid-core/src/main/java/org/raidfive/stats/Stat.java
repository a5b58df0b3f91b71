package org.raidfive.stats;

import java.util.Locale;

/** What a live counter counts ({@link CountersFile}); the ordinal is the counter's Agrona type id. */
public enum Stat {
    /** Reads completed (array: requests; member: member I/Os). */
    READS,
    /** Writes completed. */
    WRITES,
    /** Bytes read. */
    READ_BYTES,
    /** Bytes written. */
    WRITE_BYTES,
    /** I/Os that failed. */
    ERRORS,
    /** md's cnt_corrected_read: sectors whose read error was corrected by rewriting them (members). */
    CORRECTED_READ_SECTORS,
    /** md's nr_pending: member I/Os in flight (a moving count while striped). */
    NR_PENDING,
    /** md's active_aligned_reads: reads in flight that bypass the stripe locks (array). */
    ACTIVE_ALIGNED_READS,
    /** Times a writer found its stripe locked and had to wait (array). */
    STRIPE_LOCK_WAITS,
    /** Where the running pass is, in member bytes (array); the pass's total is {@link #SYNC_TOTAL_BYTES}. */
    SYNC_POSITION_BYTES,
    /** The running pass's range in member bytes; 0 when no pass runs. */
    SYNC_TOTAL_BYTES,
    /** The running pass's rate, bytes per second. */
    SYNC_RATE,
    /** Array: 0 clean, 1 active, 2 degraded, 3 failed. Member: 0 in sync, 1 rebuilding, 2 spare, 3 faulty, 4 removed. */
    STATE,
    /** The member's slot, -1 for a spare. */
    SLOT,
    /** Events the array has had (array). */
    EVENTS,
    /** Array: 1 while the array changes shape (the pass in {@link #SYNC_POSITION_BYTES} is its reshape), else 0. */
    RESHAPING;

    /** The name {@code raid stat --json} uses. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
