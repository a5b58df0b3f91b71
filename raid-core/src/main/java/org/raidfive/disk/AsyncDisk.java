package org.raidfive.disk;

import java.nio.ByteBuffer;

/**
 * A member that also takes completion-based I/O: the caller submits and goes on, the outcome
 * arrives at an {@link IoCallback}. This is what lets a stripe operation issue every member I/O of
 * a phase at once: memory members complete inline, files on a pool of I/O threads sized to the
 * I/O in flight ({@link IoThreads}), NBD members pipelined on their connection.
 *
 * <p>Same rules as the blocking calls (ranges, buffers, EOFException), reported to the callback
 * instead of thrown; the buffer belongs to the I/O until its callback runs. {@link #of} gives any
 * {@link MemberDisk} this capability, running its blocking calls on {@link IoThreads}.
 */
public interface AsyncDisk extends MemberDisk {

    /** Starts a read as {@link MemberDisk#read}; {@code callback} gets {@code tag} and null, or the error, when it ends. */
    void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag);

    /** Starts a write as {@link MemberDisk#write}; {@code callback} gets {@code tag} and null, or the error, when it ends. */
    void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag);

    /** Starts a flush as {@link MemberDisk#flush}; {@code callback} gets {@code tag} and null, or the error, when it ends. */
    void flushAsync(IoCallback callback, int tag);

    /** {@code disk} itself when it takes completion-based I/O, else a view that runs its calls on {@link IoThreads}. */
    static AsyncDisk of(MemberDisk disk) {
        return disk instanceof AsyncDisk a ? a : new BlockingAsyncDisk(disk);
    }

    /**
     * True if this disk's completion-based I/O hands local storage I/O (files, block devices) to
     * another thread, the shared {@link IoThreads} or the io_uring's loop ({@link IoBackend}), and
     * completes there: each one costs a thread hand-off, which a caller may spare by making the
     * blocking call itself when the pool is {@link IoThreads#saturated}.
     */
    default boolean handsOffLocalIo() {
        return false;
    }

    /**
     * True if this disk's completion-based I/O goes to the process's io_uring ({@link IoBackend}):
     * I/Os submitted together reach the kernel together and complete in a batch on the ring's
     * thread, so a caller with several I/Os to wait for submits them all and waits once, rather than
     * making one of them a blocking call of its own (which would sleep in the kernel besides).
     */
    default boolean batchesOnRing() {
        return false;
    }

    /**
     * True if this disk's reads and writes go through the kernel's page cache (a file or block
     * device opened without O_DIRECT): a blocking call is mostly a copy that the calling thread
     * makes for less than a hand-off to another thread costs.
     */
    default boolean bufferedByPageCache() {
        return false;
    }

    /**
     * True if this disk's completion-based I/O is pipelined on a connection (NBD): a submission may
     * wait (for a free request slot, for the socket to take the request), and the callback runs on
     * the connection's reader thread ({@link CompletionThread}), which must never wait for either,
     * since it alone frees the slots and drains the replies. A next step that submits I/O is handed
     * from there to {@link IoThreads#runContinuation}.
     */
    default boolean pipelinesOnConnection() {
        return false;
    }

    /** True if this disk's completion-based I/O runs inline on the submitting thread (memory). */
    default boolean completesInline() {
        return false;
    }
}
