package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.parity.Xor;
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
    private static final int PAGE = 4096;

    /** Persists progress and outcomes; called on the sync thread. */
    interface Listener {
        void checkpoint(SyncJob job, long memberOffset) throws IOException;

        void finished(SyncJob job, boolean complete, Throwable error);
    }

    private final ArrayCore core;
    private final Raid5Layout layout;
    private final SyncAction action;
    private final Member target;
    private final int targetSlot;
    private final long startOffset;
    private final Listener listener;
    private final CountDownLatch done = new CountDownLatch(1);

    private volatile SyncLimits limits;
    private volatile boolean stopRequested;
    private volatile long position;
    private volatile double rate;
    private volatile long mismatchSectors;
    private volatile boolean running = true;
    private volatile String error;
    private Thread thread;

    SyncJob(ArrayCore core, SyncAction action, Member target, long startOffset, SyncLimits limits,
            Listener listener) {
        this.core = core;
        this.layout = core.layout;
        this.action = action;
        this.target = target;
        this.targetSlot = target == null ? -1 : target.slot;
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
        return new SyncProgress(action, position, layout.memberBytesUsed(), rate, mismatchSectors, isRunning, error,
                target == null ? null : target.name());
    }

    /**
     * Stripes of one pass in flight at once: every member phase of a stripe is already parallel
     * across members; several stripes at once keep latency-bound members (NBD, disks) busy and,
     * on memory, use more than one core for the XOR. The recovery and resync offsets advance only
     * over the contiguous prefix of finished stripes, so a checkpoint is exact.
     */
    static int lanes(ArrayCore core) {
        for (Member m : core.slots) {
            if (m != null && !m.async.completesInline()) {
                return 8;
            }
        }
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
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
    private long rateStart;
    private long rateBytes;
    private long lastForeground;
    private volatile Throwable laneFailure;

    private void run() {
        boolean complete = false;
        Throwable failure = null;
        long chunk = layout.chunkSize();
        long total = layout.memberBytesUsed();
        lastCheckpoint = System.nanoTime();
        windowStart = lastCheckpoint;
        rateStart = lastCheckpoint;
        lastForeground = core.foregroundOps.sum();
        nextStripe = startOffset / chunk;
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
            core.config.readLock();
            try {
                core.checkUsable();
                core.locks.lock(stripe);
                try {
                    syncStripe(stripe);
                } finally {
                    core.locks.unlock(stripe);
                }
            } finally {
                core.config.readUnlock();
            }
            finishStripe(stripe, chunk);
        }
    }

    /** A stripe is done: advance the contiguous watermark, the rate, a checkpoint, then throttle. */
    private void finishStripe(long stripe, long chunk) throws IOException, InterruptedException {
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
            }
            progressLock.notifyAll();
            windowBytes += chunk;
            rateBytes += chunk;
            long now = System.nanoTime();
            if (now - rateStart >= 250_000_000L) {
                rate = rateBytes * 1e9 / (now - rateStart);
                rateStart = now;
                rateBytes = 0;
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

    private void syncStripe(long stripe) throws IOException {
        long stripeOffset = layout.memberOffset(stripe);
        Member[] s = core.slots;
        StripeScratch scratch = core.scratch.borrow();
        try {
            int piece = core.scratch.pieceSize();
            for (int x = 0; x < layout.chunkSize(); x += piece) {
                int len = Math.min(piece, layout.chunkSize() - x);
                if (action == SyncAction.RECOVER) {
                    recoverPiece(s, stripe, stripeOffset + x, len, scratch);
                } else {
                    parityPiece(s, stripe, stripeOffset, stripeOffset + x, len, scratch);
                }
            }

        } finally {
            core.scratch.giveBack(scratch);
        }
    }

    private void recoverPiece(Member[] s, long stripe, long memberOffset, int len, StripeScratch scratch)
            throws IOException {
        if (target.state == MemberState.FAULTY || (s[targetSlot] != target && core.replacements[targetSlot] != target)) {
            throw new IOException("rebuild target " + target.name() + " left the array");
        }
        long stripeOffset = layout.memberOffset(stripe);
        Member primary = s[targetSlot];
        ByteBuffer out = scratch.parity;
        int outOffset = 0;
        boolean inPlace = false;
        try {
            int count = 0;
            if (primary != null && primary != target && primary.readable(stripeOffset, memberOffset, len)) {
                // Replacing a working member: copy it rather than reconstruct (if its read fails, it
                // is faulty now and the piece is reconstructed below).
                scratch.beginReads();
                if (scratch.addSource(0, primary, targetSlot, memberOffset, len, core)
                        & scratch.awaitReads(core)) {
                    count = 1;
                } else {
                    scratch.release(); // drop a pin of the failed copy before reconstructing
                }
            }
            if (count == 0) {
                for (int j = 0; j < s.length; j++) {
                    Member m = s[j];
                    if (j != targetSlot && m != null && m.readable(stripeOffset) && m.hasBadBlocks(memberOffset, len)
                            && target.canRecordBadBlocks()) {
                        // md's recovery over a survivor's bad block: the target cannot get those
                        // sectors, so they become bad blocks on the target too.
                        target.recordBadBlocks(memberOffset, len);
                        core.hooks.badBlocksRecorded(target);
                        LOG.warn("{}: {} lists bad blocks at member offset {}: recorded as bad on {} too",
                                core.name, m.name(), memberOffset, target.name());
                        return;
                    }
                }
                scratch.beginReads(); // the survivors' reads go out at once
                boolean ok = true;
                for (int j = 0; j < s.length && ok; j++) {
                    if (j == targetSlot) {
                        continue;
                    }
                    Member m = s[j];
                    ok = m != null && m.readable(stripeOffset, memberOffset, len)
                            && scratch.addSource(count++, m, j, memberOffset, len, core);
                }
                ok = scratch.awaitReads(core) && ok; // also after a failure: nothing may land in freed buffers
                if (!ok) {
                    throw core.stripeLost(stripe);
                }
            }
            inPlace = scratch.pinDestination(target, memberOffset, len);
            if (inPlace) {
                out = scratch.destination;
                outOffset = scratch.destinationOffset;
            }
            Xor.parity(out, outOffset, scratch.sources, scratch.offsets, count, len);
        } finally {
            scratch.release();
        }
        if (inPlace) {
            return;
        }
        try {
            target.writeData(memberOffset, out, outOffset, len);
        } catch (IOException e) {
            core.memberFailed(target, e);
            throw new IOException("rebuild target " + target.name() + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * One member lists bad blocks in the piece: as md does, its bytes are rebuilt from the others
     * (parity included) and, unless only checking, written over the bad sectors, which makes them good.
     */
    private void rewriteBadPiece(Member[] s, int bad, long stripeOffset, long memberOffset, int len,
                                 StripeScratch scratch) throws IOException {
        if (action == SyncAction.CHECK) {
            return;
        }
        readAll(s, bad, memberOffset, len, scratch);
        int count = 0;
        for (int j = 0; j < s.length; j++) {
            if (j != bad) {
                scratch.sources[count] = scratch.buffers[j];
                scratch.offsets[count] = 0;
                count++;
            }
        }
        Xor.parity(scratch.parity, 0, scratch.sources, scratch.offsets, count, len);
        java.util.Arrays.fill(scratch.sources, null);
        try {
            s[bad].writeData(memberOffset, scratch.parity, 0, len);
        } catch (IOException e) {
            core.memberFailed(s[bad], e);
            throw new IOException(action + " stopped: " + s[bad].name() + " failed", e);
        }
        LOG.info("{}: {} rewrote {} bytes at member offset {} over bad blocks of {}", core.name, action, len,
                memberOffset, s[bad].name());
    }

    /**
     * Reads the piece of every member but {@code skip} (-1: none) into its scratch buffer, all at
     * once; a failed read fails its member and stops the pass.
     */
    private void readAll(Member[] s, int skip, long memberOffset, int len, StripeScratch scratch) throws IOException {
        MemberPhase phase = scratch.phase;
        phase.begin();
        for (int j = 0; j < s.length; j++) {
            if (j != skip) {
                phase.read(s[j], memberOffset, scratch.buffers[j], 0, len);
            }
        }
        if (!phase.await()) {
            phase.failMembers(core);
            throw new IOException(action + " stopped: a member read failed (the member is marked faulty)");
        }
    }

    private void parityPiece(Member[] s, long stripe, long stripeOffset, long memberOffset, int len,
                             StripeScratch scratch) throws IOException {
        int paritySlot = layout.paritySlot(stripe);
        int bad = -1;
        for (int j = 0; j < s.length; j++) {
            if (s[j] == null || !s[j].readable(stripeOffset)) {
                throw new IOException(core.name + " is degraded: " + action + " needs every member");
            }
            if (s[j].hasBadBlocks(memberOffset, len)) {
                if (bad >= 0) {
                    LOG.warn("{}: {} skips member offset {}: {} and {} both list bad blocks there", core.name,
                            action, memberOffset, s[bad].name(), s[j].name());
                    return;
                }
                bad = j;
            }
        }
        if (bad >= 0) {
            rewriteBadPiece(s, bad, stripeOffset, memberOffset, len, scratch);
            return;
        }
        readAll(s, action == SyncAction.RESYNC ? paritySlot : -1, memberOffset, len, scratch);
        int count = 0;
        for (int j = 0; j < s.length; j++) {
            if (j != paritySlot) {
                scratch.sources[count] = scratch.buffers[j];
                scratch.offsets[count] = 0;
                count++;
            }
        }
        ByteBuffer computed = scratch.parity;
        Xor.parity(computed, 0, scratch.sources, scratch.offsets, count, len);
        boolean write = action == SyncAction.RESYNC;
        if (action != SyncAction.RESYNC) {
            ByteBuffer stored = scratch.buffers[paritySlot];
            long found = 0;
            for (int p = 0; p < len; p += PAGE) {
                int n = Math.min(PAGE, len - p);
                if (!Xor.equal(stored, p, computed, p, n)) {
                    found += PAGE / 512;
                }
            }
            if (found > 0) {
                mismatchSectors += found;
                write = action == SyncAction.REPAIR;
            }
        }
        if (write) {
            try {
                s[paritySlot].writeData(memberOffset, computed, 0, len);
            } catch (IOException e) {
                core.memberFailed(s[paritySlot], e);
                throw new IOException(action + " stopped: " + s[paritySlot].name() + " failed", e);
            }
            Member replacement = core.replacements[paritySlot];
            if (replacement != null && replacement.writable(stripeOffset)) {
                try {
                    replacement.writeData(memberOffset, computed, 0, len);
                } catch (IOException e) {
                    core.memberFailed(replacement, e);
                }
            }
        }
    }
}
