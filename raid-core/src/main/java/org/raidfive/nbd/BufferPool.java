package org.raidfive.nbd;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import org.jctools.queues.MpmcArrayQueue;

/**
 * Direct buffers in power-of-two size classes from 4 KiB to the largest request, shared by the
 * threads of one server. {@link #acquire} takes a cached buffer or allocates one; {@link #release}
 * caches it again while its class holds fewer than its cap (about {@link #BYTES_PER_CLASS} bytes,
 * at least two buffers), else frees it at once ({@code Unsafe.invokeCleaner}: left to the
 * collector, a burst of large requests would keep gigabytes of dead direct memory resident until
 * the next GC, which a server with a small heap may not run for a long time). In steady state
 * nothing is allocated.
 *
 * <p>Thread-safe and lock-free: each class is a bounded MPMC queue.
 */
final class BufferPool {
    static final int MIN_SHIFT = 12;
    static final int BYTES_PER_CLASS = 16 << 20;

    private final int maxShift;
    private final MpmcArrayQueue<ByteBuffer>[] classes;

    @SuppressWarnings({"unchecked", "rawtypes"}) // generic array creation
    BufferPool(int maxBufferBytes) {
        int shift = MIN_SHIFT;
        while ((1L << shift) < maxBufferBytes) {
            shift++;
        }
        this.maxShift = shift;
        this.classes = new MpmcArrayQueue[shift - MIN_SHIFT + 1];
        for (int s = MIN_SHIFT; s <= shift; s++) {
            int cap = Math.max(2, Math.min(256, BYTES_PER_CLASS >>> s));
            classes[s - MIN_SHIFT] = new MpmcArrayQueue<>(cap);
        }
    }

    /** Direct memory ran out: the request is answered ENOMEM, nothing escapes as an Error. */
    static final class OutOfBuffersException extends IOException {
        private static final long serialVersionUID = 1L;

        OutOfBuffersException(int bytes, OutOfMemoryError cause) {
            super("no direct memory for a " + bytes + "-byte buffer (" + cause.getMessage() + ")", cause);
        }
    }

    /**
     * A direct buffer of capacity at least {@code length}; position 0, limit its capacity.
     *
     * @throws OutOfBuffersException when the JVM has no direct memory left for it
     */
    ByteBuffer acquire(int length) throws OutOfBuffersException {
        int shift = shiftFor(length);
        ByteBuffer buffer = classes[shift - MIN_SHIFT].relaxedPoll();
        if (buffer == null) {
            try {
                buffer = ByteBuffer.allocateDirect(1 << shift);
            } catch (OutOfMemoryError e) {
                throw new OutOfBuffersException(1 << shift, e);
            }
        }
        return buffer.clear();
    }

    void release(ByteBuffer buffer) {
        int capacity = buffer.capacity();
        int shift = Integer.numberOfTrailingZeros(capacity);
        if (Integer.bitCount(capacity) == 1
                && shift >= MIN_SHIFT
                && shift <= maxShift
                && classes[shift - MIN_SHIFT].relaxedOffer(buffer)) {
            return;
        }
        free(buffer);
    }

    private static final sun.misc.Unsafe UNSAFE = unsafe();

    private static sun.misc.Unsafe unsafe() {
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (sun.misc.Unsafe) f.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null; // then the collector frees dropped buffers
        }
    }

    /** Frees a buffer nobody uses any more (only whole buffers this pool allocated come here). */
    private static void free(ByteBuffer buffer) {
        if (UNSAFE != null && buffer.isDirect()) {
            UNSAFE.invokeCleaner(buffer);
        }
    }

    private int shiftFor(int length) {
        if (length <= (1 << MIN_SHIFT)) {
            return MIN_SHIFT;
        }
        int shift = 32 - Integer.numberOfLeadingZeros(length - 1);
        if (shift > maxShift) {
            throw new IllegalArgumentException("buffer of " + length + " bytes exceeds the pool's largest class of "
                    + (1L << maxShift) + " bytes");
        }
        return shift;
    }
}
