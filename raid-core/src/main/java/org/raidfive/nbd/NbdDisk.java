package org.raidfive.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.ClaimMode;
import org.raidfive.disk.Claims;
import org.raidfive.disk.DiskClaim;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;

/**
 * A RAID member reached over NBD: a {@link MemberDisk} over one {@link NbdClient} connection,
 * opened from a URI ({@code nbd://host[:port][/export]} or
 * {@code nbd+unix:///export?socket=PATH}, see {@link NbdUri}).
 *
 * <p>Semantics: reads and writes longer than the server's maximum request are split into
 * consecutive requests (a failure part-way leaves the earlier parts written). {@link #flush()}
 * sends NBD_CMD_FLUSH when the server advertised it and is a no-op otherwise (such a server
 * offers no durability control; its writes are as durable as it makes them). A range beyond the
 * export fails with {@link EOFException} before anything is sent.
 *
 * <p>Failure: the connection is never re-established and no request is ever resent. A timed-out
 * or broken connection fails the pending call and every later one with an {@link IOException},
 * so the RAID engine marks the member faulty instead of risking a duplicated or reordered write.
 * Thread-safe: calls from many threads are pipelined over the one connection.
 */
public final class NbdDisk implements AsyncDisk {
    private final NbdClient client;
    private final String name;
    private final long size;
    private final int maxChunk;

    /** Wraps an open client; closing the disk closes it. */
    public NbdDisk(NbdClient client) {
        this.client = Objects.requireNonNull(client, "client");
        this.name = client.name();
        this.size = client.size();
        this.maxChunk = client.maxRequestBytes();
    }

    /** Opens {@code uri} with default client settings. */
    public static NbdDisk open(String uri) throws IOException {
        return open(NbdUri.parse(uri), NbdClientConfig.defaults());
    }

    /** Connects to the export an {@code nbd://} or {@code nbd+unix://} URI names. */
    public static NbdDisk open(String uri, NbdClientConfig config) throws IOException {
        return open(NbdUri.parse(uri), config);
    }

    /** Connects to the export {@code uri} names. */
    public static NbdDisk open(NbdUri uri, NbdClientConfig config) throws IOException {
        return new NbdDisk(NbdClient.connect(uri, config));
    }

    /** True for strings with an NBD URI scheme; see {@link NbdUri#isNbdUri(String)}. */
    public static boolean isNbdUri(String text) {
        return NbdUri.isNbdUri(text);
    }

    /** The connection under this disk. */
    public NbdClient client() {
        return client;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        checkRange(position, length);
        while (length > 0) {
            int chunk = Math.min(length, maxChunk);
            client.read(position, dst, dstOffset, chunk);
            position += chunk;
            dstOffset += chunk;
            length -= chunk;
        }
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        checkRange(position, length);
        while (length > 0) {
            int chunk = Math.min(length, maxChunk);
            client.write(position, src, srcOffset, chunk);
            position += chunk;
            srcOffset += chunk;
            length -= chunk;
        }
    }

    @Override
    public void flush() throws IOException {
        if (client.export().canFlush()) {
            client.flush();
        } else if (!client.isOpen()) {
            throw new IOException(name + ": disk is closed");
        }
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * Excludes other arrays of this process from the same export (by its URI). A server cannot be
     * locked from a client, so another process can still open the export: NBD members are owned by
     * convention only.
     */
    @Override
    public DiskClaim claim(ClaimMode mode, String holder) throws IOException {
        return Claims.inProcess("nbd:" + name, name, mode, holder);
    }

    @Override
    public void close() {
        client.close();
    }

    private void checkRange(long position, int length) throws IOException {
        if (position < 0 || length < 0 || position > size - length) {
            throw new EOFException(name + ": I/O at offset " + position + " length " + length
                    + " lies outside the disk (size " + size + " bytes)");
        }
        if (!client.isOpen()) {
            IOException cause = client.failure();
            throw new IOException(name + ": disk is closed" + (cause != null ? ": " + cause.getMessage() : ""), cause);
        }
    }

    @Override
    public String toString() {
        return "nbd " + name + " (" + size + " bytes)";
    }

    // Completion-based I/O, pipelined on the one connection: the callback runs on the client's
    // reader thread. A request longer than the server's maximum goes as a blocking call on the
    // shared I/O threads (it is split into several requests).

    @Override
    public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        if (length > maxChunk) {
            AsyncDisk.of(new Blocking(this)).readAsync(position, dst, dstOffset, length, callback, tag);
            return;
        }
        client.readAsync(position, dst, dstOffset, length, callback, tag);
    }

    @Override
    public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        if (length > maxChunk) {
            AsyncDisk.of(new Blocking(this)).writeAsync(position, src, srcOffset, length, callback, tag);
            return;
        }
        client.writeAsync(position, src, srcOffset, length, callback, tag);
    }

    /** Pipelined on the connection: callbacks run on its reader, which must not wait for a slot. */
    @Override
    public boolean pipelinesOnConnection() {
        return true;
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        AsyncDisk.of(new Blocking(this)).flushAsync(callback, tag);
    }

    /** This disk's blocking calls only, for the shared I/O threads. */
    private record Blocking(NbdDisk disk) implements MemberDisk {
        @Override
        public long size() {
            return disk.size();
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            disk.read(position, dst, dstOffset, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            disk.write(position, src, srcOffset, length);
        }

        @Override
        public void flush() throws IOException {
            disk.flush();
        }

        @Override
        public String name() {
            return disk.name();
        }

        @Override
        public void close() {
            // not ours to close
        }
    }
}
