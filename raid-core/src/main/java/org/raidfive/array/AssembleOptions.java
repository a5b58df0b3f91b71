package org.raidfive.array;

import java.util.Objects;
import org.raidfive.counter.CounterMode;

/**
 * How {@link Raid5Array#assemble} treats what it finds.
 *
 * @param force run a dirty and degraded array (the RAID-5 write hole: parity of stripes written at
 *              the crash may not match, so a reconstructed member can hold wrong data there);
 *              mdadm's {@code --force}
 * @param startSync start the passes the array needs (resync of a dirty array, recovery onto a
 *                  spare or a member that was rebuilding) in the background right away
 * @param takeStaleAsSpare a member whose events lag the array's (it failed or was removed earlier)
 *                         is taken in as a spare and rebuilt; without it such a member is refused
 * @param counterMode counters for the hot path: per-CPU striped (default) or one atomic
 * @param syncLimits speed limits for background passes
 * @param readOnly write nothing at all, not even superblocks: writes are refused and no pass starts
 * @param listener told of the array's events from the start (see {@link ArrayListener}), or null
 */
public record AssembleOptions(
        boolean force,
        boolean startSync,
        boolean takeStaleAsSpare,
        CounterMode counterMode,
        SyncLimits syncLimits,
        boolean readOnly,
        ArrayListener listener) {

    /** mdadm --assemble's defaults: no force, start the pass the array needs, per-CPU counters, md's speed limits, writable. */
    public static final AssembleOptions DEFAULT =
            new AssembleOptions(false, true, false, CounterMode.PERCPU, SyncLimits.MD_DEFAULT, false, null);

    /** Checks that the counter mode and the speed limits are given. */
    public AssembleOptions {
        Objects.requireNonNull(counterMode, "counterMode");
        Objects.requireNonNull(syncLimits, "syncLimits");
    }

    /** With mdadm's --force: start an array whose members failed together, or dirty and degraded. */
    public AssembleOptions withForce(boolean f) {
        return new AssembleOptions(f, startSync, takeStaleAsSpare, counterMode, syncLimits, readOnly, listener);
    }

    /** Whether assembly starts the resync or recovery the array needs. */
    public AssembleOptions withStartSync(boolean s) {
        return new AssembleOptions(force, s, takeStaleAsSpare, counterMode, syncLimits, readOnly, listener);
    }

    /** Whether a stale member is taken back as a spare and rebuilt (else refused). */
    public AssembleOptions withTakeStaleAsSpare(boolean t) {
        return new AssembleOptions(force, startSync, t, counterMode, syncLimits, readOnly, listener);
    }

    /** The hot-path counters. */
    public AssembleOptions withCounterMode(CounterMode mode) {
        return new AssembleOptions(force, startSync, takeStaleAsSpare, mode, syncLimits, readOnly, listener);
    }

    /** Read-only: nothing written at all, not even superblocks. */
    public AssembleOptions withReadOnly(boolean r) {
        return new AssembleOptions(force, startSync, takeStaleAsSpare, counterMode, syncLimits, r, listener);
    }

    /** Speed limits for background passes. */
    public AssembleOptions withSyncLimits(SyncLimits limits) {
        return new AssembleOptions(force, startSync, takeStaleAsSpare, counterMode, limits, readOnly, listener);
    }

    /** A listener registered before the array does anything (so it sees a resync or recovery that assembly starts). */
    public AssembleOptions withListener(ArrayListener l) {
        return new AssembleOptions(force, startSync, takeStaleAsSpare, counterMode, syncLimits, readOnly, l);
    }
}
