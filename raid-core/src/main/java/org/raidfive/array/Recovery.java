package org.raidfive.array;

import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.raidfive.md.BitmapSuperblock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The array's background conductor, md's per-array thread and recovery logic: which pass runs
 * (resync, recovery onto a spare or replacement, check, repair), starting recovery when a member
 * fails, recording each pass's checkpoints and end, speed limits, and safemode (an idle array is
 * marked clean on disk). All of it off the I/O path.
 *
 * <p>Rules: at most one pass runs; {@code lock} guards which one and is the outermost lock (it may
 * quiesce through {@link Membership}, never the other way round). Reactions to failures are only
 * scheduled from the failing I/O's thread, never run there. Once {@link #shutdown} has begun,
 * nothing new starts.
 */
final class Recovery {
    private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);
    /** md's safemode_delay: an array with no write for this long is marked clean on disk. */
    static final long SAFEMODE_DELAY_MILLIS = 200;

    private final ArrayCore core;
    private final ArrayMetadata meta;
    private final Membership membership;
    private final Object lock = new Object();
    private final ScheduledExecutorService daemon;
    private SyncJob sync;
    private SyncProgress lastSync;
    private volatile SyncLimits limits;
    /** Set first thing at close: nothing new (recovery, safemode) may start once it is. */
    private volatile boolean closing;

    Recovery(ArrayCore core, ArrayMetadata meta, Membership membership, SyncLimits limits, boolean readOnly) {
        this.core = core;
        this.meta = meta;
        this.membership = membership;
        this.limits = limits;
        this.daemon = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "raid-daemon-" + core.name);
            t.setDaemon(true);
            return t;
        });
        if (!readOnly) {
            meta.onMemberFailed(this::memberFailed);
            daemon.scheduleWithFixedDelay(
                    this::safemodeTick, SAFEMODE_DELAY_MILLIS, SAFEMODE_DELAY_MILLIS, TimeUnit.MILLISECONDS);
            WriteIntentBitmap bitmap = WriteIntentBitmap.in(core);
            long sleep = bitmap == null
                    ? BitmapSuperblock.DEFAULT_DAEMON_SLEEP
                    : Math.max(1, bitmap.superblock().daemonSleep());
            daemon.scheduleWithFixedDelay(this::bitmapTick, sleep, sleep, TimeUnit.SECONDS);
        }
    }

    /**
     * md's safemode: if no write started during the last period, flush every member and mark the
     * array clean, so that a crash while idle needs no resync. Writers announce themselves with
     * {@link ArrayCore#noteWrite()} while holding the configuration read side; the check runs
     * quiesced, so no write is in flight and none can start until the clean state is on disk.
     */
    private void safemodeTick() {
        try {
            if (core.takeWriteNote() || !meta.dirty() || closing || core.failure != null) {
                return;
            }
            membership.quiesce(() -> {
                if (core.takeWriteNote() || !meta.dirty() || closing || core.failure != null) {
                    return;
                }
                membership.flushLiveMembers();
                if (core.failure == null) {
                    meta.markClean();
                }
            });
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: safemode could not mark the array clean: {}", core.name, e.getMessage());
        }
    }

    /** md's bitmap daemon: clears the bits of chunks idle for two passes (see {@link WriteIntentBitmap}). */
    private void bitmapTick() {
        WriteIntentBitmap bitmap = WriteIntentBitmap.in(core);
        if (bitmap == null || closing || core.failure != null) {
            return;
        }
        try {
            int cleared = bitmap.daemonPass();
            if (cleared > 0) {
                LOG.debug("{}: cleared {} write-intent bits", core.name, cleared);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: bitmap daemon: {}", core.name, e.getMessage());
        }
    }

    /** Called under the metadata lock by whichever thread saw the failure: only schedules. */
    private void memberFailed() {
        if (closing) {
            return;
        }
        try {
            daemon.execute(() -> {
                try {
                    if (!closing && core.failure == null) {
                        startSync();
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.warn("{}: could not start recovery after a failure: {}", core.name, e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            // closing: nothing to start
        }
    }

    void setLimits(SyncLimits l) {
        limits = l;
        synchronized (lock) {
            if (sync != null) {
                sync.setLimits(l);
            }
        }
    }

    /** The running pass, or the last one to finish, or null. */
    SyncProgress progress() {
        synchronized (lock) {
            return sync != null ? sync.progress() : lastSync;
        }
    }

    /**
     * Starts what the array needs, as md's recovery thread decides: a resync if parity is not known
     * good, else recovery onto a member being rebuilt or a spare when the array is degraded. Returns
     * the action started, or null if nothing is needed (or a pass already runs).
     */
    SyncAction startSync() throws IOException {
        synchronized (lock) {
            if (sync != null) {
                return null;
            }
            SyncAction a = startRecoveryIfNeededLocked();
            if (a != null) {
                return a;
            }
            long cp = meta.recoveryCp();
            if (cp != Long.MAX_VALUE && !membership.isDegraded()) {
                startLocked(SyncAction.RESYNC, null, cp);
                return SyncAction.RESYNC;
            }
            return null;
        }
    }

    /** Starts a check or repair pass; refused on a degraded array or while another pass runs. */
    void startCheck(boolean repair) throws IOException {
        synchronized (lock) {
            if (sync != null) {
                throw new ArrayStateException(core.name + " is busy with " + sync.action());
            }
            if (membership.isDegraded()) {
                throw new ArrayStateException(core.name + " is degraded: parity cannot be checked");
            }
            startLocked(repair ? SyncAction.REPAIR : SyncAction.CHECK, null, 0);
        }
    }

    /** Builds {@code target} beside {@code old} (md's replace); refused while another pass runs. */
    void replace(Member old, Member target) throws IOException {
        synchronized (lock) {
            if (sync != null) {
                throw new ArrayStateException(
                        core.name + " is busy with " + sync.action() + "; replace after it finishes");
            }
            membership.addReplacement(old, target);
            startLocked(SyncAction.RECOVER, target, 0);
        }
    }

    /** A change made while no pass runs. */
    interface Change {
        void run() throws IOException;
    }

    /** Runs {@code change} with no pass running and none able to start; refused while one runs. */
    void withoutPass(String what, Change change) throws IOException {
        synchronized (lock) {
            if (sync != null) {
                throw new ArrayStateException(
                        core.name + " is busy with " + sync.action() + "; " + what + " after it finishes");
            }
            change.run();
        }
    }

    /** Starts recovery onto a spare if the array needs it and nothing runs. */
    void startRecoveryIfNeeded() throws IOException {
        synchronized (lock) {
            if (sync == null) {
                startRecoveryIfNeededLocked();
            }
        }
    }

    /** Waits for the running pass to end: its outcome, RUNNING on timeout, or the last pass's if none runs. */
    SyncOutcome await(Duration timeout) throws InterruptedException {
        SyncJob job = running();
        if (job == null) {
            return SyncOutcome.of(progress());
        }
        job.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        return SyncOutcome.of(job.progress());
    }

    /** Stops the running pass at the next stripe, with its progress checkpointed to disk. */
    void stop() throws InterruptedException {
        SyncJob job = running();
        if (job != null) {
            job.requestStop();
            job.await(core.drainTimeout.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** Asks a pass rebuilding onto {@code m} to stop (it is leaving). */
    void stopTargeting(Member m) {
        SyncJob job = running();
        if (job != null && job.target() == m) {
            job.requestStop();
        }
    }

    private SyncJob running() {
        synchronized (lock) {
            return sync;
        }
    }

    /** Nothing new starts from now on; the running pass is stopped and the daemon ends. */
    void shutdown() throws InterruptedException {
        closing = true;
        stop();
        daemon.shutdown();
        daemon.awaitTermination(core.drainTimeout.toNanos(), TimeUnit.NANOSECONDS);
        stop(); // one the daemon started before it ended
    }

    /** For tests that simulate a crash: background work stops at once, nothing more is recorded. */
    void crash() throws InterruptedException {
        closing = true;
        daemon.shutdownNow();
        stop();
    }

    /** Picks a recovery target: a member already rebuilding, else a spare for an empty or faulty slot. */
    private SyncAction startRecoveryIfNeededLocked() throws IOException {
        if (core.failure != null) {
            return null;
        }
        Member target = null;
        synchronized (meta.lock) {
            for (Member m : meta.members) {
                if (m.state == MemberState.REBUILDING) {
                    target = m;
                    break;
                }
            }
        }
        if (target == null) {
            target = membership.takeSpareIntoMissingSlot();
        }
        if (target == null) {
            return null;
        }
        startLocked(SyncAction.RECOVER, target, target.recoveryOffset);
        return SyncAction.RECOVER;
    }

    private void startLocked(SyncAction action, Member target, long from) {
        LOG.info(
                "{}: starting {}{} from member offset {}",
                core.name,
                action,
                target == null ? "" : " onto " + target.name(),
                from);
        sync = new SyncJob(core, action, target, from, limits, new SyncJob.Listener() {
            @Override
            public void checkpoint(SyncJob job, long offset) throws IOException {
                Recovery.this.checkpoint(job, offset);
            }

            @Override
            public void finished(SyncJob job, boolean complete, Throwable error) {
                Recovery.this.finished(job, complete, error);
            }

            @Override
            public void progressed(SyncJob job, int percent) {
                core.events.publish(
                        ArrayEvent.Kind.PASS_PROGRESS,
                        job.target() == null ? null : job.target().name(),
                        job.action().name().toLowerCase(Locale.ROOT),
                        job.progress(),
                        percent);
            }
        });
        // Published before the pass starts, so that it comes before the pass's own progress events.
        core.events.publish(
                ArrayEvent.Kind.PASS_STARTED,
                target == null ? null : target.name(),
                action.name().toLowerCase(Locale.ROOT),
                new SyncProgress(
                        action,
                        from,
                        core.layout.memberBytesUsed(),
                        0,
                        0,
                        true,
                        null,
                        target == null ? null : target.name(),
                        Duration.ZERO));
        sync.start();
    }

    private void checkpoint(SyncJob job, long offset) throws IOException {
        switch (job.action()) {
            case RESYNC:
                meta.resyncedTo(offset);
                break;
            case RECOVER:
                meta.writeAll(); // carries the target's recovery_offset
                break;
            default:
                break;
        }
    }

    private void finished(SyncJob job, boolean complete, Throwable error) {
        SyncProgress p = job.ended();
        try {
            switch (job.action()) {
                case RESYNC:
                    meta.resyncedTo(complete ? Long.MAX_VALUE : p.doneBytes());
                    if (complete && !membership.isDegraded()) {
                        core.consistency.allSynced();
                    }
                    break;
                case RECOVER:
                    if (complete) {
                        membership.recovered(job.target());
                        if (!membership.isDegraded()) {
                            core.consistency.allSynced(); // whole again: degraded writes' bits may go
                        }
                    } else if (job.target().state != MemberState.FAULTY && core.failure == null) {
                        meta.writeAll();
                    }
                    break;
                default:
                    if (complete) {
                        meta.setMismatchSectors(p.mismatchSectors());
                    }
                    break;
            }
            LOG.info(
                    "{}: {} {}{}",
                    core.name,
                    job.action(),
                    complete ? "complete" : "stopped at " + p.doneBytes(),
                    error == null ? "" : " (" + error.getMessage() + ")");
        } catch (IOException e) {
            LOG.error("{}: recording the end of {} failed: {}", core.name, job.action(), e.getMessage());
        } finally {
            synchronized (lock) {
                lastSync = p;
                sync = null;
            }
            SyncOutcome.Result result = SyncOutcome.resultOf(p);
            core.events.publish(
                    ArrayEvent.Kind.PASS_FINISHED,
                    job.target() == null ? null : job.target().name(),
                    job.action().name().toLowerCase(Locale.ROOT) + " "
                            + result.name().toLowerCase(Locale.ROOT)
                            + (p.error() == null ? "" : ": " + p.error())
                            + (job.action() == SyncAction.CHECK || job.action() == SyncAction.REPAIR
                                    ? ", " + p.mismatchSectors() + " mismatched sectors"
                                    : ""),
                    p);
            if (result == SyncOutcome.Result.DONE
                    && job.action() == SyncAction.RECOVER
                    && job.target().state == MemberState.IN_SYNC) {
                core.events.publish(
                        ArrayEvent.Kind.SPARE_ACTIVE, job.target().name(), "slot " + job.target().slot, null);
            }
        }
        if (complete && job.action() == SyncAction.RECOVER && !closing) {
            try {
                startSync();
            } catch (IOException e) {
                LOG.error("{}: could not start the next pass: {}", core.name, e.getMessage());
            }
        }
    }
}
