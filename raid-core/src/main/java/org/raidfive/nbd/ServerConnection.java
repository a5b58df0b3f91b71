package org.raidfive.nbd;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: its own thread reads the handshake and then requests; requests run on
 * the server's worker pool; replies go out through a {@link ReplyWriter}.
 *
 * <p>With {@link RequestExecution#CONNECTION_THREAD} the reader runs each request itself and
 * the {@link ReplyWriter} defers: replies are flushed just before the reader would block (on the
 * socket, or on an empty free queue), one gathering write per burst.
 *
 * <p>Flow control: the connection owns {@code maxInFlight} {@link ServerRequest}s in a free queue.
 * The reader takes one per request and blocks when all are in flight, which stops it reading and
 * pushes back on the client through TCP. A request returns to the free queue after its reply has
 * been written (or dropped because the socket broke), so "all requests free" means "nothing in
 * flight, every reply sent".
 *
 * <p>Validation happens on the reader, before any buffer is allocated: offsets and lengths are
 * unsigned; a rejected write's payload is read and discarded in the input buffer so the stream
 * stays in step. Rejected requests are answered from the reader thread without a worker.
 *
 * <p>Memory: READ and WRITE payloads count against the connection's budget, taken before the
 * buffer is allocated: up to {@code connectionReserveBytes} freely, beyond that from the server's
 * shared {@link InFlightBudget}, never more than {@code maxInFlightBytesPerConnection}. A request
 * holds its share until its reply is written, so a client that does not take its replies runs out
 * of budget and its reader stops reading (back-pressure through TCP) instead of buffering.
 *
 * <p>Timeouts are enforced from outside, by the server's timer ({@link NbdServer}): the handshake
 * timeout, the idle timeout, and the reply timeout ({@link ReplyWriter#stalledSince}); each closes
 * the channel, which ends this connection as a broken socket would.
 *
 * <p>End: NBD_CMD_DISC, end of stream (fio's way), server shutdown ({@link #shutdownInput()}) or
 * a broken socket all stop the reader; it then waits for in-flight requests to finish and reply
 * (bounded by the drain timeout) before closing the socket. A request already read still reaches
 * the disk if the client vanishes; only its reply is lost.
 */
final class ServerConnection implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerConnection.class);
    private static final int INPUT_BUFFER_BYTES = 256 * 1024;

    private final NbdServer server;
    private final ServerExport export;
    private final SocketChannel channel;
    private final String peer;
    /** Whom this connection counts against for --max-connections-per-address: an address, or a user. */
    final String source;

    private final ChannelInput in;
    private final int maxInFlight;
    private final ArrayBlockingQueue<ServerRequest> free;
    private final ReplyWriter replies;
    /** {@link RequestExecution#CONNECTION_THREAD}: run requests here, flush replies before blocking. */
    private final boolean inline;

    private final AtomicLong unexpectedErrors = new AtomicLong();
    private volatile Throwable firstUnexpected;
    private long requests;
    /** The export's size as the handshake told the client; requests are checked against it. */
    private long size;

    final long openedNanos = System.nanoTime();
    /**
     * The client chose the export (set before the reply to NBD_OPT_GO or NBD_OPT_EXPORT_NAME is
     * sent, so no connection that has its GO reply is ever treated as one in the handshake).
     */
    private volatile boolean transmitting;
    /**
     * HANDSHAKE until the client chooses the export (CHOSEN) or a newcomer evicts the connection
     * (EVICTED): one compare-and-set decides, so a connection is never evicted once its GO reply
     * may be on its way, and never told GO once it is evicted.
     */
    private final AtomicInteger handshakeState = new AtomicInteger();

    private static final int HANDSHAKE = 0;
    private static final int CHOSEN = 1;
    private static final int EVICTED = 2;
    /** When the write payload now being read began (System.nanoTime), 0 when none is. */
    private volatile long payloadSinceNanos;

    private volatile long payloadBytes;
    /** {@link ChannelInput#received()} when that payload began. */
    private volatile long payloadReceivedAtStart;
    /** When the last request arrived (System.nanoTime), for the idle timeout. */
    private volatile long lastRequestNanos = openedNanos;
    /** Payload bytes of this connection's requests in flight (read and write data, replies not yet sent). */
    private final AtomicLong inFlightBytes = new AtomicLong();

    private volatile String closeReason;
    private final AtomicBoolean warnedMemory = new AtomicBoolean();

    ServerConnection(NbdServer server, ServerExport export, SocketChannel channel, String peer, String source) {
        this.server = server;
        this.export = export;
        this.channel = channel;
        this.peer = peer;
        this.source = source;
        this.in = new ChannelInput(channel, INPUT_BUFFER_BYTES);
        this.maxInFlight = export.config.maxInFlightPerConnection();
        this.free = new ArrayBlockingQueue<>(maxInFlight);
        this.inline = export.config.requestExecution() == RequestExecution.CONNECTION_THREAD;
        this.replies = new ReplyWriter(this, channel, maxInFlight, inline);
        ByteBuffer headers = ByteBuffer.allocateDirect(maxInFlight * NbdProtocol.SIMPLE_REPLY_BYTES);
        for (int i = 0; i < maxInFlight; i++) {
            ByteBuffer header = headers.slice(i * NbdProtocol.SIMPLE_REPLY_BYTES, NbdProtocol.SIMPLE_REPLY_BYTES);
            free.add(new ServerRequest(this, export, header));
        }
    }

    ReplyWriter replies() {
        return replies;
    }

    String peer() {
        return peer;
    }

    @Override
    public void run() {
        if (inline) {
            in.beforeBlockingRead(replies::flush);
        } else {
            replies.startWriterThread(Thread.currentThread().getName() + "-replies");
        }
        String end = "client closed the connection";
        try {
            ServerHandshake handshake = new ServerHandshake(in, channel, export, peer, this::exportChosen);
            if (handshake.run()) {
                if (handshake.tls() != null) {
                    replies.channel(handshake.tls());
                }
                size = handshake.size();
                LOG.debug(
                        "{}: transmission phase, size {} flags 0x{}",
                        peer,
                        size,
                        Integer.toHexString(export.transmissionFlags));
                end = transmission(in);
            } else {
                end = "handshake ended without choosing an export";
            }
        } catch (ClosedChannelException e) {
            end = closeReason != null ? closeReason : "connection closed";
        } catch (IOException e) {
            end = "I/O error: " + e;
        } catch (InterruptedException e) {
            end = "interrupted";
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            end = "unexpected error: " + e;
            LOG.warn("{}: unexpected error, closing the connection", peer, e);
        } finally {
            replies.flush();
            drain();
            replies.stopWriterThread();
            closeChannel();
            server.connectionClosed(this);
            LOG.debug("{}: closed after {} requests ({})", peer, requests, end);
            if (unexpectedErrors.get() > 0) {
                LOG.warn(
                        "{}: {} requests failed with unexpected exceptions (EIO sent); first:",
                        peer,
                        unexpectedErrors.get(),
                        firstUnexpected);
            }
        }
    }

    /** Reads requests until DISC or end of stream; returns why it stopped. */
    private String transmission(ChannelInput in) throws IOException, InterruptedException {
        while (true) {
            if (!in.await(NbdProtocol.REQUEST_HEADER_BYTES)) {
                return "end of stream without NBD_CMD_DISC";
            }
            int magic = in.readInt();
            if (magic != NbdProtocol.REQUEST_MAGIC) {
                return "bad request magic 0x" + Integer.toHexString(magic) + ", hard disconnect";
            }
            int flags = Short.toUnsignedInt(in.readShort());
            int type = Short.toUnsignedInt(in.readShort());
            long cookie = in.readLong();
            long offset = in.readLong();
            long length = Integer.toUnsignedLong(in.readInt());
            if (type == NbdProtocol.CMD_DISC) {
                return "NBD_CMD_DISC";
            }
            if (replies.broken()) {
                return "reply write failed";
            }
            requests++;
            lastRequestNanos = System.nanoTime();
            if (inline && free.isEmpty()) {
                replies.flush(); // deferred replies hold their requests until written
            }
            ServerRequest request = free.take();
            boolean handedOff = false;
            try {
                int error = validate(type, flags, offset, length);
                request.set(type, flags, cookie, offset, (int) length);
                boolean payload = type == NbdProtocol.CMD_READ || type == NbdProtocol.CMD_WRITE;
                if (error == 0 && payload && !acquireBudget(request, length)) {
                    return "server closing";
                }
                if (type == NbdProtocol.CMD_WRITE) {
                    if (error == 0) {
                        try {
                            request.payload = export.buffers.acquire((int) length);
                        } catch (BufferPool.OutOfBuffersException e) {
                            noteOutOfMemory(e);
                            error = NbdProtocol.ENOMEM;
                        }
                    }
                    boolean awaited = length > in.buffered();
                    if (awaited) {
                        payloadStarts(length); // only a payload not yet here is watched: no volatile writes otherwise
                    }
                    if (error != 0) {
                        in.skip(length); // keep the stream in step; nothing is allocated
                    } else {
                        in.readFully(request.payload, 0, (int) length);
                    }
                    if (awaited) {
                        payloadSinceNanos = 0;
                    }
                }
                handedOff = true;
                if (error != 0) {
                    request.error = error;
                    replies.submit(request);
                } else if (export.async != null && !inline && plainReadOrWrite(type, flags)) {
                    request.startAsync();
                } else if (inline || lastOfBurst(in, type, flags)) {
                    request.run();
                } else {
                    export.workers.execute(request);
                }
            } finally {
                if (!handedOff) {
                    release(request); // the client left mid-payload: this write never happened
                }
            }
        }
    }

    /**
     * True for a plain READ or WRITE after which no further request is buffered: the reader would
     * block on the socket next, so it runs this one itself and saves a thread hand-off (at queue
     * depth 1, every request). FLUSH, FUA, TRIM and WRITE_ZEROES, which may take long, always go
     * to the pool so that the reader is soon back reading.
     */
    private static boolean lastOfBurst(ChannelInput in, int type, int flags) {
        return in.buffered() < NbdProtocol.REQUEST_HEADER_BYTES && plainReadOrWrite(type, flags);
    }

    private static boolean plainReadOrWrite(int type, int flags) {
        return (type == NbdProtocol.CMD_READ || type == NbdProtocol.CMD_WRITE)
                && (flags & NbdProtocol.CMD_FLAG_FUA) == 0;
    }

    /** Returns 0 or the NBD error for a request, from its header alone. */
    private int validate(int type, int flags, long offset, long length) {
        NbdServerConfig config = export.config;
        int allowedFlags = NbdProtocol.CMD_FLAG_FUA;
        boolean writes;
        int rangeError;
        switch (type) {
            case NbdProtocol.CMD_READ:
                writes = false;
                rangeError = NbdProtocol.EINVAL;
                break;
            case NbdProtocol.CMD_WRITE:
                writes = true;
                rangeError = NbdProtocol.ENOSPC;
                break;
            case NbdProtocol.CMD_FLUSH:
                return (flags & ~allowedFlags) != 0 ? NbdProtocol.EINVAL : 0;
            case NbdProtocol.CMD_TRIM:
                if (config.trimMode() == TrimMode.UNSUPPORTED && !config.readOnly()) {
                    return NbdProtocol.EINVAL;
                }
                writes = true;
                rangeError = NbdProtocol.EINVAL;
                break;
            case NbdProtocol.CMD_WRITE_ZEROES:
                if (!config.writeZeroes() && !config.readOnly()) {
                    return NbdProtocol.EINVAL;
                }
                allowedFlags |= NbdProtocol.CMD_FLAG_NO_HOLE;
                writes = true;
                rangeError = NbdProtocol.ENOSPC;
                break;
            default:
                return NbdProtocol.EINVAL; // CACHE, BLOCK_STATUS (not negotiable here), unknown
        }
        if ((flags & ~allowedFlags) != 0) {
            return NbdProtocol.EINVAL;
        }
        if (writes && config.readOnly()) {
            return NbdProtocol.EPERM;
        }
        boolean hasPayload = type == NbdProtocol.CMD_READ || type == NbdProtocol.CMD_WRITE;
        if (hasPayload && length > config.maxRequestBytes()) {
            return NbdProtocol.EINVAL;
        }
        // offset is unsigned: a negative long is beyond 2^63 and so beyond any disk.
        if (offset < 0 || offset > size || length > size - offset) {
            return rangeError;
        }
        int block = config.minimumBlockSize();
        if (block > 1 && ((offset | length) & (block - 1)) != 0) {
            return NbdProtocol.EINVAL;
        }
        return 0;
    }

    /**
     * Takes the request's payload bytes from this connection's budget (its reserve, then the
     * server's shared budget), waiting while there is none: the reader then stops reading, which
     * is the back-pressure. False if the connection is closing meanwhile.
     */
    private boolean acquireBudget(ServerRequest request, long length) throws InterruptedException {
        NbdServerConfig config = export.config;
        long reserve = config.connectionReserveBytes();
        long max = config.maxInFlightBytesPerConnection();
        while (true) {
            // Only this reader adds; other threads only subtract, so what is read here can only drop.
            long used = inFlightBytes.get();
            if (used + length <= max) {
                long shared = used + length <= reserve ? 0 : Math.min(length, used + length - reserve);
                if (shared == 0 || server.budget().tryAcquire(shared)) {
                    inFlightBytes.addAndGet(length);
                    request.budgetBytes = length;
                    request.sharedBytes = shared;
                    return true;
                }
            }
            if (replies.broken() || !channel.isOpen() || export.closing()) {
                return false;
            }
            if (inline) {
                replies.flush(); // deferred replies hold budget until they are written
            }
            LockSupport.parkNanos(this, 1_000_000L); // only when over budget
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    /** Returns a finished request (reply sent or dropped) to the free queue, with its budget. */
    void release(ServerRequest request) {
        request.releasePayload();
        if (request.budgetBytes != 0) {
            inFlightBytes.addAndGet(-request.budgetBytes);
            if (request.sharedBytes != 0) {
                server.budget().release(request.sharedBytes);
            }
            request.budgetBytes = 0;
            request.sharedBytes = 0;
        }
        free.offer(request);
    }

    /** Direct memory ran out (ENOMEM sent): said once per connection, without a stack trace. */
    void noteOutOfMemory(IOException e) {
        if (warnedMemory.compareAndSet(false, true)) {
            LOG.warn(
                    "{}: {}; answering ENOMEM (lower --max-request or the in-flight budget, or raise "
                            + "-XX:MaxDirectMemorySize)",
                    peer,
                    e.getMessage());
        }
    }

    /**
     * Called by the handshake once the export is chosen, before the reply that says so; false
     * when the connection was evicted first (the handshake then ends without that reply).
     */
    private boolean exportChosen() {
        lastRequestNanos = System.nanoTime();
        if (!handshakeState.compareAndSet(HANDSHAKE, CHOSEN)) {
            return false;
        }
        transmitting = true;
        return true;
    }

    /**
     * Claims a connection still in the handshake for eviction; false if it has chosen its export
     * meanwhile (it then stays).
     */
    boolean claimHandshakeForEviction() {
        return handshakeState.compareAndSet(HANDSHAKE, EVICTED);
    }

    private void payloadStarts(long length) {
        payloadBytes = length;
        payloadReceivedAtStart = in.received();
        payloadSinceNanos = System.nanoTime();
    }

    boolean transmitting() {
        return transmitting;
    }

    /** In the handshake and not a byte received: what a newcomer may evict. */
    boolean silentHandshake() {
        return !transmitting && in.received() == 0;
    }

    /** When the write payload being read now began, or 0. */
    long payloadSinceNanos() {
        return payloadSinceNanos;
    }

    /** The deadline of the payload being read now (its timeout plus a second per MiB), or 0. */
    long payloadDeadlineNanos(long timeoutNanos) {
        long since = payloadSinceNanos;
        return since == 0 ? 0 : since + timeoutNanos + (payloadBytes >> 20) * 1_000_000_000L;
    }

    long payloadBytes() {
        return payloadBytes;
    }

    /**
     * A write payload arriving slower than {@code minBytesPerSecond} for at least a second: the
     * client holds a slot (and a buffer) without using it, so a newcomer on a full server may
     * take its place.
     */
    boolean tricklingPayload(long now, long minBytesPerSecond) {
        long since = payloadSinceNanos;
        long elapsed = now - since;
        if (since == 0 || elapsed < 1_000_000_000L) {
            return false;
        }
        long arrived = in.received() - payloadReceivedAtStart;
        return arrived * 1_000_000_000.0 / elapsed < minBytesPerSecond;
    }

    long lastRequestNanos() {
        return lastRequestNanos;
    }

    /** Requests read and not yet answered. */
    int inFlight() {
        return maxInFlight - free.size();
    }

    long inFlightBytes() {
        return inFlightBytes.get();
    }

    /** Ends the connection from outside (a timeout, eviction), saying why once. */
    void abort(String reason) {
        abort(reason, true);
    }

    /** Like {@link #abort(String)}; {@code log} false when the caller logs (rate-limited) itself. */
    void abort(String reason, boolean log) {
        if (closeReason == null) {
            closeReason = reason;
            if (log) {
                LOG.info("{}: closing: {}", peer, reason);
            } else {
                LOG.debug("{}: closing: {}", peer, reason);
            }
        }
        closeChannel();
    }

    void replyFailed(IOException e) {
        LOG.debug("{}: writing replies failed, stopping: {}", peer, e.toString());
        shutdownInput();
    }

    void noteUnexpected(RuntimeException e) {
        if (unexpectedErrors.getAndIncrement() == 0) {
            firstUnexpected = e;
        }
    }

    /** Stops the reader (it sees end of stream) so the connection drains and closes. */
    void shutdownInput() {
        try {
            channel.shutdownInput();
        } catch (IOException e) {
            closeChannel();
        }
    }

    /** Waits until every request is back in the free queue, or the drain timeout passes. */
    private void drain() {
        long deadline = System.nanoTime() + export.config.drainTimeout().toNanos();
        ServerRequest[] taken = new ServerRequest[maxInFlight];
        int held = 0;
        boolean interrupted = false;
        try {
            while (held < maxInFlight) {
                long wait = deadline - System.nanoTime();
                ServerRequest request;
                try {
                    request = wait > 0 ? free.poll(wait, TimeUnit.NANOSECONDS) : free.poll();
                } catch (InterruptedException e) {
                    interrupted = true;
                    continue;
                }
                if (request == null) {
                    LOG.warn(
                            "{}: {} requests still in flight after the drain timeout of {}; closing anyway",
                            peer,
                            maxInFlight - held,
                            export.config.drainTimeout());
                    break;
                }
                taken[held++] = request;
            }
        } finally {
            for (int i = 0; i < held; i++) {
                free.offer(taken[i]);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void closeChannel() {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("{}: close failed: {}", peer, e.toString());
        }
    }
}
