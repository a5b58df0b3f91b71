package org.raidfive.nbd;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.raidfive.disk.IoCallback;

/**
 * One request slot of an {@link NbdClient}, reused. Its index is the low 16 bits of the cookie,
 * a per-slot generation the rest, so a late or forged reply cannot complete a later request.
 *
 * <p>States: FREE -> WAITING (caller, after filling the fields) -> CLAIMED (whoever wins the CAS:
 * the reader on a reply, the reader failing everything, or the caller after a timeout once the
 * connection is dead) -> DONE (the claimer, after writing the result) -> FREE (caller). Only the
 * claimer writes the result and only the reader claims to receive a payload, so a caller returns
 * only once nothing else can touch its buffer. Result fields are plain: they are written before
 * the volatile store of DONE and read after the caller's volatile load of DONE.
 */
final class PendingRequest {
    static final int FREE = 0;
    static final int WAITING = 1;
    static final int CLAIMED = 2;
    static final int DONE = 3;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(PendingRequest.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int index;
    /** Request header (28 bytes, direct), written by the caller before sending. */
    final ByteBuffer header = ByteBuffer.allocateDirect(NbdProtocol.REQUEST_HEADER_BYTES);

    private int generation;

    private volatile int state;
    long cookie;
    int type;
    long deadlineNanos;
    Thread waiter;
    ByteBuffer dst;
    int dstOffset;
    int length;

    int error;
    IOException failure;
    /** Completion-based request: who is told, and with what tag; null for a caller that waits. */
    IoCallback callback;
    /** A completion-based write's data and where it starts, kept until the request is sent. */
    ByteBuffer payload;

    int payloadOffset;

    int tag;
    long offset;
    /** Run instead of waking a waiter when {@link #callback} is set (the client's finisher). */
    private final Consumer<PendingRequest> asyncDone;

    PendingRequest(int index) {
        this(index, null);
    }

    PendingRequest(int index, Consumer<PendingRequest> asyncDone) {
        this.index = index;
        this.asyncDone = asyncDone;
    }

    /** Fills the request; the caller owns the slot (FREE). Returns the cookie. */
    long prepare(int type, int flags, long offset, int length, ByteBuffer dst, int dstOffset, long deadlineNanos) {
        generation++;
        this.cookie = ((long) generation << 16) | index;
        this.type = type;
        this.dst = dst;
        this.dstOffset = dstOffset;
        this.length = length;
        this.deadlineNanos = deadlineNanos;
        this.waiter = Thread.currentThread();
        this.error = 0;
        this.failure = null;
        this.offset = offset;
        header.clear();
        header.putInt(NbdProtocol.REQUEST_MAGIC)
                .putShort((short) flags)
                .putShort((short) type)
                .putLong(cookie)
                .putLong(offset)
                .putInt(length)
                .flip();
        return cookie;
    }

    int state() {
        return state;
    }

    void publishWaiting() {
        state = WAITING;
    }

    boolean claim() {
        return STATE.compareAndSet(this, WAITING, CLAIMED);
    }

    /** By the claimer only. */
    void complete(int error, IOException failure) {
        this.error = error;
        this.failure = failure;
        Thread w = waiter;
        boolean async = callback != null;
        state = DONE;
        if (async) {
            asyncDone.accept(this);
        } else {
            LockSupport.unpark(w);
        }
    }

    /** By the caller, after DONE. */
    void reset() {
        dst = null;
        payload = null;
        waiter = null;
        failure = null;
        callback = null;
        state = FREE;
    }
}
