package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.IoThreads;

/**
 * The member I/Os of one phase of a stripe operation (the reads a parity update needs, the writes
 * of data and parity, the reads of a reconstruction or a rebuild piece), issued all at once
 * through the members' completion-based I/O and then awaited together: a stripe on members with
 * 2 ms latency costs one round trip per phase, not one per member. Memory members complete inline,
 * so on them a phase costs a few uncontended atomics.
 *
 * <p>One per {@link StripeOp}, reused; one thread issues and awaits, or, in a phase begun by
 * {@link #beginThen}, the last completion runs the next step and nobody awaits. Counting: the issuer
 * holds one unit of {@code outstanding} while issuing, and every I/O one more, dropped by its
 * callback; the issuer drops its own in {@link #await()} and parks until the count is zero. The
 * callbacks' writes (an error, a member's counters) happen-before the issuer's return from
 * {@code await}, through the volatile decrement of {@code outstanding} that it observes as zero.
 *
 * <p>{@code nr_pending} of each member is taken before its I/O is issued and dropped in the
 * callback, as md brackets every member bio.
 *
 * <p>The last I/O of a phase is not handed to another thread: {@link #await()} runs it on the
 * issuing thread with the member's blocking call, while the others are in flight (a phase of two
 * file I/Os costs one hand-off, not two). Memory members complete inline anyway, and members on
 * the io_uring take the whole phase at once: it reaches the kernel in one submission, completes in
 * one batch, and the issuer parks once. When the shared
 * I/O threads are already saturated ({@link IoThreads#saturated()}: a queue depth of dozens), a
 * phase hands none of its file I/O on the I/O threads off: it makes those blocking calls itself, one after another,
 * since the calls already running keep the device busy and each hand-off would cost two context
 * switches for nothing; below that, a stripe's member I/O overlaps.
 *
 * <p>Buffers: a member call may move the buffer's position and limit while it runs, so one buffer
 * object must not be in two concurrent calls (a multi-column write hands the caller's buffer to
 * every data member at once). An I/O whose buffer an earlier I/O of the phase already uses gets a
 * {@code duplicate()} of it instead, cached per tag: callers that reuse their buffers, as a
 * benchmark does, allocate nothing in steady state. Memory members complete inline, one after
 * another, and need none.
 */
final class MemberPhase implements IoCallback {
    private static final int SPINS = 64;

    private final AtomicInteger outstanding = new AtomicInteger();
    private final Member[] members;
    private final IOException[] errors;
    private final long[] offsets;
    private final int[] lengths;
    private final boolean[] writes;
    private final ByteBuffer[] buffers;
    private final ByteBuffer[] viewOf;
    private final ByteBuffer[] views;
    private int count;
    /** The I/O held back to run on the issuing thread in await(), or -1. */
    private int held = -1;
    /** I/Os this phase runs itself, in order, because the I/O threads are saturated. */
    private final int[] serial;

    private int serialCount;
    private boolean runSerially;
    private final ByteBuffer[] heldBuffers;
    private final int[] heldOffsets;
    private volatile Thread waiter;
    /** In a phase begun by {@link #beginThen}: what the last completion runs instead of waking a waiter. */
    private Runnable then;
    /** {@link #then} goes to {@link IoThreads#runContinuation}, not run on the completing thread. */
    private boolean thenHandedOff;

    MemberPhase(int capacity) {
        members = new Member[capacity];
        errors = new IOException[capacity];
        offsets = new long[capacity];
        lengths = new int[capacity];
        writes = new boolean[capacity];
        buffers = new ByteBuffer[capacity];
        viewOf = new ByteBuffer[capacity];
        views = new ByteBuffer[capacity];
        heldBuffers = new ByteBuffer[capacity];
        heldOffsets = new int[capacity];
        serial = new int[capacity];
    }

    /** Starts a phase on the calling thread. */
    void begin() {
        for (int i = 0; i < count; i++) {
            members[i] = null;
            errors[i] = null;
            buffers[i] = null;
        }
        count = 0;
        held = -1;
        serialCount = 0;
        runSerially = IoThreads.saturated();
        waiter = Thread.currentThread();
        then = null;
        outstanding.set(1);
    }

    /**
     * Starts a phase that no thread waits for: every I/O is issued at once as it is added, and
     * when the issuer has {@link #launch}ed the phase and every I/O has completed, {@code next}
     * runs on the thread of the last completion (the io_uring's loop), or, when {@code handOff}
     * (members on a connection, whose reader must not wait), on {@link IoThreads#runContinuation};
     * on the issuer's if all completed before the launch. Only for members that complete on the
     * ring, on a connection or inline.
     */
    void beginThen(Runnable next, boolean handOff) {
        begin();
        runSerially = false;
        waiter = null;
        then = next;
        thenHandedOff = handOff;
    }

    /** Ends the issuing of a phase begun by {@link #beginThen}. */
    void launch() {
        if (outstanding.decrementAndGet() == 0) {
            then.run();
        }
    }

    /** Whether every I/O of the finished phase succeeded. */
    boolean succeeded() {
        for (int i = 0; i < count; i++) {
            if (errors[i] != null) {
                return false;
            }
        }
        return true;
    }

    /** Issues a read of {@code m}'s data at {@code memberOffset} into {@code dst[off, off+len)}. */
    void read(Member m, long memberOffset, ByteBuffer dst, int off, int len) {
        int tag = add(m, memberOffset, len, false);
        issue(tag, own(tag, m, dst), off);
    }

    /** Issues a write of {@code src[off, off+len)} to {@code m}'s data at {@code memberOffset}. */
    void write(Member m, long memberOffset, ByteBuffer src, int off, int len) {
        int tag = add(m, memberOffset, len, true);
        issue(tag, own(tag, m, src), off);
    }

    /** Holds this I/O back for the issuing thread and sends the one held before it, if any. */
    private void issue(int tag, ByteBuffer buffer, int off) {
        Member m = members[tag];
        if (then != null || m.async.completesInline() || m.async.batchesOnRing()) {
            start(tag, buffer, off);
            return;
        }
        if (runSerially && m.async.handsOffLocalIo()) {
            heldBuffers[tag] = buffer;
            heldOffsets[tag] = off;
            serial[serialCount++] = tag;
            return;
        }
        if (held >= 0) {
            start(held, heldBuffers[held], heldOffsets[held]);
        }
        held = tag;
        heldBuffers[tag] = buffer;
        heldOffsets[tag] = off;
    }

    private void start(int tag, ByteBuffer buffer, int off) {
        Member m = members[tag];
        long at = m.dataOffsetBytes + offsets[tag];
        if (writes[tag]) {
            m.async.writeAsync(at, buffer, off, lengths[tag], this, tag);
        } else {
            m.async.readAsync(at, buffer, off, lengths[tag], this, tag);
        }
    }

    /** A held I/O, on this thread, with the member's blocking call. */
    private void runHeld(int tag) {
        Member m = members[tag];
        ByteBuffer buffer = heldBuffers[tag];
        heldBuffers[tag] = null;
        IOException error = null;
        try {
            long at = m.dataOffsetBytes + offsets[tag];
            if (writes[tag]) {
                m.disk.write(at, buffer, heldOffsets[tag], lengths[tag]);
            } else {
                m.disk.read(at, buffer, heldOffsets[tag], lengths[tag]);
            }
        } catch (IOException e) {
            error = e;
        } catch (RuntimeException e) {
            error = new IOException(m.name() + ": " + e, e);
        }
        ioDone(tag, error);
    }

    /** {@code b}, or a view of it when an earlier I/O of this phase runs with the same object. */
    private ByteBuffer own(int tag, Member m, ByteBuffer b) {
        boolean shared = false;
        for (int i = 0; i < tag && !shared; i++) {
            shared = buffers[i] == b;
        }
        buffers[tag] = b;
        if (!shared || m.async.completesInline()) {
            return b;
        }
        if (viewOf[tag] != b) {
            views[tag] = b.duplicate();
            viewOf[tag] = b;
        }
        return views[tag];
    }

    private int add(Member m, long memberOffset, int len, boolean write) {
        int tag = count++;
        members[tag] = m;
        errors[tag] = null;
        offsets[tag] = memberOffset;
        lengths[tag] = len;
        writes[tag] = write;
        outstanding.incrementAndGet();
        m.nrPending.get();
        return tag;
    }

    @Override
    public void ioDone(int tag, IOException error) {
        Member m = members[tag];
        if (error != null) {
            errors[tag] = error;
            m.countError();
        } else if (writes[tag]) {
            m.countIo(true, lengths[tag]);
            m.wroteData(offsets[tag], lengths[tag]);
        } else {
            m.countIo(false, lengths[tag]);
            m.readDataOk();
        }
        m.nrPending.put();
        if (outstanding.decrementAndGet() == 0) {
            Runnable next = then; // written before the phase's first I/O was issued
            if (next != null && thenHandedOff) {
                IoThreads.runContinuation(next);
            } else if (next != null) {
                next.run();
            } else {
                LockSupport.unpark(waiter);
            }
        }
    }

    /** Waits for every I/O of the phase; true when all succeeded. */
    boolean await() {
        if (held >= 0) {
            int tag = held;
            held = -1;
            runHeld(tag);
        }
        for (int i = 0; i < serialCount; i++) {
            runHeld(serial[i]);
        }
        serialCount = 0;
        if (outstanding.decrementAndGet() != 0) {
            for (int i = 0; i < SPINS && outstanding.get() != 0; i++) {
                Thread.onSpinWait();
            }
            while (outstanding.get() != 0) {
                LockSupport.park(this); // the last callback unparks us (or a spurious wake re-checks)
            }
        }
        return succeeded();
    }

    /** After a failed {@link #await()}: marks each member whose I/O failed faulty (md's md_error). */
    void failMembers(ArrayCore core) throws IOException {
        for (int i = 0; i < count; i++) {
            if (errors[i] != null) {
                IOException e = errors[i];
                errors[i] = null;
                core.memberFailed(members[i], e);
            }
        }
    }

    /** The I/O of {@code tag} failed (after await). */
    boolean failed(int tag) {
        return errors[tag] != null;
    }

    int count() {
        return count;
    }
}
