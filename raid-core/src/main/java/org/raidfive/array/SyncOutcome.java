package org.raidfive.array;

/**
 * What {@link Raid5Array#awaitSync} found: the pass it waited for and how it ended (or that it is
 * still running when the wait timed out).
 *
 * @param result how the pass ended, {@link Result#RUNNING} on timeout, {@link Result#NONE} if no pass has run
 * @param pass the pass's progress (final once it ended); null for {@link Result#NONE}
 */
public record SyncOutcome(Result result, SyncProgress pass) {

    /** How a pass ended. */
    public enum Result {
        /** No pass has run on this array (since it was opened). */
        NONE,
        /** The wait timed out: the pass is still running. */
        RUNNING,
        /** The pass covered the whole array. For a check, {@link #mismatchSectors()} says what it found. */
        DONE,
        /** The pass was stopped (on request, at close, or its target left) with its progress checkpointed. */
        STOPPED,
        /** The pass failed: {@link SyncProgress#error()} says why. */
        FAILED
    }

    static SyncOutcome of(SyncProgress p) {
        return p == null ? new SyncOutcome(Result.NONE, null) : new SyncOutcome(resultOf(p), p);
    }

    static Result resultOf(SyncProgress p) {
        if (p.running()) {
            return Result.RUNNING;
        }
        if (p.error() != null) {
            return Result.FAILED;
        }
        return p.complete() ? Result.DONE : Result.STOPPED;
    }

    /** True unless the wait timed out with the pass still running. */
    public boolean ended() {
        return result != Result.RUNNING;
    }

    /** Parity mismatches the pass found, in md's sectors; 0 when there is no pass. */
    public long mismatchSectors() {
        return pass == null ? 0 : pass.mismatchSectors();
    }
}
