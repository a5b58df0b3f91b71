package org.raidfive.nbd;

import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.MemberDisk;

/**
 * What every connection of one {@link NbdServer} shares: the disk, the validated configuration,
 * the advertised transmission flags, the buffer pool, the worker pool and a read-only zero buffer.
 */
final class ServerExport {
    /** Size of the shared zero source for WRITE_ZEROES / zeroing TRIM; ranges are written in pieces of this. */
    static final int ZERO_PIECE_BYTES = 1 << 20;

    final MemberDisk disk;
    /**
     * The disk's completion-based I/O where it has its own and does not complete inline (an array
     * over file or NBD members): plain reads and writes go there and no worker waits for them.
     * Null otherwise.
     */
    final AsyncDisk async;

    final NbdServerConfig config;
    final int transmissionFlags;
    final BufferPool buffers;
    /** Null with {@link RequestExecution#CONNECTION_THREAD}. */
    final ExecutorService workers;
    /** Never written. Each user takes a {@link ByteBuffer#duplicate()} (disks may move position/limit). */
    final ByteBuffer zeros;

    private volatile boolean closing;

    ServerExport(MemberDisk disk, NbdServerConfig config, ExecutorService workers) {
        this.disk = disk;
        this.async = disk instanceof AsyncDisk a && !a.completesInline() ? a : null;
        this.config = config;
        this.transmissionFlags = transmissionFlags(config);
        this.buffers = new BufferPool(config.maxRequestBytes());
        this.workers = workers;
        this.zeros = ByteBuffer.allocateDirect(ZERO_PIECE_BYTES);
    }

    /**
     * CAN_MULTI_CONN is honest here: every connection reaches the same disk object and FLUSH/FUA
     * call {@link MemberDisk#flush()}, which makes every completed write durable whichever
     * connection issued it, before the reply is sent.
     */
    private static int transmissionFlags(NbdServerConfig config) {
        int flags = NbdProtocol.FLAG_HAS_FLAGS
                | NbdProtocol.FLAG_SEND_FLUSH
                | NbdProtocol.FLAG_SEND_FUA
                | NbdProtocol.FLAG_CAN_MULTI_CONN;
        if (config.readOnly()) {
            flags |= NbdProtocol.FLAG_READ_ONLY;
        } else {
            if (config.trimMode() != TrimMode.UNSUPPORTED) {
                flags |= NbdProtocol.FLAG_SEND_TRIM;
            }
            if (config.writeZeroes()) {
                flags |= NbdProtocol.FLAG_SEND_WRITE_ZEROES;
            }
        }
        return flags;
    }

    /** True when {@code name} selects this export: its configured name or the empty default name. */
    /**
     * The export a client asked for by {@code name}: its own name, or the empty name (the default
     * export) unless listing is off: a server that does not list its export does not hand it to a
     * client that does not know its name.
     */
    boolean matches(String name) {
        return name.isEmpty() ? config.listExports() : name.equals(config.exportName());
    }

    /**
     * The disk's size now. Each connection takes it once, in its handshake, and keeps it: NBD tells a
     * client its export's size only there, so a disk that grows (a reshape that has ended) is seen
     * at its new size by the connections made after.
     */
    long size() {
        return disk.size();
    }

    boolean closing() {
        return closing;
    }

    void markClosing() {
        closing = true;
    }
}
