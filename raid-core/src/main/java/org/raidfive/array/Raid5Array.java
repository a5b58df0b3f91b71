package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.MdUuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A RAID-5 array over {@link MemberDisk}s, stored in Linux md's v1.2 format.
 *
 * <p>Made by {@link #create} or {@link #assemble}; it owns its member disks from then on and
 * closes them in {@link #close}. I/O ({@link #read}, {@link #write}, {@link #flush}) is safe from
 * any number of threads and runs on the calling thread. Offsets and lengths are in bytes and must
 * be multiples of 512.
 *
 * <p>Concurrency: every I/O holds the read side of a {@code PercpuRwSemaphore} (no shared write in
 * normal operation); member management ({@link #remove}, {@link #addSpare}, {@link #replace},
 * {@link #close}) quiesces the array by taking the write side, which waits for I/O in flight and
 * holds new I/O back. Writes serialise per stripe. A member failure found by I/O does not quiesce:
 * the member's state changes and the superblocks are written before that I/O returns.
 *
 * <p>Lock order, outermost first: {@code syncLock} (which pass runs), the configuration write side
 * (quiesce), {@code meta.lock} (metadata). Nothing holding a later one takes an earlier one; the
 * I/O path holds only the configuration read side and, on failure, {@code meta.lock}.
 */
public final class Raid5Array implements AsyncDisk {
    private static final Logger LOG = LoggerFactory.getLogger(Raid5Array.class);
    static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(60);

    final ArrayCore core;
    final ArrayMetadata meta;
    private final ReadPath reads;
    private final WritePath writes;
    private final Object syncLock = new Object();
    private SyncJob sync;
    private SyncProgress lastSync;
    private volatile SyncLimits syncLimits;
    private final boolean readOnly;
    /** md's safemode_delay: an array with no write for this long is marked clean on disk. */
    static final long SAFEMODE_DELAY_MILLIS = 200;
    /**
     * md's per-array thread: reacts to failures (starts recovery onto a spare) and runs safemode,
     * both off the I/O path.
     */
    private final java.util.concurrent.ScheduledExecutorService daemon;
    private volatile boolean closed;
    /** Set first thing in close(): nothing new (recovery, safemode) may start once it is. */
    private volatile boolean closing;

    private final AssemblyReport assemblyReport;

    Raid5Array(ArrayCore core, ArrayMetadata meta, SyncLimits syncLimits, boolean readOnly, AssemblyReport report) {
        this.assemblyReport = report;
        this.readOnly = readOnly;
        this.core = core;
        this.meta = meta;
        this.reads = new ReadPath(core);
        reads.owner(this);
        this.writes = new WritePath(core);
        this.syncLimits = syncLimits;
        this.daemon = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "raid-daemon-" + core.name);
            t.setDaemon(true);
            return t;
        });
        meta.onMemberFailed(this::memberFailedAsync);
        if (!readOnly) {
            daemon.scheduleWithFixedDelay(this::safemodeTick, SAFEMODE_DELAY_MILLIS, SAFEMODE_DELAY_MILLIS,
                    TimeUnit.MILLISECONDS);
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
            if (core.takeWriteNote() || !meta.dirty() || closing || isFailed()) {
                return;
            }
            quiesce(() -> {
                if (core.takeWriteNote() || !meta.dirty() || closing || isFailed()) {
                    return;
                }
                for (Member m : liveMembers()) {
                    try {
                        m.disk.flush();
                    } catch (IOException e) {
                        core.hooks.memberFailed(m, e);
                    }
                }
                if (!isFailed()) {
                    meta.markClean();
                }
            });
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: safemode could not mark the array clean: {}", core.name, e.getMessage());
        }
    }

    /** Called under the metadata lock by whichever thread saw the failure: only schedules. */
    private void memberFailedAsync() {
        if (closing || readOnly) {
            return;
        }
        try {
            daemon.execute(() -> {
                try {
                    if (!closing && !isFailed()) {
                        startSync();
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.warn("{}: could not start recovery after a failure: {}", core.name, e.getMessage());
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // closing: nothing to start
        }
    }

    /**
     * Creates a new array: writes an md v1.2 superblock to every member and spare. Unless the spec
     * assumes the members are clean, a resync computes all parity in the background at once.
     */
    public static Raid5Array create(ArraySpec spec, List<? extends MemberDisk> members,
                                    List<? extends MemberDisk> spares) throws IOException {
        return Assembler.create(spec, members, spares);
    }

    public static Raid5Array create(ArraySpec spec, List<? extends MemberDisk> members) throws IOException {
        return create(spec, members, List.of());
    }

    /**
     * Opens an existing array from its members, in any order. Refuses, naming the member and the
     * reason: a disk without a superblock or with a corrupt one, members of different arrays, the same
     * member twice, a stale member (unless taken as a spare), a member too small for its recorded
     * data, too few members to run, and a dirty degraded array unless forced.
     */
    public static Raid5Array assemble(List<? extends MemberDisk> disks, AssembleOptions options) throws IOException {
        return Assembler.assemble(disks, options);
    }

    public static Raid5Array assemble(List<? extends MemberDisk> disks) throws IOException {
        return assemble(disks, AssembleOptions.DEFAULT);
    }

    // ------------------------------------------------------------------ I/O

    @Override
    public long size() {
        return core.arrayBytes();
    }

    @Override
    public void read(long offset, ByteBuffer dst, int dstOffset, int length) throws IOException {
        core.checkRange("read", offset, length);
        checkBuffer(dst, dstOffset, length);
        core.config.readLock();
        try {
            checkOpen();
            core.checkUsable();
            if (core.syncRunning) {
                core.foregroundOps.increment();
            }
            reads.read(offset, dst, dstOffset, length);
        } finally {
            core.config.readUnlock();
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int srcOffset, int length) throws IOException {
        core.checkRange("write", offset, length);
        checkBuffer(src, srcOffset, length);
        core.config.readLock();
        try {
            checkOpen();
            if (readOnly) {
                throw new IOException(core.name + " was opened read-only");
            }
            core.checkUsable();
            if (core.syncRunning) {
                core.foregroundOps.increment();
            }
            core.noteWrite();
            meta.beforeWrite();
            writes.write(offset, src, srcOffset, length);
        } finally {
            core.config.readUnlock();
        }
    }

    // ------------------------------------------------------------------ completion-based I/O

    /**
     * Completion-based read: a read inside one chunk on a healthy member goes straight to that
     * member's own completion-based I/O (no thread is held while it is in flight, so a queue depth
     * of 64 is 64 member reads in flight); anything else (several chunks, a degraded stripe, a read
     * error to correct) runs the blocking path on the shared I/O threads. The callback runs on an
     * I/O thread, or inline for memory members.
     */
    @Override
    public void readAsync(long offset, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        try {
            core.checkRange("read", offset, length);
            checkBuffer(dst, dstOffset, length);
        } catch (RuntimeException e) {
            callback.ioDone(tag, new IOException(e.getMessage(), e));
            return;
        }
        core.config.readLock();
        boolean handedOver = false;
        try {
            if (!closed && core.failure == null) {
                if (core.syncRunning) {
                    core.foregroundOps.increment();
                }
                handedOver = reads.tryBypassAsync(offset, dst, dstOffset, length, callback, tag);
            }
        } finally {
            if (!handedOver) {
                core.config.readUnlock();
            }
        }
        if (!handedOver) {
            blockingAsync.readAsync(offset, dst, dstOffset, length, callback, tag);
        }
    }

    /**
     * Completion-based write: the blocking write (its member I/O issued a phase at a time, all of
     * a phase at once) on the shared I/O threads, which grow to the writes in flight.
     */
    @Override
    public void writeAsync(long offset, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        blockingAsync.writeAsync(offset, src, srcOffset, length, callback, tag);
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        blockingAsync.flushAsync(callback, tag);
    }

    /** True when every member completes inline (memory): then callers run I/O on their own threads. */
    @Override
    public boolean completesInline() {
        for (Member m : core.slots) {
            if (m != null && !m.async.completesInline()) {
                return false;
            }
        }
        return true;
    }

    /** This array's blocking calls alone (not its completion-based ones), for the shared I/O threads. */
    MemberDisk blockingView() {
        return blocking;
    }

    private final MemberDisk blocking = new MemberDisk() {
        @Override
        public long size() {
            return Raid5Array.this.size();
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            Raid5Array.this.read(position, dst, dstOffset, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            Raid5Array.this.write(position, src, srcOffset, length);
        }

        @Override
        public void flush() throws IOException {
            Raid5Array.this.flush();
        }

        @Override
        public String name() {
            return Raid5Array.this.name();
        }

        @Override
        public void close() {
            // the array's own close closes it
        }
    };

    /** {@link #blocking} on the shared I/O threads (declared after it: field initialisers run in order). */
    private final AsyncDisk blockingAsync = AsyncDisk.of(blocking);

    AsyncDisk blockingAsync() {
        return blockingAsync;
    }

    /** Makes every acknowledged write durable on every live member. */
    @Override
    public void flush() throws IOException {
        core.config.readLock();
        try {
            checkOpen();
            core.checkUsable();
            for (Member m : liveMembers()) {
                try {
                    m.disk.flush();
                } catch (IOException e) {
                    core.memberFailed(m, e);
                }
            }
        } finally {
            core.config.readUnlock();
        }
    }

    private static void checkBuffer(ByteBuffer buffer, int offset, int length) {
        if (offset < 0 || length < 0 || offset > buffer.limit() - length) {
            throw new IndexOutOfBoundsException("buffer range [" + offset + ", " + offset + " + " + length
                    + ") outside a buffer of limit " + buffer.limit());
        }
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException(core.name + " is closed");
        }
    }

    private List<Member> liveMembers() {
        synchronized (meta.lock) {
            List<Member> live = new ArrayList<>(meta.members.size());
            for (Member m : meta.members) {
                if (m.state != MemberState.FAULTY) {
                    live.add(m);
                }
            }
            return live;
        }
    }

    @Override
    public String name() {
        return core.name;
    }

    // ------------------------------------------------------------------ state

    public Raid5Layout layout() {
        return core.layout;
    }

    public CounterMode counterMode() {
        return core.counterMode;
    }

    public String uuid() {
        return MdUuid.format(meta.uuid);
    }

    public boolean isDegraded() {
        for (Member m : core.slots) {
            if (m == null || m.state != MemberState.IN_SYNC) {
                return true;
            }
        }
        return false;
    }

    public boolean isReadOnly() {
        return readOnly;
    }

    public boolean isFailed() {
        return core.failure != null;
    }

    /** What {@code mdadm --detail} would show. */
    public ArrayStatus status() {
        SyncProgress progress = syncProgress();
        synchronized (meta.lock) {
            List<ArrayStatus.MemberStatus> list = new ArrayList<>();
            for (Member m : meta.members) {
                list.add(new ArrayStatus.MemberStatus(m.name(), m.devNumber, MdUuid.format(m.deviceUuid),
                        m.state == MemberState.SPARE ? -1 : m.slot, m.state, meta.isReplacement(m), m.recoveryOffset,
                        m.dataOffsetBytes, m.disk.size()));
            }
            list.sort((a, b) -> Integer.compare(a.slot() < 0 ? Integer.MAX_VALUE : a.slot(),
                    b.slot() < 0 ? Integer.MAX_VALUE : b.slot()));
            boolean degraded = isDegraded();
            boolean failed = isFailed();
            boolean clean = !meta.dirty();
            StringBuilder state = new StringBuilder(clean ? "clean" : "active");
            if (failed) {
                state.append(", FAILED");
            } else if (degraded) {
                state.append(", degraded");
            }
            if (progress != null && progress.running()) {
                state.append(progress.action() == SyncAction.RECOVER ? ", recovering"
                        : progress.action() == SyncAction.RESYNC ? ", resyncing" : ", checking");
            } else if (meta.recoveryCp() != Long.MAX_VALUE) {
                state.append(", resync pending");
            }
            Raid5Layout l = core.layout;
            return new ArrayStatus(uuid(), meta.name, 5, l.algorithm().mdadmName(), l.chunkSize(), l.arrayBytes(),
                    l.memberBytesUsed(), l.disks(), meta.eventsLocked(), clean, degraded, failed, state.toString(),
                    progress, List.copyOf(list), meta.recoveryCp(), org.raidfive.md.MdTime.toInstant(meta.ctime),
                    java.time.Instant.ofEpochSecond(meta.utimeLocked()));
        }
    }

    /**
     * What assembly left out or forced ({@link AssemblyReport#NONE} for a created array). Disks it
     * left out are not the array's: the caller closes them.
     */
    public AssemblyReport assemblyReport() {
        return assemblyReport;
    }

    /** md's mismatch_cnt from the last check or repair, in sectors; -1 if none ran. */
    public long mismatchSectors() {
        return meta.mismatchSectors();
    }

    // ------------------------------------------------------------------ member management

    private Member find(MemberDisk disk) {
        synchronized (meta.lock) {
            for (Member m : meta.members) {
                if (m.disk == disk) {
                    return m;
                }
            }
        }
        throw new IllegalArgumentException(disk.name() + " is not a member of " + core.name);
    }

    /** Marks a member faulty, as {@code mdadm --fail} does; the array goes on degraded. */
    public void fail(MemberDisk disk) throws IOException {
        Member m = find(disk);
        LOG.info("{}: failing {} on request", core.name, m.name());
        try {
            meta.memberFailed(m, new IOException("failed on request"));
        } catch (ArrayFailedException e) {
            LOG.error("{}: failing {} failed the array", core.name, m.name());
            throw e;
        }
    }

    /**
     * Takes a faulty or spare member out of the array (md's hot-remove). Quiesces the array, switches
     * the member's {@code nr_pending} to atomic mode and waits for its exact zero, so every I/O that
     * was in flight on it has completed when this returns. The disk is closed.
     */
    public void remove(MemberDisk disk) throws IOException {
        Member m = find(disk);
        stopSyncTargeting(m);
        quiesce(() -> {
            if (m.state != MemberState.FAULTY && m.state != MemberState.SPARE) {
                throw new IllegalStateException(m.name() + " is " + m.state.name().toLowerCase(java.util.Locale.ROOT)
                        + " in " + core.name + "; only a faulty or spare member can be removed (fail it first)");
            }
            detach(m);
        });
        m.releaseClaim();
        m.disk.close();
    }

    /** Caller quiesced. Drains the member's I/O and drops it from the configuration and metadata. */
    private void detach(Member m) throws IOException {
        m.nrPending.switchToAtomicSync();
        try {
            if (!m.nrPending.awaitZero(DRAIN_TIMEOUT)) {
                throw new IOException(m.name() + ": in-flight I/O did not drain within " + DRAIN_TIMEOUT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while draining " + m.name());
        }
        synchronized (meta.lock) {
            Member[] s = core.slots.clone();
            Member[] r = core.replacements.clone();
            for (int i = 0; i < s.length; i++) {
                if (s[i] == m) {
                    s[i] = null;
                }
                if (r[i] == m) {
                    r[i] = null;
                }
            }
            core.slots = s;
            core.replacements = r;
            meta.members.remove(m);
            meta.updateFailureLocked();
            meta.writeAll();
        }
        LOG.info("{}: removed {}", core.name, m.name());
    }

    /**
     * Adds a hot spare (md's hot-add). Its superblock is written at once. A degraded array takes it
     * into the missing or faulty slot (removing the faulty member) and starts rebuilding onto it.
     */
    public void addSpare(MemberDisk disk) throws IOException {
        addSpare(disk, true);
    }

    /**
     * Adds a hot spare; with {@code startRecovery} false a degraded array takes it into the empty
     * slot only when a pass is started later ({@link #startSync()}), e.g. by a foreground rebuild.
     */
    public void addSpare(MemberDisk disk, boolean startRecovery) throws IOException {
        Member spare = Assembler.newSpare(this, disk);
        try {
            quiesce(() -> {
                synchronized (meta.lock) {
                    meta.members.add(spare);
                    meta.writeAll();
                }
            });
        } catch (IOException | RuntimeException e) {
            releaseUnlessMember(spare);
            throw e;
        }
        LOG.info("{}: added spare {}", core.name, disk.name());
        if (startRecovery) {
            startRecoveryIfNeeded();
        }
    }

    /**
     * Rebuilds {@code member}'s data onto {@code spare} while {@code member} stays in service (md's
     * replace); when the copy completes the old member is marked faulty and removed.
     */
    public void replace(MemberDisk member, MemberDisk spare) throws IOException {
        Member old = find(member);
        if (old.state != MemberState.IN_SYNC) {
            throw new IllegalStateException(old.name() + " is not in sync; only an in-sync member can be replaced");
        }
        Member target = Assembler.newSpare(this, spare);
        try {
            replaceWith(old, target);
        } catch (IOException | RuntimeException e) {
            releaseUnlessMember(target);
            throw e;
        }
    }

    /** A member that never joined gives its storage back. */
    private void releaseUnlessMember(Member m) {
        synchronized (meta.lock) {
            if (meta.members.contains(m)) {
                return;
            }
        }
        m.releaseClaim();
    }

    private void replaceWith(Member old, Member target) throws IOException {
        synchronized (syncLock) {
            if (sync != null) {
                throw new IllegalStateException(core.name + " is busy with " + sync.action()
                        + "; replace after it finishes");
            }
            quiesce(() -> {
                synchronized (meta.lock) {
                    target.slot = old.slot;
                    target.state = MemberState.REBUILDING;
                    target.recoveryOffset = 0;
                    Member[] r = core.replacements.clone();
                    r[old.slot] = target;
                    core.replacements = r;
                    meta.members.add(target);
                    meta.writeAll();
                }
            });
            startSyncLocked(SyncAction.RECOVER, target, 0);
        }
    }

    /** Runs {@code change} with all I/O drained and held back, and the aligned-read counter exact. */
    void quiesce(IoAction change) throws IOException {
        core.config.writeLock();
        try {
            core.activeAlignedReads.switchToAtomicSync();
            try {
                if (!core.activeAlignedReads.awaitZero(DRAIN_TIMEOUT)) {
                    throw new IOException(core.name + ": aligned reads did not drain within " + DRAIN_TIMEOUT);
                }
                change.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while quiescing " + core.name);
            } finally {
                if (core.counterMode == CounterMode.PERCPU) {
                    core.activeAlignedReads.switchToPercpu();
                }
            }
        } finally {
            core.config.writeUnlock();
        }
    }

    /** A configuration change run while quiesced. */
    @FunctionalInterface
    interface IoAction {
        void run() throws IOException, InterruptedException;
    }

    // ------------------------------------------------------------------ background passes

    public void setSyncLimits(SyncLimits limits) {
        syncLimits = limits;
        synchronized (syncLock) {
            if (sync != null) {
                sync.setLimits(limits);
            }
        }
    }

    /** The running pass, or the last one to finish, or null. */
    public SyncProgress syncProgress() {
        synchronized (syncLock) {
            return sync != null ? sync.progress() : lastSync;
        }
    }

    /**
     * Starts what the array needs, as md's recovery thread decides: a resync if parity is not known
     * good, else recovery onto a member being rebuilt or a spare when the array is degraded. Returns
     * the action started, or null if nothing is needed (or a pass already runs).
     */
    public SyncAction startSync() throws IOException {
        synchronized (syncLock) {
            if (sync != null) {
                return null;
            }
            SyncAction a = startRecoveryIfNeededLocked();
            if (a != null) {
                return a;
            }
            long cp = meta.recoveryCp();
            if (cp != Long.MAX_VALUE && !isDegraded()) {
                startSyncLocked(SyncAction.RESYNC, null, cp);
                return SyncAction.RESYNC;
            }
            return null;
        }
    }

    /** Starts a check ({@code repair == false}) or repair pass; refused on a degraded array. */
    public void startCheck(boolean repair) throws IOException {
        synchronized (syncLock) {
            if (sync != null) {
                throw new IllegalStateException(core.name + " is busy with " + sync.action());
            }
            if (isDegraded()) {
                throw new IllegalStateException(core.name + " is degraded: parity cannot be checked");
            }
            startSyncLocked(repair ? SyncAction.REPAIR : SyncAction.CHECK, null, 0);
        }
    }

    /** Waits for the running pass to end; true if none runs (any more). */
    public boolean awaitSync(Duration timeout) throws InterruptedException {
        SyncJob job;
        synchronized (syncLock) {
            job = sync;
        }
        return job == null || job.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Stops the running pass at the next stripe, with its progress checkpointed to disk. */
    public void stopSync() throws InterruptedException {
        SyncJob job;
        synchronized (syncLock) {
            job = sync;
        }
        if (job != null) {
            job.requestStop();
            job.await(DRAIN_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    private void stopSyncTargeting(Member m) {
        SyncJob job;
        synchronized (syncLock) {
            job = sync;
        }
        if (job != null && job.target() == m) {
            job.requestStop();
        }
    }

    private void startRecoveryIfNeeded() throws IOException {
        synchronized (syncLock) {
            if (sync == null) {
                startRecoveryIfNeededLocked();
            }
        }
    }

    /** Picks a recovery target: a member already rebuilding, else a spare for an empty or faulty slot. */
    private SyncAction startRecoveryIfNeededLocked() throws IOException {
        if (isFailed()) {
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
            target = takeSpareIntoMissingSlot();
        }
        if (target == null) {
            return null;
        }
        startSyncLocked(SyncAction.RECOVER, target, target.recoveryOffset);
        return SyncAction.RECOVER;
    }

    private Member takeSpareIntoMissingSlot() throws IOException {
        synchronized (meta.lock) {
            if (meta.members.stream().noneMatch(m -> m.state == MemberState.SPARE) || !isDegraded()) {
                return null;
            }
        }
        Member[] chosen = new Member[1];
        quiesce(() -> {
            Member spare = null;
            int slot = -1;
            Member faulty = null;
            synchronized (meta.lock) {
                for (Member m : meta.members) {
                    if (m.state == MemberState.SPARE) {
                        spare = m;
                        break;
                    }
                }
                Member[] s = core.slots;
                for (int i = 0; i < s.length && spare != null; i++) {
                    if (s[i] == null || s[i].state == MemberState.FAULTY) {
                        slot = i;
                        faulty = s[i];
                        break;
                    }
                }
            }
            if (spare == null || slot < 0) {
                return;
            }
            if (faulty != null) {
                detach(faulty);
                faulty.releaseClaim();
                faulty.disk.close();
            }
            synchronized (meta.lock) {
                spare.slot = slot;
                spare.recoveryOffset = 0;
                spare.state = MemberState.REBUILDING;
                Member[] s = core.slots.clone();
                s[slot] = spare;
                core.slots = s;
                meta.writeAll();
            }
            chosen[0] = spare;
        });
        return chosen[0];
    }

    private void startSyncLocked(SyncAction action, Member target, long from) {
        LOG.info("{}: starting {}{} from member offset {}", core.name, action,
                target == null ? "" : " onto " + target.name(), from);
        sync = new SyncJob(core, action, target, from, syncLimits, new SyncJob.Listener() {
            @Override
            public void checkpoint(SyncJob job, long offset) throws IOException {
                syncCheckpoint(job, offset);
            }

            @Override
            public void finished(SyncJob job, boolean complete, Throwable error) {
                syncFinished(job, complete, error);
            }
        });
        sync.start();
    }

    private void syncCheckpoint(SyncJob job, long offset) throws IOException {
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

    private void syncFinished(SyncJob job, boolean complete, Throwable error) {
        SyncProgress p = job.ended();
        try {
            switch (job.action()) {
                case RESYNC:
                    meta.resyncedTo(complete ? Long.MAX_VALUE : p.doneBytes());
                    break;
                case RECOVER:
                    if (complete) {
                        finishRecovery(job.target());
                    } else if (job.target().state != MemberState.FAULTY && !isFailed()) {
                        meta.writeAll();
                    }
                    break;
                default:
                    if (complete) {
                        meta.setMismatchSectors(p.mismatchSectors());
                    }
                    break;
            }
            LOG.info("{}: {} {}{}", core.name, job.action(), complete ? "complete" : "stopped at " + p.doneBytes(),
                    error == null ? "" : " (" + error.getMessage() + ")");
        } catch (IOException e) {
            LOG.error("{}: recording the end of {} failed: {}", core.name, job.action(), e.getMessage());
        } finally {
            synchronized (syncLock) {
                lastSync = p;
                sync = null;
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

    /** The target holds everything: it becomes in sync; a replacement takes its slot and the old member goes. */
    private void finishRecovery(Member target) throws IOException {
        Member[] replaced = new Member[1];
        quiesce(() -> {
            synchronized (meta.lock) {
                int slot = target.slot;
                if (core.replacements[slot] == target) {
                    Member old = core.slots[slot];
                    Member[] s = core.slots.clone();
                    Member[] r = core.replacements.clone();
                    s[slot] = target;
                    r[slot] = null;
                    core.slots = s;
                    core.replacements = r;
                    if (old != null) {
                        old.state = MemberState.FAULTY;
                        replaced[0] = old;
                    }
                }
                target.state = MemberState.IN_SYNC;
                target.recoveryOffset = core.layout.memberBytesUsed();
                meta.writeAll();
            }
            if (replaced[0] != null) {
                detach(replaced[0]);
            }
        });
        if (replaced[0] != null) {
            replaced[0].releaseClaim();
            replaced[0].disk.close();
        }
        LOG.info("{}: {} is in sync", core.name, target.name());
    }

    // ------------------------------------------------------------------ close

    /**
     * For tests: the process dies here. Nothing more is written (not even a checkpoint), background
     * work stops, and the members' claims go as the kernel drops a dead process's locks; the disks
     * are left open for the test to close.
     */
    void crashForTest() throws InterruptedException {
        core.readOnly = true;
        closing = true;
        closed = true;
        daemon.shutdownNow();
        SyncJob job;
        synchronized (syncLock) {
            job = sync;
        }
        if (job != null) {
            job.requestStop();
            job.await(DRAIN_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
        }
        synchronized (meta.lock) {
            for (Member m : meta.members) {
                m.releaseClaim();
            }
        }
    }

    /**
     * Stops any background pass (checkpointed), drains I/O, flushes every member, marks the array
     * clean on disk and closes the member disks. Idempotent.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closing = true;
        try {
            stopSync();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        daemon.shutdown();
        try {
            daemon.awaitTermination(DRAIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            stopSync();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        IOException failure = null;
        core.config.writeLock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (!isFailed() && !readOnly) {
                for (Member m : liveMembers()) {
                    try {
                        m.disk.flush();
                    } catch (IOException e) {
                        core.hooks.memberFailed(m, e);
                    }
                }
                if (!isFailed()) {
                    meta.markClean();
                }
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            core.config.writeUnlock();
            List<Member> all;
            synchronized (meta.lock) {
                all = new ArrayList<>(meta.members);
            }
            for (Member m : all) {
                m.releaseClaim();
                try {
                    m.disk.close();
                } catch (IOException e) {
                    if (failure == null) {
                        failure = e;
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return core.name + " (" + core.layout + ")";
    }
}
