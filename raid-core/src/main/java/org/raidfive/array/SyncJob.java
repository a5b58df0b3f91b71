package org.raidfive.array;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.raidfive.layout.Raid5Layout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One background pass over the stripes (resync, recover, check or repair), run on its own thread
 * while foreground I/O goes on.
 *
 * <p>Each stripe is handled under the configuration read lock and the stripe lock, so it is never
 * seen half-written by a foreground write, and reconfiguration (which takes the write side) can
 * happen between two stripes. Several stripes are in flight at once ({@link #lanes}), each lane
 * claiming the next; for recovery the target's {@code recoveryOffset} (and for resync the
 * resync offset) advances over the contiguous prefix of finished stripes, after their data is on
 * the target: the volatile store publishes those writes to any reader that then sees the target
 * as readable there.
 */
final class SyncJob {
    private static final Logger LOG = LoggerFactory.getLogger(SyncJob.class);
    private static final long CHECKPOINT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Persists progress and outcomes; called on the sync thread. */
    interface Listener {
        void checkpoint(SyncJob job, long memberOffset) throws IOException;

        void finished(SyncJob job, boolean complete, Throwable error);

        /** The pass passed {@code percent} (20, 40, 60, 80) of its range; called under its progress lock. */
        default void progressed(SyncJob job, int percent) {}
    }

    private final ArrayCore core;
    private final Raid5Layout layout;
    private final SyncAction action;
    private final Member target;
    private final long startOffset;
    private final Listener listener;
    private final CountDownLatch done = new CountDownLatch(1);

    private volatile SyncLimits limits;
    private volatile boolean stopRequested;
    private volatile long position;
    private volatile double rate;
    /** Summed over the lanes. */
    private final LongAdder mismatchSectors = new LongAdder();

    private volatile boolean running = true;
    private final long startedAt = System.nanoTime();
    private volatile long endedAt;
    private volatile String error;
    private Thread thread;

    SyncJob(ArrayCore core, SyncAction action, Member target, long startOffset, SyncLimits limits, Listener listener) {
        this.core = core;
        this.layout = core.layout;
        this.action = action;
        this.target = target;
        this.startOffset = Math.min(startOffset, layout.memberBytesUsed());
        this.position = this.startOffset;
        this.limits = limits;
        this.listener = listener;
    }

    SyncAction action() {
        return action;
    }

    Member target() {
        return target;
    }

    void start() {
        thread = new Thread(this::run, "raid-" + action.mdName() + "-" + core.name);
        thread.setDaemon(true);
        thread.start();
    }

    void setLimits(SyncLimits limits) {
        this.limits = limits;
    }

    /** Asks the pass to stop after the stripe in hand; its progress is checkpointed. */
    void requestStop() {
        stopRequested = true;
    }

    boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        return done.await(timeout, unit);
    }

    SyncProgress progress() {
        return snapshot(running);
    }

    /** The final figures, for the listener: the pass counts as running until its outcome is recorded. */
    SyncProgress ended() {
        return snapshot(false);
    }

    private SyncProgress snapshot(boolean isRunning) {
        long end = isRunning ? System.nanoTime() : endedAt;
        return new SyncProgress(
                action,
                position,
                layout.memberBytesUsed(),
                rate,
                mismatchSectors.sum(),
                isRunning,
                error,
                target == null ? null : target.name(),
                Duration.ofNanos(Math.max(0, end - startedAt)));
    }

    /**
     * Stripes of one pass in flight at once: every member phase of a stripe is already parallel
     * across members; several stripes at once keep latency-bound members (NBD, disks) busy and,
     * on memory, use more than one core for the XOR. The recovery and resync offsets advance only
     * over the contiguous prefix of finished stripes, so a checkpoint is exact. On members with 2 ms
     * of latency (bench/real-members) 8 lanes rebuilt at 0.24-0.41x of one member's sequential read
     * rate, 16 and 32 both at about 0.55x, where 2 cores ran out (4 bytes cross a socket per byte
     * rebuilt).
     */
    /**
     * Whether this pass may leave out chunks the write-intent bitmap has clean: a resync (md resyncs the
     * bits set), and a recovery onto a member re-added by the bitmap (it missed only those writes).
     */
    private boolean skipsCleanChunks() {
        return action == SyncAction.RESYNC || (action == SyncAction.RECOVER && target.bitmapRecovery);
    }

    static int lanes(ArrayCore core) {
        return core.table.completesInline
                ? Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()))
                : 16;
    }

    private static final int RING = 64;

    private final Object progressLock = new Object();
    /** Finished stripes ahead of the watermark, by stripe index modulo RING. */
    private final boolean[] finished = new boolean[RING];

    private long nextStripe;
    /** First stripe not yet finished (all below it are): the exact progress. */
    private long watermark;

    private long lastCheckpoint;
    private long windowStart;
    private long windowBytes;
    /**
     * The rate is taken over the last {@link #RATE_MARKS} marks, one every 250 ms (md's sync marks,
     * on a shorter scale): a 3 s window, so a few slow or fast stripes do not swing the rate or the
     * ETA the operator reads.
     */
    private static final int RATE_MARKS = 12;

    private final long[] markNanos = new long[RATE_MARKS];
    private final long[] markBytes = new long[RATE_MARKS];
    private int marks;
    private long workedBytes;
    private long lastForeground;
    private volatile Throwable laneFailure;
    /** Fifths of the range reported to the listener so far (under progressLock). */
    private int reportedFifth;

    private void run() {
        boolean complete = false;
        Throwable failure = null;
        long chunk = layout.chunkSize();
        long total = layout.memberBytesUsed();
        lastCheckpoint = System.nanoTime();
        windowStart = lastCheckpoint;
        markNanos[0] = lastCheckpoint;
        marks = 1;
        lastForeground = core.foregroundOps.sum();
        nextStripe = startOffset / chunk;
        reportedFifth =
                total == 0 ? 0 : (int) Math.min(4, startOffset * 5 / total); // a resumed pass reports what it passes
        watermark = nextStripe;
        core.syncRunning = true;
        try {
            int n = lanes(core);
            Thread[] helpers = new Thread[n - 1];
            for (int i = 0; i < helpers.length; i++) {
                helpers[i] = new Thread(this::laneQuietly, thread.getName() + "-lane" + (i + 1));
                helpers[i].setDaemon(true);
                helpers[i].start();
            }
            laneQuietly();
            for (Thread h : helpers) {
                h.join();
            }
            if (laneFailure != null) {
                throw laneFailure;
            }
            complete = position >= total;
            if (!complete) {
                listener.checkpoint(this, position);
            }
        } catch (Throwable t) {
            failure = t;
            error = t.getMessage() == null ? t.toString() : t.getMessage();
            LOG.warn("{} of {} stopped at member offset {}: {}", action, core.name, position, error);
        } finally {
            core.syncRunning = false;
            endedAt = System.nanoTime();
            try {
                listener.finished(this, complete && failure == null, failure);
            } finally {
                // Only now: whoever sees the pass stopped also sees its outcome (a rebuilt member in sync).
                running = false;
                done.countDown();
            }
        }
    }

    private void laneQuietly() {
        try {
            lane();
        } catch (Throwable t) {
            synchronized (progressLock) {
                if (laneFailure == null) {
                    laneFailure = t;
                }
            }
        }
    }

    /** Claims stripes in order and syncs each under the configuration read side and its stripe lock. */
    private void lane() throws IOException, InterruptedException {
        long chunk = layout.chunkSize();
        long total = layout.memberBytesUsed() / chunk;
        while (!stopRequested && laneFailure == null) {
            long stripe;
            synchronized (progressLock) {
                while (nextStripe - watermark >= RING && !stopRequested && laneFailure == null) {
                    progressLock.wait(10); // the window is full: the oldest stripe in flight is slow
                }
                if (nextStripe >= total || stopRequested || laneFailure != null) {
                    return;
                }
                stripe = nextStripe++;
                if (target != null) {
                    // Before this stripe is locked: from now on its foreground writes reach the target too.
                    target.writeLimit = Math.max(target.writeLimit, (stripe + 1) * chunk);
                }
            }
            boolean done;
            core.config.readLock();
            try {
                core.checkUsable();
                try (StripeOp op = core.ops.acquire(stripe)) {
                    done = syncStripe(op, stripe);
                }
            } finally {
                core.config.readUnlock();
            }
            finishStripe(stripe, chunk, done);
        }
    }

    /**
     * A stripe is done: advance the contiguous watermark, the rate, a checkpoint, then throttle.
     * Only stripes that did I/O ({@code worked}) count toward the rate and the speed limits, as md
     * counts only the sectors it synced, not those the bitmap let it skip.
     */
    private void finishStripe(long stripe, long chunk, boolean worked) throws IOException, InterruptedException {
        boolean checkpoint = false;
        long sleep;
        synchronized (progressLock) {
            finished[(int) (stripe % RING)] = true;
            while (finished[(int) (watermark % RING)]) {
                finished[(int) (watermark % RING)] = false;
                watermark++;
            }
            long reached = watermark * chunk;
            if (reached > position) {
                // The data of every stripe below is on the target: the volatile store publishes it
                // to any reader that then sees the target as readable there.
                if (action == SyncAction.RECOVER) {
                    target.recoveryOffset = reached;
                } else if (action == SyncAction.RESYNC || action == SyncAction.REPAIR) {
                    core.resyncOffset = Math.max(core.resyncOffset, reached);
                }
                position = reached;
                long total = layout.memberBytesUsed();
                int fifth = total == 0 ? 0 : (int) Math.min(4, position * 5 / total);
                while (reportedFifth < fifth) {
                    reportedFifth++;
                    listener.progressed(this, reportedFifth * 20); // each step once, even when a jump passes several
                }
            }
            progressLock.notifyAll();
            if (worked) {
                windowBytes += chunk;
                workedBytes += chunk;
            }
            long now = System.nanoTime();
            int newest = (marks - 1) % RATE_MARKS;
            if (now - markNanos[newest] >= 250_000_000L) {
                int oldest = marks < RATE_MARKS ? 0 : marks % RATE_MARKS;
                rate = (workedBytes - markBytes[oldest]) * 1e9 / (now - markNanos[oldest]);
                markNanos[marks % RATE_MARKS] = now;
                markBytes[marks % RATE_MARKS] = workedBytes;
                marks++;
            }
            if (now - lastCheckpoint >= CHECKPOINT_NANOS) {
                lastCheckpoint = now;
                checkpoint = true;
            }
            long foreground = core.foregroundOps.sum();
            boolean busy = foreground != lastForeground;
            lastForeground = foreground;
            sleep = throttleNanos(windowStart, windowBytes, busy);
            if (now - windowStart > 1_000_000_000L) {
                windowStart = now;
                windowBytes = 0;
            }
        }
        if (checkpoint) {
            listener.checkpoint(this, position);
        }
        if (sleep > 0) {
            TimeUnit.NANOSECONDS.sleep(sleep);
        }
    }

    /** How long to sleep while above max, or above min with foreground I/O going on (md's sync throttle). */
    private long throttleNanos(long windowStart, long windowBytes, boolean busy) {
        SyncLimits l = limits;
        long elapsed = Math.max(1, System.nanoTime() - windowStart);
        double speed = windowBytes * 1e9 / elapsed;
        long cap = busy ? l.minBytesPerSecond() : l.maxBytesPerSecond();
        if (speed > cap && cap != Long.MAX_VALUE) {
            long wantNanos = (long) (windowBytes * 1e9 / cap);
            return Math.min(wantNanos - elapsed, 500_000_000L);
        }
        return 0;
    }

    /** Syncs one stripe; false when the bitmap let it be skipped. */
    private boolean syncStripe(StripeOp op, long stripe) throws IOException {
        long stripeOffset = layout.memberOffset(stripe);
        if (skipsCleanChunks() && !core.consistency.mayBeInconsistent(stripeOffset, layout.chunkSize())) {
            return false; // no write since the bitmap was last clean here: nothing to resync or recover
        }
        int piece = core.ops.pieceSize();
        for (int x = 0; x < layout.chunkSize(); x += piece) {
            int len = Math.min(piece, layout.chunkSize() - x);
            if (action == SyncAction.RECOVER) {
                op.recoverPiece(target, stripeOffset + x, len);
            } else {
                long found = op.syncPiece(action, stripeOffset + x, len);
                if (found > 0) {
                    mismatchSectors.add(found);
                }
            }
        }
        return true;
    }
}
