package org.raidfive.nbd;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;

/**
 * One request of one connection, reused: the connection owns a fixed set of these (its in-flight
 * limit). Life cycle: the connection's reader fills it (and, for a write, its payload) and hands
 * it to a worker, or straight to the {@link ReplyWriter} when it was rejected; the worker runs it
 * against the disk and submits it to the writer; the writer sends the reply and returns it (and
 * its pooled payload buffer) to the connection. A plain read or write on a disk with its own
 * completion-based I/O ({@link ServerExport#async}) is started by the reader instead, and its
 * completion queues the reply: no worker waits for it. Exactly one thread touches it at a time;
 * the hand-offs (executor queue, the disk's completion, reply queue, free queue) order the
 * accesses.
 */
final class ServerRequest implements Runnable, IoCallback {
    private final ServerConnection connection;
    private final ServerExport export;
    /** Reply header: magic, error, cookie (16 bytes, direct). */
    final ByteBuffer replyHeader;

    private final ByteBuffer zeros;

    int type;
    int flags;
    long cookie;
    long offset;
    int length;
    int error;
    /** Read data to send, or write data received; a pooled buffer or null. */
    ByteBuffer payload;
    /** Payload bytes this request holds of its connection's budget, and of those, of the server's. */
    long budgetBytes;

    long sharedBytes;

    ServerRequest(ServerConnection connection, ServerExport export, ByteBuffer replyHeader) {
        this.connection = connection;
        this.export = export;
        this.replyHeader = replyHeader;
        this.zeros = export.zeros.duplicate();
    }

    void set(int type, int flags, long cookie, long offset, int length) {
        this.type = type;
        this.flags = flags;
        this.cookie = cookie;
        this.offset = offset;
        this.length = length;
        this.error = 0;
        this.payload = null;
    }

    /** Executes on a worker thread, then queues the reply. */
    @Override
    public void run() {
        try {
            execute();
        } catch (IOException | RuntimeException e) {
            error = errorFor(e);
        }
        reply();
    }

    /**
     * Starts a plain READ or WRITE (no FUA) on the export's completion-based I/O; {@link #ioDone}
     * queues the reply. Called by the connection's reader instead of {@link #run}.
     */
    void startAsync() {
        try {
            if (type == NbdProtocol.CMD_READ) {
                payload = export.buffers.acquire(length);
                export.async.readAsync(offset, payload, 0, length, this, 0);
            } else {
                export.async.writeAsync(offset, payload, 0, length, this, 0);
            }
        } catch (IOException | RuntimeException e) { // not started: the disk reports its own errors to the callback
            error = errorFor(e);
            reply();
        }
    }

    /** The completion of {@link #startAsync}, on whichever thread the disk completes it. */
    @Override
    public void ioDone(int tag, IOException failure) {
        if (failure != null) {
            error = NbdProtocol.EIO;
        }
        if (type == NbdProtocol.CMD_WRITE) {
            releasePayload();
        }
        reply();
    }

    /** The NBD error for what a request threw, noted where the connection keeps count. */
    private int errorFor(Exception e) {
        if (e instanceof BufferPool.OutOfBuffersException full) {
            connection.noteOutOfMemory(full);
            return NbdProtocol.ENOMEM;
        }
        if (e instanceof IOException) {
            return NbdProtocol.EIO;
        }
        if (e instanceof IllegalArgumentException) {
            return NbdProtocol.EINVAL; // e.g. an O_DIRECT file disk refusing an unaligned range
        }
        connection.noteUnexpected((RuntimeException) e);
        return NbdProtocol.EIO;
    }

    /** Queues the reply, the payload given back first unless it is read data to send. */
    private void reply() {
        if (error != 0 && payload != null) {
            releasePayload();
        }
        connection.replies().submit(this);
    }

    private void execute() throws IOException {
        MemberDisk disk = export.disk;
        boolean fua = (flags & NbdProtocol.CMD_FLAG_FUA) != 0;
        switch (type) {
            case NbdProtocol.CMD_READ:
                payload = export.buffers.acquire(length);
                disk.read(offset, payload, 0, length);
                break;
            case NbdProtocol.CMD_WRITE:
                disk.write(offset, payload, 0, length);
                releasePayload();
                if (fua) {
                    disk.flush();
                }
                break;
            case NbdProtocol.CMD_FLUSH:
                disk.flush();
                break;
            case NbdProtocol.CMD_TRIM:
                if (export.config.trimMode() == TrimMode.ZERO) {
                    writeZeros(disk);
                    if (fua) {
                        disk.flush();
                    }
                }
                break;
            case NbdProtocol.CMD_WRITE_ZEROES:
                writeZeros(disk);
                if (fua) {
                    disk.flush();
                }
                break;
            default:
                throw new IllegalStateException("unvalidated command " + type);
        }
    }

    /** Writes zeros over {@code [offset, offset+length)} in pieces of the shared zero buffer. */
    private void writeZeros(MemberDisk disk) throws IOException {
        long at = offset;
        long end = offset + Integer.toUnsignedLong(length);
        while (at < end) {
            int piece = (int) Math.min(end - at, zeros.capacity());
            disk.write(at, zeros, 0, piece);
            at += piece;
        }
    }

    void releasePayload() {
        if (payload != null) {
            export.buffers.release(payload);
            payload = null;
        }
    }

    /** Fills {@link #replyHeader} and positions the buffers for a gathering write; returns how many. */
    int prepareReply(ByteBuffer[] gather, int at) {
        replyHeader.clear();
        replyHeader.putInt(0, NbdProtocol.SIMPLE_REPLY_MAGIC).putInt(4, error).putLong(8, cookie);
        gather[at] = replyHeader;
        if (type == NbdProtocol.CMD_READ && error == 0 && length > 0) {
            payload.limit(length).position(0);
            gather[at + 1] = payload;
            return 2;
        }
        return 1;
    }
}
