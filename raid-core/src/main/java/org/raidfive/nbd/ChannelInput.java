package org.raidfive.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * A buffered reader of big-endian protocol fields over a blocking channel. One {@code read()}
 * system call fills the buffer with as many queued messages as the peer has sent, so a pipelining
 * peer costs one call per batch, not per message. Payloads at least {@link #DIRECT_READ_BYTES}
 * long bypass the buffer and go straight into the caller's buffer.
 *
 * <p>Not thread-safe: one reader thread owns an instance.
 */
final class ChannelInput {
    /** Larger remainders of a payload are read straight into the destination, skipping a copy. */
    static final int DIRECT_READ_BYTES = 64 * 1024;

    private ReadableByteChannel channel;
    /** Unread bytes are {@code [position, limit)}. */
    private final ByteBuffer buffer;

    private Runnable beforeBlockingRead;
    /**
     * Bytes read from the channel so far. Only the connection's reader writes it; the server's
     * timer reads it (volatile, once per read call, not per byte) to tell a silent or trickling
     * client from a progressing one.
     */
    private volatile long received;

    ChannelInput(ReadableByteChannel channel, int bufferBytes) {
        this.channel = channel;
        this.buffer = ByteBuffer.allocateDirect(bufferBytes);
        buffer.limit(0);
    }

    /**
     * Reads from {@code replacement} from now on (after STARTTLS: the TLS channel); returns the bytes
     * read ahead from the old channel (which belong to the new one's stream) and empties the buffer.
     */
    ByteBuffer switchTo(ReadableByteChannel replacement) {
        ByteBuffer ahead = ByteBuffer.allocate(buffer.remaining());
        ahead.put(buffer).flip();
        buffer.limit(0);
        this.channel = replacement;
        return ahead;
    }

    /** Runs {@code hook} before every call that may block on the channel (e.g. to flush replies). */
    void beforeBlockingRead(Runnable hook) {
        this.beforeBlockingRead = hook;
    }

    private int read(ByteBuffer dst) throws IOException {
        if (beforeBlockingRead != null) {
            beforeBlockingRead.run();
        }
        int n = channel.read(dst);
        if (n > 0) {
            received += n; // single writer
        }
        return n;
    }

    /** Bytes read from the channel so far (any thread). */
    long received() {
        return received;
    }

    /**
     * Makes at least {@code n} bytes available. Returns false on end of stream when no byte of the
     * next message has arrived (a clean end between messages); throws {@link EOFException} when the
     * stream ends inside it.
     */
    boolean await(int n) throws IOException {
        if (buffer.remaining() >= n) {
            return true;
        }
        if (n > buffer.capacity()) {
            throw new IllegalArgumentException("cannot buffer " + n + " bytes in " + buffer.capacity());
        }
        if (buffer.capacity() - buffer.position() < n) {
            buffer.compact().flip();
        }
        int start = buffer.remaining();
        while (buffer.remaining() < n) {
            int unread = buffer.position();
            buffer.position(buffer.limit()).limit(buffer.capacity());
            int read;
            try {
                read = read(buffer);
            } finally {
                buffer.limit(buffer.position()).position(unread);
            }
            if (read < 0) {
                if (buffer.remaining() == 0 && start == 0) {
                    return false;
                }
                throw new EOFException("connection closed in the middle of a message (" + buffer.remaining() + " of "
                        + n + " bytes received)");
            }
        }
        return true;
    }

    /** Like {@link #await} but an end of stream is always an error. */
    void require(int n) throws IOException {
        if (!await(n)) {
            throw new EOFException("connection closed by peer");
        }
    }

    int buffered() {
        return buffer.remaining();
    }

    byte readByte() throws IOException {
        require(1);
        return buffer.get();
    }

    short readShort() throws IOException {
        require(2);
        return buffer.getShort();
    }

    int readInt() throws IOException {
        require(4);
        return buffer.getInt();
    }

    long readLong() throws IOException {
        require(8);
        return buffer.getLong();
    }

    /** Reads a small field of {@code n} bytes into a new array (handshake use only). */
    byte[] readBytes(int n) throws IOException {
        byte[] bytes = new byte[n];
        int done = 0;
        while (done < n) {
            int chunk = Math.min(n - done, buffer.capacity());
            require(chunk);
            buffer.get(bytes, done, chunk);
            done += chunk;
        }
        return bytes;
    }

    String readString(int n) throws IOException {
        return new String(readBytes(n), StandardCharsets.UTF_8);
    }

    /**
     * Reads exactly {@code length} bytes into {@code dst[offset, offset+length)}. The position and
     * limit of {@code dst} are restored before returning.
     */
    void readFully(ByteBuffer dst, int offset, int length) throws IOException {
        int copied = Math.min(length, buffer.remaining());
        dst.put(offset, buffer, buffer.position(), copied);
        buffer.position(buffer.position() + copied);
        int at = offset + copied;
        int end = offset + length;
        while (at < end) {
            int rest = end - at;
            if (rest < DIRECT_READ_BYTES && rest <= buffer.capacity()) {
                // Small remainder: fill our buffer instead, which also picks up the next messages.
                require(rest);
                dst.put(at, buffer, buffer.position(), rest);
                buffer.position(buffer.position() + rest);
                return;
            }
            int savedPosition = dst.position();
            int savedLimit = dst.limit();
            try {
                dst.limit(end).position(at);
                while (dst.hasRemaining()) {
                    if (read(dst) < 0) {
                        throw new EOFException("connection closed with " + dst.remaining() + " bytes of a " + length
                                + "-byte payload still to come");
                    }
                }
            } finally {
                dst.limit(savedLimit).position(savedPosition);
            }
            return;
        }
    }

    /** Discards exactly {@code n} bytes (unsigned, up to 2^32-1 and beyond) without allocating. */
    void skip(long n) throws IOException {
        while (n > 0) {
            if (buffer.remaining() == 0) {
                require(1);
            }
            int step = (int) Math.min(n, buffer.remaining());
            buffer.position(buffer.position() + step);
            n -= step;
        }
    }
}
