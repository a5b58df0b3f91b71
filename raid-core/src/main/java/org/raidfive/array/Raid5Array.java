package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.ClaimMode;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.BitmapSuperblock;
import org.raidfive.md.DataOffset;
import org.raidfive.md.MdTime;
import org.raidfive.md.MdUuid;
import org.raidfive.md.PplHeader;
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
 * <p>This class is the API. Behind it: {@link ReadPath} and {@link WritePath} cut requests into
 * stripes, each worked by a pooled {@link StripeOp}; {@link Membership} makes every change of the
 * {@link MemberTable}; {@link Recovery} conducts background passes and safemode;
 * {@link ArrayMetadata} writes superblocks. Lock order, outermost first: the conductor's lock (which
 * pass runs), the configuration write side (quiesce), {@code meta.lock} (metadata). Nothing holding
 * a later one takes an earlier one; the I/O path holds only the configuration read side, a stripe
 * lock and, on failure, {@code meta.lock}.
 */
public final class Raid5Array implements AsyncDisk {
    private static final Logger LOG = LoggerFactory.getLogger(Raid5Array.class);

    /** How long a configuration change or close waits for I/O in flight unless {@link #setDrainTimeout} says otherwise. */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = ArrayCore.DEFAULT_DRAIN_TIMEOUT;

    final ArrayCore core;
    final ArrayMetadata meta;
    private final ReadPath reads;
    private final WritePath writes;
    private final Membership membership;
    private final Recovery recovery;
    private final boolean readOnly;
    private volatile boolean closed;
    private volatile ArrayCounters counters;
    private final AssemblyReport assemblyReport;

    Raid5Array(ArrayCore core, ArrayMetadata meta, SyncLimits syncLimits, boolean readOnly, AssemblyReport report) {
        this.assemblyReport = report;
        this.readOnly = readOnly;
        this.core = core;
        this.meta = meta;
        this.reads = new ReadPath(core, blockingAsync); // field initialisers have run: it is set
        this.writes = new WritePath(core);
        this.membership = new Membership(core, meta);
        this.recovery = new Recovery(core, meta, membership, syncLimits, readOnly);
    }

    /**
     * Creates a new array: writes an md v1.2 superblock to every member and spare. Unless the spec
     * assumes the members are clean, a resync computes all parity in the background at once.
     */
    public static Raid5Array create(
            ArraySpec spec, List<? extends MemberDisk> members, List<? extends MemberDisk> spares) throws IOException {
        return Assembler.create(spec, members, spares);
    }

    /** Creates a new array with no spares; see {@link #create(ArraySpec, List, List)}. */
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

    /** Assembles with {@link AssembleOptions#DEFAULT}; see {@link #assemble(List, AssembleOptions)}. */
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
            core.countRequest(false, length);
        } catch (IOException | RuntimeException e) {
            core.countRequestError();
            throw e;
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
            core.countRequest(true, length);
        } catch (IOException | RuntimeException e) {
            core.countRequestError();
            throw e;
        } finally {
            core.config.readUnlock();
        }
    }

    // ------------------------------------------------------------------ completion-based I/O

    /**
     * Completion-based read: a read inside one chunk on a healthy member goes straight to that
     * member's own completion-based I/O (no thread is held while it is in flight, so a queue depth
     * of 64 is 64 member reads in flight); anything else (several chunks, a degraded stripe, a read
     * error to correct) runs the blocking path on the shared I/O threads, and so does any read while
     * a reconfiguration waits for the array (this call never blocks). The callback runs on an I/O
     * thread (the io_uring's loop for files, {@link org.raidfive.disk.IoBackend}), or inline for
     * memory members.
     */
    @Override
    public void readAsync(long offset, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        IOException refused = refusal("read", offset, dst, dstOffset, length);
        if (refused != null) {
            callback.ioDone(tag, refused);
            return;
        }
        // Never wait here: this is often a completion's thread (the io_uring's loop, an NBD reader)
        // chaining the next read, and the writer a wait would be for may itself be waiting for
        // reads that only this thread can complete. A pending writer sends the read to the blocking
        // path, which waits on an I/O thread.
        if (!core.config.tryReadLock()) {
            blockingAsync.readAsync(offset, dst, dstOffset, length, callback, tag);
            return;
        }
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
     * Completion-based write. On members that all take their I/O on the io_uring or on NBD
     * connections, a write inside one chunk of a healthy stripe runs without a thread (under the
     * resync policy, or a bitmap whose bits for it are already on disk): its reads are issued from
     * the calling thread, its parity computed and its writes issued when the reads complete, and the
     * callback runs when the writes complete: on the ring's thread, or for NBD members on a
     * continuation thread ({@link org.raidfive.disk.IoThreads#runContinuation}), since a
     * connection's reader must never wait for a request slot. Any other write (several chunks, a
     * degraded stripe, a stripe another write holds, a bitmap bit to write first, the partial parity
     * log, a reconfiguration waiting, memory or member kinds on I/O threads, a call made on an NBD
     * connection's reader) runs the blocking write on the shared I/O threads, its member I/O issued
     * a phase at a time, all of a phase at once. This call never blocks.
     */
    @Override
    public void writeAsync(long offset, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        if (readOnly || !core.table.writesWithoutThread) {
            blockingAsync.writeAsync(offset, src, srcOffset, length, callback, tag);
            return;
        }
        IOException refused = refusal("write", offset, src, srcOffset, length);
        if (refused != null) {
            callback.ioDone(tag, refused);
            return;
        }
        if (!core.config.tryReadLock()) { // never wait here: see readAsync
            blockingAsync.writeAsync(offset, src, srcOffset, length, callback, tag);
            return;
        }
        boolean handedOver = false;
        try {
            // A clean array is marked dirty on disk first: the blocking path does that write.
            if (!closed && core.failure == null && meta.dirty()) {
                core.noteWrite();
                if (core.syncRunning) {
                    core.foregroundOps.increment();
                }
                handedOver = writes.tryWriteWithoutThread(offset, src, srcOffset, length, callback, tag);
            }
        } finally {
            if (!handedOver) {
                core.config.readUnlock();
            }
        }
        if (!handedOver) {
            blockingAsync.writeAsync(offset, src, srcOffset, length, callback, tag);
        }
    }

    /** Why a completion-based request cannot start (outside the array, a bad buffer), or null. */
    private IOException refusal(String op, long offset, ByteBuffer buffer, int bufferOffset, int length) {
        try {
            core.checkRange(op, offset, length);
            checkBuffer(buffer, bufferOffset, length);
            return null;
        } catch (IOException e) {
            return e;
        } catch (RuntimeException e) {
            return new IOException(e.getMessage(), e);
        }
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        blockingAsync.flushAsync(callback, tag);
    }

    /** True when every member completes inline (memory): then callers run I/O on their own threads. */
    @Override
    public boolean completesInline() {
        return core.table.completesInline;
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
            for (Member m : membership.liveMembers()) {
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

    @Override
    public String name() {
        return core.name;
    }

    // ------------------------------------------------------------------ state

    /** The array's geometry: layout, chunk size, members. */
    public Raid5Layout layout() {
        return core.layout;
    }

    /** The hot-path counters the array runs with. */
    public CounterMode counterMode() {
        return core.counterMode;
    }

    /** The array's UUID as mdadm prints it ({@code xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx}). */
    public String uuid() {
        return MdUuid.format(meta.uuid);
    }

    /** True while a slot has no member in sync (reads of it are reconstructed). */
    public boolean isDegraded() {
        return membership.isDegraded();
    }

    /** True when opened read-only: nothing is ever written. */
    public boolean isReadOnly() {
        return readOnly;
    }

    /** True once more than one member is out: every I/O is refused with {@link ArrayFailedException}. */
    public boolean isFailed() {
        return core.failure != null;
    }

    /** What {@code mdadm --detail} would show. */
    /** A member is part-rebuilt, or a spare waits for an empty slot, and no pass runs to do it. */
    private boolean recoveryPendingLocked(boolean degraded) {
        for (Member m : meta.members) {
            if (m.state == MemberState.REBUILDING || (degraded && m.state == MemberState.SPARE)) {
                return true;
            }
        }
        return false;
    }

    /** A snapshot of the array as {@code mdadm --detail} shows it. */
    public ArrayStatus status() {
        SyncProgress progress = syncProgress();
        synchronized (meta.lock) {
            List<ArrayStatus.MemberStatus> list = new ArrayList<>();
            for (Member m : meta.members) {
                list.add(new ArrayStatus.MemberStatus(
                        m.name(),
                        m.devNumber,
                        MdUuid.format(m.deviceUuid),
                        m.state == MemberState.SPARE ? -1 : m.slot,
                        m.state,
                        meta.isReplacement(m),
                        m.recoveryOffset,
                        m.dataOffsetBytes,
                        m.disk.size()));
            }
            list.sort((a, b) -> Integer.compare(
                    a.slot() < 0 ? Integer.MAX_VALUE : a.slot(), b.slot() < 0 ? Integer.MAX_VALUE : b.slot()));
            boolean degraded = isDegraded();
            boolean failed = isFailed();
            // "clean" as mdadm --detail says it (md's in_sync): no write in flight. A resync pending
            // does not make it "active" there (md-vm: a dirty array md resyncs shows "clean, resyncing"),
            // only in the superblock, which raid examine shows as mdadm --examine does.
            boolean clean = !meta.dirty();
            StringBuilder state = new StringBuilder(clean ? "clean" : "active");
            if (failed) {
                state.append(", FAILED");
            } else if (degraded) {
                state.append(", degraded");
            }
            if (progress != null && progress.running()) {
                state.append(
                        progress.action() == SyncAction.RECOVER
                                ? ", recovering"
                                : progress.action() == SyncAction.RESYNC ? ", resyncing" : ", checking");
            } else if (meta.recoveryCp() != Long.MAX_VALUE) {
                state.append(", resyncing (PENDING)"); // mdadm's words for md's resync=PENDING
            } else if (!failed && recoveryPendingLocked(degraded)) {
                state.append(", recovering (PENDING)");
            }
            Raid5Layout l = core.layout;
            return new ArrayStatus(
                    uuid(),
                    meta.name,
                    5,
                    l.algorithm().mdadmName(),
                    l.chunkSize(),
                    l.arrayBytes(),
                    l.memberBytesUsed(),
                    l.disks(),
                    meta.eventsLocked(),
                    clean,
                    degraded,
                    failed,
                    state.toString(),
                    progress,
                    List.copyOf(list),
                    meta.recoveryCp(),
                    MdTime.toInstant(meta.ctime),
                    Instant.ofEpochSecond(meta.utimeLocked()));
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

    /** Marks a member faulty, as {@code mdadm --fail} does; the array goes on degraded. */
    public void fail(MemberDisk disk) throws IOException {
        membership.fail(membership.find(disk));
    }

    /**
     * Takes a faulty or spare member out of the array (md's hot-remove). Quiesces the array, switches
     * the member's {@code nr_pending} to atomic mode and waits for its exact zero, so every I/O that
     * was in flight on it has completed when this returns. The disk is closed.
     */
    public void remove(MemberDisk disk) throws IOException {
        Member m = membership.find(disk);
        recovery.stopTargeting(m);
        membership.remove(m);
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
        membership.addSpare(Assembler.newSpare(this, disk));
        if (startRecovery) {
            recovery.startRecoveryIfNeeded();
        }
    }

    /**
     * Rebuilds {@code member}'s data onto {@code spare} while {@code member} stays in service (md's
     * replace); when the copy completes the old member is marked faulty and removed.
     */
    public void replace(MemberDisk member, MemberDisk spare) throws IOException {
        Member old = membership.find(member);
        if (old.state != MemberState.IN_SYNC) {
            throw new ArrayStateException(old.name() + " is not in sync; only an in-sync member can be replaced");
        }
        Member target = Assembler.newSpare(this, spare);
        try {
            recovery.replace(old, target);
        } catch (IOException | RuntimeException e) {
            membership.releaseUnlessMember(target);
            throw e;
        }
    }

    /** Runs {@code change} with all I/O drained and held back, and the aligned-read counter exact. */
    void quiesce(Membership.IoAction change) throws IOException {
        membership.quiesce(change);
    }

    // ------------------------------------------------------------------ consistency policy

    /** How this array keeps parity consistent across a crash. */
    public ConsistencyPolicy consistencyPolicy() {
        return core.consistency.policy();
    }

    /**
     * Switches the consistency policy of the running array, as {@code mdadm --grow
     * --consistency-policy} and {@code --bitmap internal|none} do, quiesced: the area of a partial
     * parity log (8 sectors after the superblock, up to 1 MiB, before the bad block log) or of a
     * write-intent bitmap (mdadm's placement and default chunk, every bit set, cleared by the daemon
     * where the array is in sync) is written on every live member before the superblocks name it.
     * Refused, with nothing written, without room for it.
     */
    public void setConsistencyPolicy(ConsistencyPolicy policy) throws IOException {
        Objects.requireNonNull(policy, "policy");
        checkOpen();
        if (readOnly) {
            throw new IOException(core.name + " was opened read-only");
        }
        membership.quiesce(() -> {
            synchronized (meta.lock) {
                if (policy == consistencyPolicy()) {
                    return;
                }
                long bitmapRoom = policy == ConsistencyPolicy.BITMAP ? bitmapRoom() : 0;
                int[] pplArea = policy == ConsistencyPolicy.PPL ? pplArea() : null;
                core.consistency = ConsistencyPort.RESYNC;
                meta.bitmapOffset = 0;
                meta.bitmapBitBytes = 0;
                meta.pplOffset = 0;
                meta.pplSize = 0;
                if (policy == ConsistencyPolicy.BITMAP) {
                    boolean degraded = isDegraded();
                    core.consistency = Assembler.newBitmap(
                            core,
                            meta,
                            bitmapRoom,
                            0,
                            membership.liveMembers(),
                            end -> end > core.resyncOffset || degraded);
                } else if (policy == ConsistencyPolicy.PPL) {
                    int[] area = pplArea;
                    PartialParityLog log = new PartialParityLog(core, meta.uuid, area[1]);
                    for (Member m : membership.allMembers()) {
                        m.pplOffset = area[0];
                        m.pplSize = area[1];
                    }
                    for (Member m : membership.liveMembers()) {
                        log.writeAreaTo(m);
                    }
                    meta.pplOffset = area[0];
                    meta.pplSize = area[1];
                    core.consistency = log;
                }
                meta.writeAll();
            }
        });
    }

    // ------------------------------------------------------------------ size

    /**
     * The most each member can hold for the array as its disk reports its size now (md's {@code
     * --size max}): the smallest data area of the members not faulty, spares included, rounded down to
     * the chunk. Larger than {@link Raid5Layout#memberBytesUsed()} once the member disks grew: each
     * member's disk is asked for its size first ({@link MemberDisk#refreshSize}), so files extended
     * under an open array count.
     *
     * @throws IOException if a member's disk cannot tell its size
     */
    public long maxMemberBytes() throws IOException {
        checkOpen();
        long max = Long.MAX_VALUE;
        for (Member m : membership.liveMembers()) {
            m.disk.refreshSize();
            max = Math.min(max, m.dataRoomBytes());
        }
        long chunk = core.layout.chunkSize();
        return max / chunk * chunk;
    }

    /**
     * Grows the space the array uses on each member to {@code memberBytes} (rounded down to the chunk)
     * after the member disks grew (files extended under the open array included: each disk is asked
     * for its size again), as {@code mdadm --grow --size} and md's {@code raid5_resize} do:
     * the stripes the array has keep their place, new ones follow, and {@link #size()} grows by the
     * new stripes' data. Quiesced, in two superblock updates on every live member, each safe to be
     * cut short by a crash: first each member's data size (its disk's room), then the array's size
     * with the resync offset at the old size, so the new stripes are resynced (md's {@code
     * recovery_cp}; a resync starts here unless the array is degraded). A write-intent bitmap is
     * written anew over the new size first, its chunk doubled until its bits fit the sectors the old
     * one had (md's {@code md_bitmap_resize} for 1.2 metadata), the new region's bits set and needed.
     * Returns false, writing nothing, when the array already uses that much.
     *
     * @throws ArrayConfigException with nothing written: a partial parity log (md refuses to resize
     *     with one), a size smaller than the one in use (shrinking is not supported), or a member
     *     whose disk has no room for it (named)
     * @throws ArrayStateException with nothing written while a pass runs
     */
    public boolean growMemberBytes(long memberBytes) throws IOException {
        checkOpen();
        if (readOnly) {
            throw new IOException(core.name + " was opened read-only");
        }
        boolean[] grew = new boolean[1];
        recovery.withoutPass(
                "grow",
                () -> membership.quiesce(() -> {
                    synchronized (meta.lock) {
                        grew[0] = growQuiesced(memberBytes);
                    }
                }));
        if (grew[0]) {
            recovery.startSync();
        }
        return grew[0];
    }

    private boolean growQuiesced(long memberBytes) throws IOException {
        Raid5Layout old = core.layout;
        long chunk = old.chunkSize();
        long target = memberBytes / chunk * chunk;
        if (consistencyPolicy() == ConsistencyPolicy.PPL) {
            throw new ArrayConfigException(core.name + " keeps a partial parity log, and md does not resize an array "
                    + "with one: switch to the resync or bitmap policy, grow, and switch back");
        }
        if (target < old.memberBytesUsed()) {
            throw new ArrayConfigException(core.name + " uses " + old.memberBytesUsed() + " bytes of each member; "
                    + target + " (rounded down to the " + chunk + "-byte chunk) would shrink it, which is not "
                    + "supported");
        }
        if (target == old.memberBytesUsed()) {
            return false;
        }
        List<Member> live = membership.liveMembers();
        for (Member m : live) {
            m.disk.refreshSize(); // a file extended under the open array
            long room = m.dataRoomBytes();
            if (room < target) {
                throw new ArrayConfigException(m.name() + " has room for " + room + " bytes of data after its data "
                        + "offset, " + (target - room) + " too few for " + target + " per member");
            }
        }
        WriteIntentBitmap bitmap = WriteIntentBitmap.in(core);
        long bitmapChunk = bitmap == null ? 0 : resizedBitmapChunk(bitmap, target);
        // First update: each member's data size (md's super_1_rdev_size_change). The array's size is
        // unchanged, so a crash here leaves the array as it was.
        for (Member m : live) {
            m.dataSizeSectors = m.dataRoomBytes() / 512;
        }
        meta.writeAll();
        // Second update: the new geometry, resynced from the old size. A crash part-way leaves some
        // members one event behind with the old size; assembly takes the freshest, whose size every
        // member's data size (above) already holds.
        long oldBytes = old.memberBytesUsed();
        core.growLayout(target);
        meta.needResyncFrom(Math.min(meta.recoveryCp(), oldBytes));
        if (bitmap != null) {
            boolean degraded = isDegraded();
            long from = core.resyncOffset;
            core.consistency = ConsistencyPort.RESYNC;
            core.consistency = Assembler.newBitmap(
                    core, meta, bitmap.areaSectors(), bitmapChunk, live, end -> end > from || degraded);
        }
        meta.writeAll();
        LOG.info(
                "{}: grown from {} to {} bytes per member ({} to {} bytes); resync from {}",
                core.name,
                oldBytes,
                target,
                old.arrayBytes(),
                core.layout.arrayBytes(),
                core.resyncOffset);
        return true;
    }

    /**
     * md's {@code md_bitmap_resize} on 1.2 metadata, which records no room for the bitmap: the
     * sectors the bitmap has now, its chunk doubled until the bits for {@code memberBytes} fit. mdadm's
     * {@code min_chunk} count (one bit more than md's) decides the fit, as {@link Assembler#newBitmap}
     * checks it.
     */
    private static long resizedBitmapChunk(WriteIntentBitmap bitmap, long memberBytes) {
        return Math.max(bitmap.chunkBytes(), BitmapSuperblock.minimumChunk(memberBytes / 512, bitmap.areaSectors()));
    }

    /**
     * mdadm's room for a bitmap added to an existing 1.2 array ({@code add_internal_bitmap1}, not
     * creating): from 8 sectors after the superblock to the bad block log (or the data), at most 128
     * KiB when the chunk is mdadm's; in sectors.
     */
    private long bitmapRoom() throws ArrayConfigException {
        long room = DataOffset.ADDED_BITMAP_MAX_SECTORS;
        for (Member m : membership.liveMembers()) {
            room = Math.min(room, DataOffset.addedBitmapRoom(m.bblogOffset, m.bblogSize, m.dataOffsetBytes / 512));
        }
        if (room <= 1) {
            throw new ArrayConfigException(core.name + " has no room for a write-intent bitmap between its "
                    + "superblock and its bad block log or data");
        }
        return room;
    }

    /** mdadm's placement of a partial parity log added to an existing 1.2 array: {offset, size} in sectors. */
    private int[] pplArea() throws ArrayConfigException {
        if (core.layout.disks() > PplHeader.MAX_DISKS) {
            throw new ArrayConfigException(core.name + " has " + core.layout.disks() + " members; md's partial "
                    + "parity log takes at most " + PplHeader.MAX_DISKS);
        }
        long room = Long.MAX_VALUE;
        for (Member m : membership.liveMembers()) {
            room = Math.min(room, DataOffset.addedPplRoom(m.bblogOffset, m.dataOffsetBytes / 512));
        }
        long size = DataOffset.addedPplSize(room, core.layout.chunkSize());
        if (size < 0) {
            throw new ArrayConfigException(core.name + " has no room for a partial parity log: " + room
                    + " sectors between the superblock and the bad block log or data, md needs "
                    + (PplHeader.SIZE / 512 + 8));
        }
        return new int[] {PplHeader.AREA_OFFSET, (int) size};
    }

    /**
     * How long a membership or policy change, safemode's clean mark and {@link #close} wait for the
     * I/O in flight (and a running pass to stop) before giving up. A member I/O that never completes
     * (a hung remote disk) then turns into an {@link IOException} naming the member, with nothing
     * changed, instead of a hang. Default {@link #DEFAULT_DRAIN_TIMEOUT}.
     */
    public void setDrainTimeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("drain timeout must be positive, got " + timeout);
        }
        core.drainTimeout = timeout;
    }

    /** See {@link #setDrainTimeout}. */
    public Duration drainTimeout() {
        return core.drainTimeout;
    }

    /**
     * md's re-add: {@code disk}, a former member of this array whose slot is empty now, takes its slot
     * back. When the array keeps a write-intent bitmap and the member left no earlier than the bitmap
     * was last cleared ({@code events_cleared}), only the chunks with bits set are recovered onto it;
     * otherwise it is rebuilt in full and the outcome says why. Recovery starts at once.
     */
    public ReAddOutcome reAdd(MemberDisk disk) throws IOException {
        checkOpen();
        if (readOnly) {
            throw new IOException(core.name + " was opened read-only");
        }
        ReAddOutcome outcome = membership.reAdd(disk);
        recovery.startRecoveryIfNeeded();
        return outcome;
    }

    // ------------------------------------------------------------------ background passes

    /** md's speed limits for background passes, also for the one running now. */
    public void setSyncLimits(SyncLimits limits) {
        recovery.setLimits(limits);
    }

    /** The running pass, or the last one to finish, or null. */
    public SyncProgress syncProgress() {
        return recovery.progress();
    }

    /**
     * Starts what the array needs, as md's recovery thread decides: a resync if parity is not known
     * good, else recovery onto a member being rebuilt or a spare when the array is degraded. Returns
     * the action started, or null if nothing is needed (or a pass already runs).
     */
    public SyncAction startSync() throws IOException {
        return recovery.startSync();
    }

    /** Starts a check ({@code repair == false}) or repair pass; refused on a degraded array. */
    public void startCheck(boolean repair) throws IOException {
        recovery.startCheck(repair);
    }

    /**
     * Waits at most {@code timeout} for the running pass to end and says how it ended (done,
     * stopped, failed, with a check's mismatches), {@link SyncOutcome.Result#RUNNING} if it still
     * runs; with no pass running, how the last one ended ({@link SyncOutcome.Result#NONE} if none ran).
     */
    public SyncOutcome awaitSync(Duration timeout) throws InterruptedException {
        return recovery.await(timeout);
    }

    /**
     * Registers a listener for this array's events ({@link ArrayEvent.Kind}), delivered in order on
     * the array's event thread from now on. To see events from the start (a resync begun by
     * {@code create}), give the listener to {@link ArraySpec.Builder#listener} or
     * {@link AssembleOptions#withListener} instead.
     */
    public void addListener(ArrayListener listener) {
        core.events.add(listener);
    }

    /**
     * Publishes this array's live counters (per array and per member: reads, writes, bytes, errors,
     * corrected reads, nr_pending, active_aligned_reads, stripe lock waits, the pass's position and
     * rate, states) and its events to a memory-mapped file that other processes read while it runs
     * ({@code raid stat}, {@code raid monitor}, or {@link org.raidfive.stats.CountersFile#open}).
     * Until this is called the I/O path counts nothing. The counters stop and the file goes when the
     * returned object or the array is closed.
     *
     * <p>The file is written through Agrona, which needs this JVM to run with {@code --add-opens
     * java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED}; without
     * them this throws {@link IllegalStateException} saying so, and the array runs on uncounted.
     *
     * @param file where, e.g. {@code CountersFile.pathFor(CountersFile.defaultDirectory(), array.uuid())}
     */
    public synchronized ArrayCounters publishCounters(Path file) throws IOException {
        if (counters != null) {
            throw new IllegalStateException(name() + " already publishes its counters to " + counters.path());
        }
        checkOpen();
        counters = ArrayCounters.start(this, file);
        return counters;
    }

    /** Every member the array knows (for the counters publisher). */
    List<Member> allMembers() {
        return membership.allMembers();
    }

    /** Stops delivering events to {@code listener}. */
    public void removeListener(ArrayListener listener) {
        core.events.remove(listener);
    }

    /** Stops the running pass at the next stripe, with its progress checkpointed to disk. */
    public void stopSync() throws InterruptedException {
        recovery.stop();
    }

    // ------------------------------------------------------------------ close

    /**
     * For tests: the process dies here. Nothing more is written (not even a checkpoint), background
     * work stops, and the members' claims go as the kernel drops a dead process's locks; the disks
     * are left open for the test to close.
     */
    void crashForTest() throws InterruptedException {
        core.readOnly = true;
        closed = true;
        recovery.crash();
        for (Member m : membership.allMembers()) {
            m.releaseClaim();
        }
    }

    // ------------------------------------------------------------------ reshape

    /**
     * Starts changing the array's shape, as {@code mdadm --grow} does ({@link ReshapeSpec}: members
     * added or removed, chunk or layout changed), and hands the array over to the returned {@link
     * OnlineReshape}, which serves reads and writes throughout while the data moves in the background,
     * and gives back the array of the new shape from {@link OnlineReshape#finish}. Quiesced: the I/O
     * in flight drains, every member is flushed and the array marked clean (md's safemode write),
     * then the reshape's start is written on every member; from there this object is closed (its
     * calls refused) and its disks are the reshape's, and so are its listeners and, if it published
     * them, its live counters (in the same file). Refused, this array still open and serving,
     * nothing written beyond that clean mark, when it is read-only, failed, degraded or rebuilding,
     * has a spare the spec does not add, a resync, recovery or check running or pending, a partial
     * parity log (md refuses to reshape with one) or a write-intent bitmap (raidfive serves no writes
     * during such a reshape), or when the reshape is (no room to move the data offset, say: see
     * {@link OfflineReshape}).
     */
    public OnlineReshape reshape(ReshapeSpec spec) throws IOException {
        Objects.requireNonNull(spec, "spec");
        checkOpen();
        String busy = reshapeRefusal(spec);
        if (busy != null) {
            throw new ArrayStateException(busy);
        }
        List<MemberDisk> members = new ArrayList<>();
        OnlineReshape online;
        membership.lockConfiguration("reshape");
        try {
            checkOpen();
            String refusal = reshapeRefusal(spec);
            if (refusal != null) {
                throw new ArrayStateException(refusal);
            }
            membership.flushLiveMembers();
            if (isDegraded() || isFailed()) {
                throw new ArrayStateException(core.name + ": a member failed its flush: a reshape needs every member");
            }
            meta.markClean();
            for (Member m : core.table.slots) {
                members.add(m.disk);
            }
            List<Member> all = membership.allMembers();
            for (Member m : all) {
                m.releaseClaim();
            }
            try {
                online = OnlineReshape.begin(members, spec);
            } catch (IOException | RuntimeException e) {
                reclaim(all, e);
                throw e;
            }
            closed = true;
        } finally {
            core.config.writeUnlock();
        }
        try {
            recovery.shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ArrayCounters published = counters;
        closeEventsAndCounters();
        // the array's listeners and live counters go on with the reshape, from its start
        for (ArrayListener l : core.events.listeners()) {
            online.addListener(l);
        }
        if (published != null) {
            try {
                online.publishCounters(published.path());
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: the reshape is not publishing live counters: {}", core.name, e.getMessage());
            }
        }
        online.start(spec.syncLimits(), p -> {});
        LOG.info("{}: reshape started ({}), the array handed over to it", core.name, spec);
        return online;
    }

    /** Why {@link #reshape} is refused now, or null. */
    private String reshapeRefusal(ReshapeSpec spec) {
        if (readOnly) {
            return core.name + " was opened read-only";
        }
        if (isFailed()) {
            return core.name + " has failed";
        }
        if (core.consistency.policy() == ConsistencyPolicy.PPL) {
            return core.name + " has a partial parity log: md does not reshape with one (switch to resync first)";
        }
        if (WriteIntentBitmap.in(core) != null) {
            return core.name + " has a write-intent bitmap: raidfive serves no writes during its reshape (switch "
                    + "to resync first)";
        }
        SyncProgress progress = syncProgress();
        if (progress != null && progress.running()) {
            return core.name + ": a " + progress.action().name().toLowerCase(Locale.ROOT)
                    + " is running: wait for it or stop it first";
        }
        synchronized (meta.lock) {
            if (meta.recoveryCp() != Long.MAX_VALUE) {
                return core.name + " has a resync pending: run it first";
            }
            for (Member m : meta.members) {
                if (m.state == MemberState.SPARE) {
                    if (!spec.added().contains(m.disk)) {
                        return core.name + " has the spare " + m.name() + ", which the reshape does not add: "
                                + "add it or remove it first";
                    }
                } else if (m.state != MemberState.IN_SYNC) {
                    return core.name + ": " + m.name() + " is " + m.state.name().toLowerCase(Locale.ROOT)
                            + ": a reshape needs every member in sync";
                }
            }
            for (Member m : core.table.slots) {
                if (m == null) {
                    return core.name + " is degraded: a reshape needs every member in sync";
                }
            }
        }
        return null;
    }

    /** After a refused reshape start: the array takes its members back, or, if it cannot, fails closed. */
    private void reclaim(List<Member> all, Exception cause) {
        for (Member m : all) {
            try {
                m.claimed(m.disk.claim(ClaimMode.EXCLUSIVE, ArrayMetadata.holder(meta.name, meta.uuid)));
            } catch (IOException e) {
                closed = true; // another owner came in between: this array must not write any more
                cause.addSuppressed(new IOException(
                        core.name + " could not take " + m.name() + " back after the refused reshape, and is closed: "
                                + e.getMessage(),
                        e));
                return;
            }
        }
    }

    /**
     * Stops any background pass (checkpointed), drains I/O, flushes every member, marks the array
     * clean on disk and closes the member disks. Idempotent.
     *
     * @throws IOException if I/O in flight did not finish within the {@linkplain #setDrainTimeout
     *         drain timeout} (the message names the members it waits on): then nothing was written,
     *         the array stays open and keeps serving I/O, without background work, and may be closed
     *         again; or if the final flush or clean mark failed (the members are closed then)
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        try {
            recovery.shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        IOException failure = null;
        membership.lockConfiguration("close");
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (!isFailed() && !readOnly) {
                membership.flushLiveMembers();
                WriteIntentBitmap bitmap = WriteIntentBitmap.in(core);
                if (bitmap != null && !isFailed()) {
                    bitmap.clearIdleBits(); // md's bitmap flush at stop: only what still needs a pass stays set
                }
                if (!isFailed()) {
                    meta.markClean();
                }
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            core.config.writeUnlock();
            for (Member m : membership.allMembers()) {
                m.releaseClaim();
                try {
                    m.disk.close();
                } catch (IOException e) {
                    if (failure == null) {
                        failure = e;
                    }
                }
            }
            closeEventsAndCounters();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** The last of a close (or a hand-over to a reshape): events delivered, live counters unpublished. */
    private void closeEventsAndCounters() {
        core.events.close(); // what happened up to the close (CLEAN included) is delivered first
        ArrayCounters published = counters;
        if (published != null) {
            published.close();
        }
    }

    @Override
    public String toString() {
        return core.name + " (" + core.layout + ")";
    }
}
