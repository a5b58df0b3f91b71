package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.jctools.queues.MpmcArrayQueue;
import org.raidfive.disk.AlignedBuffers;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.IoThreads;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.parity.Xor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One stripe operation, the engine's unit of work (SPDK's {@code stripe_request}): the stripe, its
 * parity slot, the member table it runs against, its buffers, and the plan it executes. Every
 * path that needs more than one member's bytes is a plan here: a degraded or corrected read
 * ({@link #readSlot}, {@link #xorOthers}), a write piece by read-modify-write, reconstruct-write,
 * full stripe or data alone ({@link #writePiece}), a rebuild piece ({@link #recoverPiece}), and a
 * resync, check or repair piece ({@link #syncPiece}). "The XOR of the other members" exists once,
 * {@link #gatherOthers} plus {@link #xorSourcesInto}.
 *
 * <p>Each phase of a plan (the reads it needs, then the writes of data and parity) issues all its
 * member I/O at once through {@link MemberPhase} and continues when every one has completed; a
 * member whose I/O failed is failed through {@link ArrayCore#memberFailed} and the plan re-plans
 * against the states as they are now.
 *
 * <p>Pooled ({@link Pool}): every path enters a stripe the same way, {@code try (StripeOp op =
 * core.ops.acquire(stripe))}, which locks the stripe and lends one thread an operation on it;
 * closing it gives it back and unlocks. The caller holds the configuration read side throughout;
 * nothing is allocated per operation in steady state. The member table is read once per operation: it changes only while
 * the array is quiesced, which the configuration read side excludes.
 *
 * <p>Sources: a member's bytes are used in place when its disk offers direct access (memory), pinned
 * with one {@code nr_pending} until {@link #release}, else read into that slot's piece buffer.
 */
final class StripeOp implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StripeOp.class);
    private static final int PAGE = 4096;

    private enum Plan {
        READ_MODIFY_WRITE,
        RECONSTRUCT_WRITE,
        DATA_ONLY
    }

    private final ArrayCore core;
    /** For mapping only: bounds are the core's (a size change replaces its layout, mapping alike). */
    private final Raid5Layout layout;

    private final int pieceSize;
    /** One piece buffer per slot: a member's bytes read for this operation. */
    private final ByteBuffer[] buffers;
    /** Computed parity, or rebuilt bytes, when they cannot be computed in place. */
    private final ByteBuffer scratch;

    private final ByteBuffer[] sources;
    private final int[] offsets;
    private final boolean[] direct;
    private int sourceCount;
    /** Members whose memory is used in place by the operation in hand, each holding one nr_pending. */
    private final Member[] pinned;

    private int pinnedCount;
    private final MemberPhase phase;

    private long stripe;
    private long stripeOffset;
    private int paritySlot;
    private MemberTable table;

    StripeOp(ArrayCore core, int pieceSize) {
        this.core = core;
        this.layout = core.layout;
        this.pieceSize = pieceSize;
        int slots = layout.disks();
        buffers = new ByteBuffer[slots];
        for (int i = 0; i < slots; i++) {
            buffers[i] = AlignedBuffers.allocate(pieceSize);
        }
        scratch = AlignedBuffers.allocate(pieceSize);
        // Read-modify-write XORs old parity plus old and new bytes of every written member.
        sources = new ByteBuffer[2 * slots + 1];
        offsets = new int[2 * slots + 1];
        direct = new boolean[2 * slots + 1];
        pinned = new Member[2 * slots + 2];
        phase = new MemberPhase(4 * slots + 4);
    }

    /** Gives the operation back to its pool and unlocks its stripe. */
    @Override
    public void close() {
        core.ops.giveBack(this);
    }

    private StripeOp on(long s) {
        stripe = s;
        stripeOffset = layout.memberOffset(s);
        paritySlot = layout.paritySlot(s);
        table = core.table;
        return this;
    }

    // ------------------------------------------------------------------ reads

    /**
     * Produces {@code n} bytes of {@code slot} at {@code inChunk} of this stripe into {@code dst}:
     * from the member when it can be read there, else from the others. Members whose reads fail are
     * failed until it succeeds or the stripe is lost. Caller holds the stripe lock.
     */
    void readSlot(int slot, int inChunk, ByteBuffer dst, int dstOffset, int n) throws IOException {
        try {
            for (int done = 0; done < n; ) {
                int len = Math.min(pieceSize, n - done);
                if (readPiece(slot, stripeOffset + inChunk + done, dst, dstOffset + done, len)) {
                    done += len;
                }
            }
        } finally {
            release();
        }
    }

    /** One piece of {@link #readSlot}; false when a member failed and the piece must be planned again. */
    private boolean readPiece(int slot, long memberOffset, ByteBuffer dst, int dstOffset, int len) throws IOException {
        core.checkUsable();
        Member target = table.slots[slot];
        if (target != null && target.readable(stripeOffset, memberOffset, len)) {
            try {
                target.readData(memberOffset, dst, dstOffset, len);
                return true;
            } catch (IOException e) {
                core.memberFailed(target, e);
                return false;
            }
        }
        if (!othersReadable(slot, memberOffset, len)) {
            throw core.stripeLost(stripe);
        }
        return xorOthers(slot, memberOffset, len, dst, dstOffset);
    }

    /** True when every slot but {@code slot} can be read at {@code [memberOffset, +len)}. */
    private boolean othersReadable(int slot, long memberOffset, int len) {
        Member[] s = table.slots;
        for (int j = 0; j < s.length; j++) {
            if (j != slot && (s[j] == null || !s[j].readable(stripeOffset, memberOffset, len))) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code dst = } XOR of every slot but {@code skip} at {@code memberOffset}, all their reads issued
     * at once ({@code len <= } the piece size). False when a member read failed: that member is
     * faulty now and the caller re-plans. The caller has checked the others are readable.
     */
    private boolean xorOthers(int skip, long memberOffset, int len, ByteBuffer dst, int dstOffset) throws IOException {
        if (!gatherOthers(skip, memberOffset, len, -1)) {
            return false;
        }
        xorSourcesInto(dst, dstOffset, len);
        return true;
    }

    /**
     * {@code n} bytes of {@code slot} at {@code inChunk} rebuilt from the other members into
     * {@code dst}, whatever the slot's own member holds (md's correction of a read error). A member
     * whose read fails is failed and the others tried again; throws when the stripe is lost. Caller
     * holds the stripe lock.
     */
    private void rebuildFromOthers(int slot, int inChunk, ByteBuffer dst, int dstOffset, int n) throws IOException {
        try {
            for (int done = 0; done < n; ) {
                int len = Math.min(pieceSize, n - done);
                long memberOffset = stripeOffset + inChunk + done;
                core.checkUsable();
                if (!othersReadable(slot, memberOffset, len)) {
                    throw core.stripeLost(stripe);
                }
                if (xorOthers(slot, memberOffset, len, dst, dstOffset + done)) {
                    done += len;
                }
            }
        } finally {
            release();
        }
    }

    /**
     * md's read-error handling (and its handling of listed bad blocks, {@code error == null}) for
     * one page of {@code slot} at {@code inChunk}: rebuild the bytes from the other members, hand
     * them to the caller at {@code dst[dstOffset..)} and write them back over the bad sectors, then
     * read them again to prove the correction. Sectors that cannot be corrected go to the
     * {@link BadBlockPolicy}. Caller holds the stripe lock.
     */
    void correctPage(int slot, int inChunk, ByteBuffer dst, int dstOffset, int n, IOException error)
            throws IOException {
        Member m = table.slots[slot];
        long memberOffset = stripeOffset + inChunk;
        if (m == null || m.state == MemberState.FAULTY) {
            readSlot(slot, inChunk, dst, dstOffset, n);
            return;
        }
        if (!othersReadable(slot, memberOffset, n)) {
            throw core.badBlocks.notCorrectable(m, stripe, memberOffset, n, error);
        }
        rebuildFromOthers(slot, inChunk, dst, dstOffset, n);
        if (core.readOnly) {
            return;
        }
        try {
            m.writeData(memberOffset, dst, dstOffset, n);
        } catch (IOException rewriteError) {
            if (error != null) {
                rewriteError.addSuppressed(error);
            }
            core.badBlocks.recordOrFail(m, memberOffset, n, rewriteError);
            return;
        }
        if (error == null) {
            return; // listed bad blocks, now written good
        }
        try {
            m.readData(memberOffset, scratch, 0, n);
        } catch (IOException reread) {
            reread.addSuppressed(error);
            core.badBlocks.recordOrFail(
                    m,
                    memberOffset,
                    n,
                    new IOException(
                            m.name() + ": read error not corrected (the rewritten sectors at member offset "
                                    + memberOffset + " fail again)",
                            reread));
            return;
        }
        m.corrected(n / 512);
    }

    // ------------------------------------------------------------------ writes

    /**
     * Writes columns {@code [from, to)} of data indices {@code lo..hi}, piece by piece; the new bytes
     * of index {@code i} at column {@code from} are at {@code src[srcFrom + (i-lo)*chunk]}.
     */
    void writeColumns(int lo, int hi, int from, int to, ByteBuffer src, int srcFrom) throws IOException {
        int piece = Math.min(pieceSize, core.consistency.maxPiece());
        for (int x = from; x < to; x += piece) {
            writePiece(lo, hi, x, Math.min(piece, to - x), src, srcFrom + x - from);
        }
    }

    /**
     * Writes columns {@code [x, x+len)} of data indices {@code lo..hi} ({@code len <= } the piece
     * size); the new bytes of index {@code i} are at {@code src[srcAt + (i-lo)*chunk ..)}. Chooses
     * md's cheaper parity update by the number of member reads, computes parity (in place on members
     * with direct access), then writes data, parity and replacements in one phase.
     */
    private void writePiece(int lo, int hi, int x, int len, ByteBuffer src, int srcAt) throws IOException {
        piece.set(lo, hi, x, len, src, srcAt);
        long memberOffset = stripeOffset + x;
        ConsistencyPort consistency = core.consistency;
        boolean logs = !core.readOnly && consistency.logsPartialParity();
        ConsistencyPort.Logged unit = null;
        long wrote = 0;
        consistency.startWrite(memberOffset, len); // e.g. the chunk's bit is on disk before any member write
        boolean complete = false;
        try {
            Plan plan;
            boolean logged;
            while (true) {
                core.checkUsable();
                if (unreadableSlots(memberOffset, len) > 1) {
                    throw core.stripeLost(stripe);
                }
                plan = choosePlan(memberOffset, len, lo, hi);
                // md logs a stripe when its parity member is in sync and written; not without one.
                logged = logs && plan != Plan.DATA_ONLY && table.slots[paritySlot].state == MemberState.IN_SYNC;
                if (plan == Plan.DATA_ONLY || (logged ? computeLoggedParity(plan) : computeParity(plan))) {
                    break;
                }
            }
            if (logged) {
                // The partial parity is durable before any of the stripe's data or parity is written;
                // only then is the new parity made, in the parity member's memory where it can be.
                unit = consistency.log(table.slots[paritySlot], paritySlot, entry);
                // The log's write may have failed its member and with it the array (md_error): a
                // write that can no longer reach the members is refused, never acknowledged.
                core.checkUsable();
                finishLoggedParity(memberOffset, len);
            }
            phase.begin();
            wrote = issueWrites(plan);
            complete = phase.await();
            if (!complete) {
                phase.failMembers(core);
            }
        } finally {
            // A write that did not reach every member keeps its bitmap bit until a pass makes it whole.
            try {
                consistency.endWrite(
                        memberOffset, len, complete && consistency.asksWhole() && allInSync(), unit, wrote);
            } finally {
                release();
            }
        }
    }

    // ------------------------------------------------------------------ writes without a thread

    /** The caller's callback of the write running without a thread, null between such writes. */
    private IoCallback asyncCallback;

    private int asyncTag;
    private Plan asyncPlan;
    /** A source of the write without a thread could not be reached: its member is failed, re-plan. */
    private boolean asyncSourceFailed;
    /** The write without a thread is in its write phase (its reads are done). */
    private boolean asyncWriting;
    /** The slots its write phase wrote, for the consistency policy. */
    private long asyncWrote;
    /** The write without a thread logs its partial parity first (the policy logs, parity in sync). */
    private boolean asyncLogged;
    /** The io_unit its entry joined, once it has: for the end of its bracket. */
    private ConsistencyPort.Logged asyncUnit;

    private final Runnable afterAsyncReads = this::afterAsyncReads;
    private final Runnable afterAsyncWrites = this::afterAsyncWrites;
    private final Runnable recoverAsyncWrite = this::recoverAsyncWrite;
    private final Runnable endedWithoutThread = () -> finishWithoutThread(null);
    private final ConsistencyPort.LogWaiter afterAsyncLog = new ConsistencyPort.LogWaiter() {
        @Override
        public void joined(ConsistencyPort.Logged unit) {
            asyncUnit = unit;
        }

        @Override
        public void run() {
            afterAsyncLog();
        }
    };

    /** Sets the piece {@link #startWriteWithoutThread} writes: {@code len} bytes at {@code column} of one data index. */
    void pieceToWrite(int dataIndex, int column, int len, ByteBuffer src, int srcAt) {
        piece.set(dataIndex, dataIndex, column, len, src, srcAt);
    }

    /**
     * Starts the piece set by {@link #pieceToWrite} as continuations, no thread waiting for it: the
     * reads of md's cheaper plan are issued now, and when the last completes (on the io_uring's
     * thread; on NBD members the step goes to a continuation thread, since a connection's reader
     * must not wait to submit) the parity is computed and the writes of data and parity issued; when they
     * complete, the operation is given back (the stripe unlocked), the configuration read side
     * released and {@code callback} called with the request's outcome. A member I/O that fails hands
     * the piece to an I/O thread, which fails the member and finishes the piece as the blocking path
     * does (a degraded re-plan after a read, the survivors' write after a write).
     *
     * <p>With a partial parity log the reads are those of its partial parity, which then goes to
     * the log ({@link ConsistencyPort#logThen}); the parity and the writes follow when the log's
     * io_unit is durable, and the write's end waits for the log's flushes of the members that unit
     * wrote ({@link ConsistencyPort#endWriteThen}), no thread waiting for any of it.
     *
     * <p>Only on a stripe where every member can be read and no replacement is being built, and only
     * when the consistency policy starts the write without waiting
     * ({@link ConsistencyPort#tryStartWrite}: resync, the log, or a bitmap whose bits are on disk); else false,
     * having done nothing, and the caller takes the blocking path. The caller holds the configuration read side and this
     * operation; on true both belong to the write until its callback.
     */
    boolean startWriteWithoutThread(IoCallback callback, int tag) {
        long memberOffset = stripeOffset + piece.x;
        int len = piece.len;
        if (unreadableSlots(memberOffset, len) > 0) {
            return false;
        }
        for (Member m : table.replacements) {
            if (m != null) {
                return false;
            }
        }
        Plan plan = choosePlan(memberOffset, len, piece.lo, piece.hi);
        if (plan == Plan.DATA_ONLY || !core.consistency.tryStartWrite(memberOffset, len)) {
            return false;
        }
        asyncCallback = callback;
        asyncTag = tag;
        asyncPlan = plan;
        asyncSourceFailed = false;
        asyncWriting = false;
        // md logs a stripe when its parity member is in sync and written; not without one.
        asyncLogged = !core.readOnly
                && core.consistency.logsPartialParity()
                && table.slots[paritySlot].state == MemberState.IN_SYNC;
        asyncUnit = null;
        release();
        phase.beginThen(afterAsyncReads, table.continuesOffCompletionThread);
        try {
            asyncSourceFailed = !(asyncLogged ? issueLoggedReads(plan) : issueParityReads(plan));
        } catch (IOException | RuntimeException e) {
            asyncSourceFailed = true; // failing the member threw (the array is lost): the re-plan reports it
        }
        phase.launch();
        return true;
    }

    /**
     * Every read of the write without a thread has completed: parity, then the writes, issued at
     * once; or, when it logs, its partial parity to the log first ({@link #afterAsyncLog} goes on).
     */
    private void afterAsyncReads() {
        if (asyncSourceFailed || !phase.succeeded()) {
            IoThreads.runBlocking(recoverAsyncWrite);
            return;
        }
        if (asyncLogged) {
            core.consistency.logThen(
                    table.slots[paritySlot], paritySlot, entry, afterAsyncLog, table.continuesOffCompletionThread);
            return;
        }
        finishParity(asyncPlan);
        writeWithoutThread();
    }

    /** The io_unit holding the write's partial parity is durable: the new parity, then the writes. */
    private void afterAsyncLog() {
        try {
            core.checkUsable(); // as in writePiece: the log's write may have failed the array
        } catch (ArrayFailedException e) {
            try {
                core.consistency.endWriteThen(
                        stripeOffset + piece.x, piece.len, false, asyncUnit, 0, () -> finishWithoutThread(e));
            } catch (IOException notEnded) {
                finishWithoutThread(e);
            }
            return;
        }
        finishLoggedParity(stripeOffset + piece.x, piece.len);
        writeWithoutThread();
    }

    private void writeWithoutThread() {
        asyncWriting = true;
        phase.beginThen(afterAsyncWrites, table.continuesOffCompletionThread);
        asyncWrote = issueWrites(asyncPlan);
        phase.launch();
    }

    private void afterAsyncWrites() {
        if (!phase.succeeded()) {
            IoThreads.runBlocking(recoverAsyncWrite);
            return;
        }
        try {
            ConsistencyPort consistency = core.consistency;
            consistency.endWriteThen(
                    stripeOffset + piece.x,
                    piece.len,
                    consistency.asksWhole() && allInSync(),
                    asyncUnit,
                    asyncWrote,
                    endedWithoutThread);
        } catch (IOException e) {
            finishWithoutThread(e);
        }
    }

    /**
     * On an I/O thread, after a member I/O of a write without a thread failed: the members whose I/O
     * failed are failed (md's md_error); after failed reads the piece is planned again and written
     * by the blocking path, after failed writes it is done (the survivors have it, as in
     * {@link #writePiece}).
     */
    private void recoverAsyncWrite() {
        IOException error = null;
        try {
            try {
                phase.failMembers(core);
            } finally {
                // This write's bracket ends here, not whole: the bitmap keeps the bits.
                core.consistency.endWrite(
                        stripeOffset + piece.x,
                        piece.len,
                        false,
                        asyncWriting ? asyncUnit : null,
                        asyncWriting ? asyncWrote : 0);
            }
            if (!asyncWriting) {
                release();
                writePiece(piece.lo, piece.hi, piece.x, piece.len, piece.src, piece.srcAt); // brackets itself
            }
        } catch (IOException e) {
            error = e;
        } catch (RuntimeException e) {
            error = new IOException(core.name + ": " + e, e);
        }
        finishWithoutThread(error);
    }

    /** The end of a write without a thread: everything it held given back, then the caller told. */
    private void finishWithoutThread(IOException error) {
        IoCallback callback = asyncCallback;
        int tag = asyncTag;
        int len = piece.len;
        asyncCallback = null;
        asyncPlan = null;
        asyncUnit = null;
        release();
        ArrayCore c = core;
        close(); // back to the pool, the stripe unlocked: this operation is another's from here on
        if (error == null) {
            c.countRequest(true, len);
        } else {
            c.countRequestError();
        }
        c.config.readUnlock();
        callback.ioDone(tag, error);
    }

    /**
     * Issues, on the current phase, the writes of the piece in hand: its data to each written data
     * member and replacement, and (unless {@code plan} writes data alone) the new parity where it is
     * not already in the parity member's memory. Returns the mask of slots written.
     */
    private long issueWrites(Plan plan) {
        int lo = piece.lo;
        int hi = piece.hi;
        int len = piece.len;
        ByteBuffer src = piece.src;
        int srcAt = piece.srcAt;
        long memberOffset = stripeOffset + piece.x;
        int chunkSize = layout.chunkSize();
        Member[] s = table.slots;
        Member[] r = table.replacements;
        long wrote = 0;
        for (int i = lo; i <= hi; i++) {
            int slot = layout.dataSlot(stripe, i);
            int at = srcAt + (i - lo) * chunkSize;
            if (writeTo(s[slot], memberOffset, src, at, len)) {
                wrote |= 1L << slot;
            }
            writeTo(r[slot], memberOffset, src, at, len);
        }
        if (plan != Plan.DATA_ONLY) {
            if (!parity.inMember && writeTo(s[paritySlot], memberOffset, parity.buffer, parity.offset, len)) {
                wrote |= 1L << paritySlot;
            }
            writeTo(r[paritySlot], memberOffset, parity.buffer, parity.offset, len);
        }
        return wrote;
    }

    private boolean allInSync() {
        for (Member m : table.slots) {
            if (m == null || m.state != MemberState.IN_SYNC) {
                return false;
            }
        }
        return true;
    }

    /** The write piece in hand, as {@link #writePiece} was given it, for the parity computations. */
    private final Piece piece = new Piece();

    /**
     * A write piece: columns {@code [x, x+len)} of data indices {@code lo..hi}, the new bytes of index
     * {@code i} at {@code src[srcAt + (i-lo)*chunk ..)}.
     */
    private static final class Piece {
        int lo;
        int hi;
        int x;
        int len;
        ByteBuffer src;
        int srcAt;

        void set(int lo, int hi, int x, int len, ByteBuffer src, int srcAt) {
            this.lo = lo;
            this.hi = hi;
            this.x = x;
            this.len = len;
            this.src = src;
            this.srcAt = srcAt;
        }
    }

    /** What {@link #computeLoggedParity} leaves for the log: md's entry for this piece and its partial parity. */
    private final PartialParityEntry entry = new PartialParityEntry(this::fillPartialParity);

    /**
     * {@link #computeParity} for an array with a partial parity log: also prepares the piece's
     * partial parity, over whole 4 KiB pages as md logs it. A write to every data member is a full
     * stripe (no partial parity: its parity is recomputed from the data alone after a crash). Else the
     * partial parity is the XOR of the data the write leaves alone over those pages: read directly
     * (reconstruct-write), or as old parity XOR the old data being replaced (read-modify-write). Its
     * reads are done here and left as sources; the log computes it where it keeps it
     * ({@link #fillPartialParity}, straight into its io_unit when it can). Nothing of the stripe may
     * change before the log is durable.
     */
    private boolean computeLoggedParity(Plan plan) throws IOException {
        beginSources();
        boolean ok = issueLoggedReads(plan);
        return awaitSources() && ok; // waits for every read issued, also after a failure
    }

    /**
     * The reads of {@link #computeLoggedParity}, issued on the current phase, their sources listed,
     * and the entry set up; false (the member failed) when a member's memory cannot be reached.
     */
    private boolean issueLoggedReads(Plan plan) throws IOException {
        int lo = piece.lo;
        int hi = piece.hi;
        int x = piece.x;
        int len = piece.len;
        int written = hi - lo + 1;
        int x4 = x & ~(PAGE - 1);
        int len4 = ((x + len + PAGE - 1) & ~(PAGE - 1)) - x4;
        long pageOffset = stripeOffset + x4;
        Member[] s = table.slots;
        if (entry.partialParity == null) {
            entry.partialParity =
                    AlignedBuffers.allocate(pieceSize); // once per operation object, for arrays with a log
        }
        entry.dataSize = written * len4;
        if (written == layout.dataDisks()) {
            entry.size = 0;
            entry.dataSector = arraySector(0, x4);
            addNewData();
            return true;
        }
        entry.size = len4;
        entry.dataSector = arraySector(lo, x4);
        boolean ok = true;
        if (plan == Plan.READ_MODIFY_WRITE) {
            ok = addMemberSource(s[paritySlot], paritySlot, pageOffset, len4);
            for (int i = lo; i <= hi && ok; i++) {
                int slot = layout.dataSlot(stripe, i);
                ok = addMemberSource(s[slot], slot, pageOffset, len4);
            }
        } else {
            for (int i = 0; i < layout.dataDisks() && ok; i++) {
                if (i < lo || i > hi) {
                    int slot = layout.dataSlot(stripe, i);
                    ok = addMemberSource(s[slot], slot, pageOffset, len4);
                }
            }
        }
        return ok;
    }

    /**
     * The log's half of {@link #computeLoggedParity}, called once per logged partial write: the
     * partial parity XORed from the sources read into {@code dst} at {@code at} ({@code entry.size}
     * bytes), which then become the partial parity there and the new data, for {@link #finishLoggedParity}
     * (so {@code dst} must not change until the stripe is written).
     */
    private void fillPartialParity(ByteBuffer dst, int at) {
        xorSourcesInto(dst, at, entry.size);
        beginSources();
        addCallerSource(dst, at + (piece.x & (PAGE - 1)));
        addNewData();
    }

    /** Adds the piece's new bytes of each data index it writes as sources. */
    private void addNewData() {
        int chunkSize = layout.chunkSize();
        for (int i = piece.lo; i <= piece.hi; i++) {
            addCallerSource(piece.src, piece.srcAt + (i - piece.lo) * chunkSize);
        }
    }

    /** After the log is durable: the new parity, into the parity member in place when it offers direct access. */
    private void finishLoggedParity(long memberOffset, int len) {
        boolean inPlace = pinDestination(table.slots[paritySlot], memberOffset, len);
        ByteBuffer dst = inPlace ? destination.buffer : scratch;
        int dOff = inPlace ? destination.offset : 0;
        xorSourcesInto(dst, dOff, len);
        parity.set(dst, dOff, inPlace);
    }

    /** md's array sector of column {@code column} of data index {@code dataIndex} in this stripe. */
    private long arraySector(int dataIndex, int column) {
        return (layout.chunkNumber(stripe, dataIndex) * layout.chunkSize() + column) >>> 9;
    }

    /** Where {@link #computeParity} (or {@link #finishLoggedParity}) left the new parity. */
    private final Place parity = new Place();

    /** Where a result of the operation is: a buffer, an offset in it, and whether that is a member's own memory. */
    private static final class Place {
        ByteBuffer buffer;
        int offset;
        boolean inMember;

        void set(ByteBuffer buffer, int offset, boolean inMember) {
            this.buffer = buffer;
            this.offset = offset;
            this.inMember = inMember;
        }
    }

    /**
     * The plan, as md's {@code handle_stripe_dirtying} chooses: read-modify-write needs
     * {@code written + 1} reads (old data and old parity), reconstruct-write {@code dataDisks - written}
     * (the data not written); ties go to reconstruct-write, except on a parity member in memory
     * (direct access), where they go to read-modify-write as md's {@code rmw_level} 2
     * ({@code PARITY_PREFER_RMW}) sends them: the reads cost no I/O there, and read-modify-write
     * touches two members' pages where reconstruct-write touches every member's (a 4 KiB write on
     * four members: two cache-cold pages instead of four). A plan that would read an unreadable
     * member is not eligible, which is how degraded writes fall out: a failed data member that is
     * written is folded into parity by reconstruct-write; a failed one that is not written forces
     * read-modify-write; a failed parity member means the data is written alone.
     */
    private Plan choosePlan(long memberOffset, int len, int lo, int hi) {
        Member[] s = table.slots;
        Member parity = s[paritySlot];
        if (parity == null || !parity.writable(stripeOffset)) {
            return Plan.DATA_ONLY;
        }
        int dataDisks = layout.dataDisks();
        // Old parity that cannot be read (listed as bad blocks, or on a member being rebuilt whose
        // rebuild has started this stripe but not yet passed it) rules out read-modify-write;
        // reconstruct-write recomputes parity and writes it, which keeps a stripe the parallel
        // rebuild already did current (and makes bad sectors good).
        boolean rmwPossible = parity.readable(stripeOffset) && !parity.hasBadBlocks(memberOffset, len);
        boolean rcwPossible = true;
        for (int i = 0; i < dataDisks; i++) {
            Member m = s[layout.dataSlot(stripe, i)];
            boolean ok = m != null && m.readable(stripeOffset, memberOffset, len);
            if (i >= lo && i <= hi) {
                rmwPossible &= ok;
            } else {
                rcwPossible &= ok;
            }
        }
        int written = hi - lo + 1;
        int rmwReads = written + 1;
        int rcwReads = dataDisks - written;
        if (rcwPossible && stripeOffset >= core.resyncOffset) {
            // Parity here may not match yet: recompute it from all data rather than update it.
            return Plan.RECONSTRUCT_WRITE;
        }
        if (rmwPossible && (!rcwPossible || rmwReads < rcwReads || (rmwReads == rcwReads && parity.inMemory()))) {
            return Plan.READ_MODIFY_WRITE;
        }
        // At most one slot is unreadable and parity is readable, so at most one data member is out:
        // if it is written, reconstruct-write works; if not, read-modify-write was possible above (or
        // the one unreadable piece is old parity listed as bad, and no data member is out).
        return Plan.RECONSTRUCT_WRITE;
    }

    /**
     * Performs the reads of {@code plan} and computes the new parity, into the parity member in place
     * when its disk offers direct access, or else into the scratch buffer. Returns false if a member
     * read failed: that member is now faulty and the caller re-plans.
     */
    private boolean computeParity(Plan plan) throws IOException {
        beginSources();
        boolean ok = issueParityReads(plan);
        ok = awaitSources() && ok; // waits for every read issued, also after a failure
        if (!ok) {
            return false;
        }
        finishParity(plan);
        return true;
    }

    /**
     * The reads of {@code plan} for the piece in hand, issued on the current phase, and its sources
     * listed; false (the member failed) when a member's memory cannot be reached.
     */
    private boolean issueParityReads(Plan plan) throws IOException {
        int lo = piece.lo;
        int hi = piece.hi;
        long memberOffset = stripeOffset + piece.x;
        int len = piece.len;
        ByteBuffer src = piece.src;
        int srcAt = piece.srcAt;
        int chunkSize = layout.chunkSize();
        Member[] s = table.slots;
        boolean ok = true;
        if (plan == Plan.READ_MODIFY_WRITE) {
            // new parity = old parity ^ old data ^ new data, in one fused pass over all of them;
            // old parity comes first so that the result may overwrite it in place.
            ok = addMemberSource(s[paritySlot], paritySlot, memberOffset, len);
            for (int i = lo; i <= hi && ok; i++) {
                int slot = layout.dataSlot(stripe, i);
                ok = addMemberSource(s[slot], slot, memberOffset, len);
                addCallerSource(src, srcAt + (i - lo) * chunkSize);
            }
        } else {
            for (int i = 0; i < layout.dataDisks() && ok; i++) {
                if (i >= lo && i <= hi) {
                    addCallerSource(src, srcAt + (i - lo) * chunkSize);
                } else {
                    int slot = layout.dataSlot(stripe, i);
                    ok = addMemberSource(s[slot], slot, memberOffset, len);
                }
            }
        }
        return ok;
    }

    /** After the reads of {@link #issueParityReads}: the new parity, in place where the parity member allows. */
    private void finishParity(Plan plan) {
        long memberOffset = stripeOffset + piece.x;
        int len = piece.len;
        Member[] s = table.slots;
        ByteBuffer dst = scratch;
        int dOff = 0;
        boolean inPlace;
        if (plan == Plan.READ_MODIFY_WRITE) {
            inPlace = direct[0];
            if (inPlace) {
                dst = sources[0];
                dOff = offsets[0];
            }
        } else {
            inPlace = pinDestination(s[paritySlot], memberOffset, len);
            if (inPlace) {
                dst = destination.buffer;
                dOff = destination.offset;
            }
        }
        xorSourcesInto(dst, dOff, len);
        parity.set(dst, dOff, inPlace);
    }

    /** Slots whose bytes here cannot be read (missing, faulty, not yet rebuilt, listed as bad blocks). */
    private int unreadableSlots(long memberOffset, int len) {
        int n = 0;
        for (Member m : table.slots) {
            if (m == null || !m.readable(stripeOffset, memberOffset, len)) {
                n++;
            }
        }
        return n;
    }

    /**
     * Issues a write to {@code m} where it holds valid data (skips a missing, failed or not yet
     * rebuilt one); true if it did.
     */
    private boolean writeTo(Member m, long memberOffset, ByteBuffer buf, int off, int len) {
        if (m != null && m.writable(stripeOffset)) {
            phase.write(m, memberOffset, buf, off, len);
            return true;
        }
        return false;
    }

    // ------------------------------------------------------------------ background passes

    /**
     * A piece of a rebuild onto {@code target}: a copy of the member it replaces when that member
     * still reads (md's replace), else the XOR of the others; in place when the target's disk offers
     * direct access, else written to it. Over a survivor's bad blocks the target gets bad blocks
     * too, as md's recovery does. Throws when the stripe is lost or the target fails.
     */
    void recoverPiece(Member target, long memberOffset, int len) throws IOException {
        int targetSlot = target.slot;
        Member[] s = table.slots;
        if (target.state == MemberState.FAULTY
                || (s[targetSlot] != target && table.replacements[targetSlot] != target)) {
            throw new IOException("rebuild target " + target.name() + " left the array");
        }
        ByteBuffer out = scratch;
        int outOffset = 0;
        boolean inPlace;
        try {
            Member primary = s[targetSlot];
            boolean copied = false;
            if (primary != null && primary != target && primary.readable(stripeOffset, memberOffset, len)) {
                // Replacing a working member: copy it rather than reconstruct (if its read fails, it is
                // faulty now and the piece is reconstructed below).
                beginSources();
                copied = addMemberSource(primary, targetSlot, memberOffset, len) & awaitSources();
            }
            if (!copied) {
                if (survivorListsBadBlocks(targetSlot, memberOffset, len, target)) {
                    return;
                }
                if (!othersReadable(targetSlot, memberOffset, len)
                        || !gatherOthers(targetSlot, memberOffset, len, -1)) {
                    throw core.stripeLost(stripe);
                }
            }
            inPlace = pinDestination(target, memberOffset, len);
            if (inPlace) {
                out = destination.buffer;
                outOffset = destination.offset;
            }
            xorSourcesInto(out, outOffset, len);
            if (!inPlace) {
                try {
                    target.writeData(memberOffset, out, outOffset, len);
                } catch (IOException e) {
                    core.memberFailed(target, e);
                    throw new IOException("rebuild target " + target.name() + " failed: " + e.getMessage(), e);
                }
            }
        } finally {
            release();
        }
    }

    /** md's recovery over a survivor's bad block: the target cannot get those sectors, so they are bad there too. */
    private boolean survivorListsBadBlocks(int targetSlot, long memberOffset, int len, Member target)
            throws IOException {
        Member[] s = table.slots;
        for (int j = 0; j < s.length; j++) {
            Member m = s[j];
            if (j != targetSlot && m != null && m.readable(stripeOffset) && m.hasBadBlocks(memberOffset, len)) {
                return core.badBlocks.inherit(target, m, memberOffset, len);
            }
        }
        return false;
    }

    /**
     * A piece of a resync, check or repair: parity computed from the data and, for check and repair,
     * compared page by page with the stored parity; resync and repair (where it differs) write it
     * to the parity member and its replacement. A member listing bad blocks here has its bytes
     * rebuilt from the others and rewritten (not when checking). Returns the mismatched sectors.
     */
    long syncPiece(SyncAction action, long memberOffset, int len) throws IOException {
        try {
            Member[] s = table.slots;
            int bad = -1;
            for (int j = 0; j < s.length; j++) {
                if (s[j] == null || !s[j].readable(stripeOffset)) {
                    throw new IOException(core.name + " is degraded: " + action + " needs every member");
                }
                if (s[j].hasBadBlocks(memberOffset, len)) {
                    if (bad >= 0) {
                        LOG.warn(
                                "{}: {} skips member offset {}: {} and {} both list bad blocks there",
                                core.name,
                                action,
                                memberOffset,
                                s[bad].name(),
                                s[j].name());
                        return 0;
                    }
                    bad = j;
                }
            }
            if (bad >= 0) {
                if (action != SyncAction.CHECK) {
                    rewriteFromOthers(action, bad, memberOffset, len);
                }
                return 0;
            }
            boolean compare = action != SyncAction.RESYNC;
            if (!gatherOthers(paritySlot, memberOffset, len, compare ? paritySlot : -1)) {
                throw new IOException(action + " stopped: a member read failed (the member is marked faulty)");
            }
            xorSourcesInto(scratch, 0, len);
            long mismatched = 0;
            if (compare) {
                ByteBuffer stored = buffers[paritySlot];
                for (int p = 0; p < len; p += PAGE) {
                    if (!Xor.equal(stored, p, scratch, p, Math.min(PAGE, len - p))) {
                        mismatched += PAGE / 512;
                    }
                }
            }
            if (action == SyncAction.RESYNC || (action == SyncAction.REPAIR && mismatched > 0)) {
                writeOrStop(action, s[paritySlot], memberOffset, len);
                Member replacement = table.replacements[paritySlot];
                if (replacement != null && replacement.writable(stripeOffset)) {
                    try {
                        replacement.writeData(memberOffset, scratch, 0, len);
                    } catch (IOException e) {
                        core.memberFailed(replacement, e);
                    }
                }
            }
            return mismatched;
        } finally {
            release();
        }
    }

    /** md's sync over a member's listed bad blocks: its bytes rebuilt from the others and written over them. */
    private void rewriteFromOthers(SyncAction action, int bad, long memberOffset, int len) throws IOException {
        if (!xorOthers(bad, memberOffset, len, scratch, 0)) {
            throw new IOException(action + " stopped: a member read failed (the member is marked faulty)");
        }
        Member m = table.slots[bad];
        writeOrStop(action, m, memberOffset, len);
        LOG.info(
                "{}: {} rewrote {} bytes at member offset {} over bad blocks of {}",
                core.name,
                action,
                len,
                memberOffset,
                m.name());
    }

    private void writeOrStop(SyncAction action, Member m, long memberOffset, int len) throws IOException {
        try {
            m.writeData(memberOffset, scratch, 0, len);
        } catch (IOException e) {
            core.memberFailed(m, e);
            throw new IOException(action + " stopped: " + m.name() + " failed", e);
        }
    }

    // ------------------------------------------------------------------ sources

    /** The member memory {@link #pinDestination} pinned as a computation's destination. */
    private final Place destination = new Place();

    /** Starts gathering the sources of a computation: earlier pins dropped, a new member phase. */
    private void beginSources() {
        release();
        phase.begin();
    }

    /**
     * The sources are every slot but {@code skip} at {@code memberOffset}: their reads issued at once
     * and awaited; {@code alsoRead} (or -1) is read into its piece buffer in the same phase without
     * being a source. False when a read failed (the member is failed; nothing is in flight).
     */
    private boolean gatherOthers(int skip, long memberOffset, int len, int alsoRead) throws IOException {
        Member[] s = table.slots;
        beginSources();
        boolean ok = true;
        for (int j = 0; j < s.length && ok; j++) {
            if (j != skip) {
                ok = addMemberSource(s[j], j, memberOffset, len);
            }
        }
        if (ok && alsoRead >= 0) {
            phase.read(s[alsoRead], memberOffset, buffers[alsoRead], 0, len);
        }
        return awaitSources() && ok; // waits for every read issued, also after a failure
    }

    /**
     * Makes member {@code m}'s bytes at {@code memberOffset} the next source: in place when its disk
     * offers direct access (pinned with nr_pending until {@link #release}), else a read into the
     * slot's buffer, issued now and completed by {@link #awaitSources}. Returns false after failing
     * the member if its memory cannot be reached.
     */
    private boolean addMemberSource(Member m, int slot, long memberOffset, int len) throws IOException {
        int k = sourceCount++;
        try {
            ByteBuffer inPlace = m.direct(memberOffset, len);
            if (inPlace != null) {
                m.nrPending.get();
                m.countIo(false, len); // read in place
                pinned[pinnedCount++] = m;
                sources[k] = inPlace;
                offsets[k] = m.directIndex(memberOffset);
                direct[k] = true;
                return true;
            }
        } catch (IOException e) {
            core.memberFailed(m, e);
            return false;
        }
        phase.read(m, memberOffset, buffers[slot], 0, len);
        sources[k] = buffers[slot];
        offsets[k] = 0;
        direct[k] = false;
        return true;
    }

    /** Makes the caller's new bytes the next source. */
    private void addCallerSource(ByteBuffer src, int offset) {
        int k = sourceCount++;
        sources[k] = src;
        offsets[k] = offset;
        direct[k] = false;
    }

    /** Waits for every read of the phase; false, after failing the members whose reads failed, if any did. */
    private boolean awaitSources() throws IOException {
        if (phase.await()) {
            return true;
        }
        phase.failMembers(core);
        return false;
    }

    private void xorSourcesInto(ByteBuffer dst, int dstOffset, int len) {
        Xor.parity(dst, dstOffset, sources, offsets, sourceCount, len);
    }

    /**
     * Pins member {@code m}'s bytes at {@code memberOffset} as the destination of the computation,
     * when its disk offers direct access; false otherwise.
     */
    private boolean pinDestination(Member m, long memberOffset, int len) {
        try {
            ByteBuffer inPlace = m.direct(memberOffset, len);
            if (inPlace == null) {
                return false;
            }
            m.nrPending.get();
            m.countIo(true, len); // written in place
            pinned[pinnedCount++] = m;
            destination.set(inPlace, m.directIndex(memberOffset), true);
            return true;
        } catch (IOException e) {
            return false; // the copying path will meet the same error and fail the member
        }
    }

    /** Drops the pins and the references to sources taken by the operation. */
    private void release() {
        for (int i = 0; i < pinnedCount; i++) {
            pinned[i].nrPending.put();
            pinned[i] = null;
        }
        pinnedCount = 0;
        if (sourceCount > 0) {
            Arrays.fill(sources, 0, sourceCount, null);
            sourceCount = 0;
        }
        destination.buffer = null;
        parity.buffer = null;
    }

    /**
     * The array's stripe operations: a bounded lock-free pool; when empty a new operation is made,
     * when full a returned one is dropped.
     */
    static final class Pool {
        private final MpmcArrayQueue<StripeOp> queue;
        private final ArrayCore core;
        private final int pieceSize;

        Pool(ArrayCore core, int pieceSize, int capacity) {
            this.queue = new MpmcArrayQueue<>(capacity);
            this.core = core;
            this.pieceSize = pieceSize;
        }

        int pieceSize() {
            return pieceSize;
        }

        /**
         * The one way into a stripe: locks {@code stripe} and lends an operation on it, against the
         * member table as it is now. Closing the operation (try-with-resources) gives it back and
         * unlocks. The caller holds the configuration read side.
         */
        StripeOp acquire(long stripe) {
            core.locks.lock(stripe);
            StripeOp op = queue.relaxedPoll();
            return (op != null ? op : new StripeOp(core, pieceSize)).on(stripe);
        }

        /** {@link #acquire}, or null without waiting when the stripe's lock is taken. */
        StripeOp tryAcquire(long stripe) {
            if (!core.locks.tryLock(stripe)) {
                return null;
            }
            StripeOp op = queue.relaxedPoll();
            return (op != null ? op : new StripeOp(core, pieceSize)).on(stripe);
        }

        private void giveBack(StripeOp op) {
            long stripe = op.stripe; // read before another thread may take the operation
            op.table = null;
            op.piece.src = null; // the caller's buffer is not kept past the operation
            queue.relaxedOffer(op);
            core.locks.unlock(stripe);
        }
    }
}
