package org.raidfive.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.jctools.queues.MpmcArrayQueue;
import org.raidfive.disk.CompletionThread;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.IoThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An NBD client connection: fixed newstyle handshake (NBD_OPT_GO, falling back to
 * NBD_OPT_EXPORT_NAME), then pipelined requests from any number of threads.
 *
 * <p>Concurrency: a calling thread takes a {@link PendingRequest} slot, sends its request under
 * a send lock (header and payload in one gathering write, so requests never interleave) and
 * parks. One reader thread reads replies, matches them to slots by cookie, reads a READ's payload
 * straight into the caller's buffer and unparks the caller. Replies may arrive in any order.
 *
 * <p>Failure: every request has a deadline ({@link NbdClientConfig#requestTimeout()}). A caller
 * whose deadline passes, a watchdog that finds an overdue request (covering a sender blocked on
 * a full socket), a reader that hits end of stream or a protocol violation, all make the client
 * <em>failed</em>: the socket is closed, every pending call fails with an {@link IOException} and
 * every later call fails at once. Nothing is retried or resent, so a write whose outcome is unknown
 * is reported as failed, never repeated behind the caller's back. An NBD error reply
 * ({@link NbdErrorException}) fails only its own request.
 *
 * <p>Buffers: {@code read}/{@code write} address the buffer absolutely and restore its position
 * and limit; the buffer must not be used by another thread during the call.
 */
public final class NbdClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NbdClient.class);
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private final String where;
    private final SocketChannel channel;
    /** Where requests go: the socket, or the TLS channel over it. */
    private final GatheringByteChannel out;

    private final NbdClientConfig config;
    private final ExportInfo export;
    private final int maxRequestBytes;
    private final ReentrantLock sendLock = new ReentrantLock();
    private final PendingRequest[] slots;
    private final ArrayBlockingQueue<PendingRequest> freeSlots;
    /**
     * Requests started on a reader thread, sent by {@link #sendDeferred} on a continuation thread:
     * a reader must never wait for the socket or for another sender (it alone reads the replies
     * that let the server take more). Never more than the slots, so an offer always fits; two
     * send tasks may drain it at once (one scheduled while the last is still draining).
     */
    private final MpmcArrayQueue<PendingRequest> deferred;

    private final AtomicBoolean sendScheduled = new AtomicBoolean();
    private final Runnable sendDeferred = this::sendDeferred;
    /** The buffers of one gathered write of requests, and their sizes; guarded by the send lock. */
    private final ByteBuffer[] sendGather = new ByteBuffer[16];

    private final int[] sendSizes = new int[16];

    private final ChannelInput in;
    private final Thread reader;
    private final ScheduledFuture<?> watchdogTask;
    private final Object closeLock = new Object();
    private volatile IOException failure;
    private volatile boolean closing;

    private NbdClient(
            String where,
            SocketChannel channel,
            GatheringByteChannel out,
            NbdClientConfig config,
            ChannelInput in,
            ExportInfo export) {
        this.where = where;
        this.channel = channel;
        this.out = out;
        this.config = config;
        this.in = in;
        this.export = export;
        this.maxRequestBytes = (int) Math.min(config.maxRequestBytes(), export.maximumBlockSize());
        this.slots = new PendingRequest[config.maxInFlight()];
        this.freeSlots = new ArrayBlockingQueue<>(slots.length);
        this.deferred = new MpmcArrayQueue<>(Math.max(2, slots.length));
        Consumer<PendingRequest> finisher = this::finishAsync;
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new PendingRequest(i, finisher);
            freeSlots.add(slots[i]);
        }
        this.reader = new CompletionThread(this::readReplies, "nbd-client-reader " + where);
        long period = Math.max(10, Math.min(1000, config.requestTimeout().toMillis() / 4));
        this.watchdogTask = WATCHDOG.scheduleAtFixedRate(this::checkDeadlines, period, period, TimeUnit.MILLISECONDS);
        reader.start();
    }

    /** Connects with default settings. */
    public static NbdClient connect(NbdUri uri) throws IOException {
        return connect(uri, NbdClientConfig.defaults());
    }

    /** Connects to {@code uri} (see {@link NbdUri#parse}) and negotiates its export. */
    public static NbdClient connect(String uri, NbdClientConfig config) throws IOException {
        return connect(NbdUri.parse(uri), config);
    }

    /** Connects to {@code uri} and negotiates its export, within {@link NbdClientConfig#connectTimeout()}. */
    public static NbdClient connect(NbdUri uri, NbdClientConfig config) throws IOException {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(config, "config");
        String where = uri.toString();
        SocketChannel channel = open(uri, config);
        // The handshake reads block; a one-shot timer closes the socket if it overruns. It raises
        // the flag before closing, so whoever sees the closed socket also sees why.
        AtomicBoolean timedOut = new AtomicBoolean();
        ScheduledFuture<?> guard = WATCHDOG.schedule(
                () -> {
                    timedOut.set(true);
                    closeQuietly(channel);
                },
                config.connectTimeout().toMillis(),
                TimeUnit.MILLISECONDS);
        try {
            ChannelInput input = new ChannelInput(channel, 64 * 1024);
            ClientHandshake handshake =
                    new ClientHandshake(input, channel, uri.exportName(), where, uri.tls() ? tlsEngine(uri) : null);
            ExportInfo info = handshake.run();
            guard.cancel(false);
            if (timedOut.get()) {
                throw new NbdTimeoutException(where + ": handshake did not finish within " + config.connectTimeout());
            }
            LOG.debug(
                    "{}: connected, size {} flags 0x{}",
                    where,
                    info.size(),
                    Integer.toHexString(info.transmissionFlags()));
            return new NbdClient(
                    where, channel, handshake.tls() != null ? handshake.tls() : channel, config, input, info);
        } catch (IOException | RuntimeException e) {
            guard.cancel(false);
            closeQuietly(channel);
            if (timedOut.get() && !(e instanceof NbdTimeoutException)) {
                NbdTimeoutException timeout =
                        new NbdTimeoutException(where + ": handshake did not finish within " + config.connectTimeout());
                timeout.initCause(e);
                throw timeout;
            }
            throw e;
        }
    }

    /**
     * A client TLS engine for {@code uri}: trusting its {@code tls-certificates} directory's CA
     * (else the JDK's trust store) and presenting its client certificate if there is one; the
     * server's certificate must name the host (for a Unix socket: localhost).
     */
    private static SSLEngine tlsEngine(NbdUri uri) throws IOException {
        SSLContext context;
        if (uri.tlsCertificates() != null) {
            context = TlsCredentials.client(uri.tlsCertificates());
        } else {
            try {
                context = SSLContext.getDefault();
            } catch (NoSuchAlgorithmException e) {
                throw new IOException("no TLS in this JDK: " + e.getMessage(), e);
            }
        }
        String host = uri.transport() == NbdUri.Transport.UNIX ? "localhost" : uri.host();
        SSLEngine engine = context.createSSLEngine(host, Math.max(0, uri.port()));
        engine.setUseClientMode(true);
        SSLParameters p = engine.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(p);
        return engine;
    }

    private static SocketChannel open(NbdUri uri, NbdClientConfig config) throws IOException {
        if (uri.transport() == NbdUri.Transport.UNIX) {
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(uri.socketAddress());
                return channel;
            } catch (IOException e) {
                closeQuietly(channel);
                throw new IOException("cannot connect to " + uri + ": " + e.getMessage(), e);
            }
        }
        InetSocketAddress address = (InetSocketAddress) uri.socketAddress();
        if (address.isUnresolved()) {
            throw new IOException("cannot resolve host '" + uri.host() + "' of " + uri);
        }
        SocketChannel channel = SocketChannel.open();
        try {
            channel.socket().connect(address, (int) config.connectTimeout().toMillis());
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            return channel;
        } catch (SocketTimeoutException e) {
            closeQuietly(channel);
            throw new NbdTimeoutException("cannot connect to " + uri + " within " + config.connectTimeout());
        } catch (IOException e) {
            closeQuietly(channel);
            throw new IOException("cannot connect to " + uri + ": " + e.getMessage(), e);
        }
    }

    /** What the server said about the export in the handshake. */
    public ExportInfo export() {
        return export;
    }

    /** The export's size in bytes. */
    public long size() {
        return export.size();
    }

    /** Largest length one read or write may carry: the smaller of the config's and the server's limit. */
    public int maxRequestBytes() {
        return maxRequestBytes;
    }

    /** The server's URI, for messages. */
    public String name() {
        return where;
    }

    /** True until the client is closed or has failed. */
    public boolean isOpen() {
        return failure == null && !closing;
    }

    /** Why this client stopped: the fatal error, or "client closed" after {@link #close()}; null while open. */
    public IOException failure() {
        return failure;
    }

    /** Reads {@code length} bytes at {@code offset} into {@code dst[dstOffset..)}, waiting for the reply. */
    public void read(long offset, ByteBuffer dst, int dstOffset, int length) throws IOException {
        checkBuffer(dst, dstOffset, length);
        checkRange("read", offset, length);
        submit(NbdProtocol.CMD_READ, 0, offset, length, dst, dstOffset);
    }

    /** Writes {@code src[srcOffset, srcOffset+length)} at {@code offset}, waiting for the reply. */
    public void write(long offset, ByteBuffer src, int srcOffset, int length) throws IOException {
        write(offset, src, srcOffset, length, false);
    }

    /** Writes; with {@code fua} the reply waits until the data is durable (if the server offers FUA). */
    public void write(long offset, ByteBuffer src, int srcOffset, int length, boolean fua) throws IOException {
        checkBuffer(src, srcOffset, length);
        checkWritable("write");
        checkRange("write", offset, length);
        int flags = fua && export.canFua() ? NbdProtocol.CMD_FLAG_FUA : 0;
        submit(NbdProtocol.CMD_WRITE, flags, offset, length, src, srcOffset);
    }

    /**
     * NBD_CMD_FLUSH: every write acknowledged before this call is durable when it returns.
     *
     * @throws IllegalStateException if the server did not advertise flush (check {@link #export()} first)
     */
    public void flush() throws IOException {
        if (!export.canFlush()) {
            throw new IllegalStateException(where + " does not support flush");
        }
        submit(NbdProtocol.CMD_FLUSH, 0, 0, 0, null, 0);
    }

    /** NBD_CMD_TRIM of up to 4 GiB - 1 bytes (a hint: contents afterwards are unspecified). */
    public void trim(long offset, long length) throws IOException {
        if (!export.canTrim()) {
            throw new IllegalStateException(where + " does not support trim");
        }
        checkWritable("trim");
        checkCommandLength(length);
        checkRange("trim", offset, length);
        submit(NbdProtocol.CMD_TRIM, 0, offset, (int) length, null, 0);
    }

    /** NBD_CMD_WRITE_ZEROES of up to 4 GiB - 1 bytes; {@code noHole} asks the server to allocate. */
    public void writeZeroes(long offset, long length, boolean noHole) throws IOException {
        if (!export.canWriteZeroes()) {
            throw new IllegalStateException(where + " does not support write-zeroes");
        }
        checkWritable("write-zeroes");
        checkCommandLength(length);
        checkRange("write-zeroes", offset, length);
        submit(NbdProtocol.CMD_WRITE_ZEROES, noHole ? NbdProtocol.CMD_FLAG_NO_HOLE : 0, offset, (int) length, null, 0);
    }

    private void checkBuffer(ByteBuffer buffer, int offset, int length) {
        Objects.requireNonNull(buffer, "buffer");
        Objects.checkFromIndexSize(offset, length, buffer.capacity());
        if (length > maxRequestBytes) {
            throw new IllegalArgumentException(where + ": request of " + length + " bytes exceeds the maximum of "
                    + maxRequestBytes + " (split it)");
        }
    }

    private static void checkCommandLength(long length) {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("length must be 0 to 2^32-1, got " + length);
        }
    }

    private void checkRange(String what, long offset, long length) throws EOFException {
        if (offset < 0 || offset > export.size() - length) {
            throw new EOFException(where + ": " + what + " at offset " + offset + " length " + length
                    + " lies outside the export (size " + export.size() + " bytes)");
        }
    }

    private void checkWritable(String what) throws IOException {
        if (export.readOnly()) {
            throw new IOException(where + ": cannot " + what + ", the export is read-only");
        }
    }

    private void checkOpen() throws IOException {
        IOException cause = failure;
        if (cause != null) {
            throw new IOException(where + ": connection is closed: " + cause.getMessage(), cause);
        }
        if (closing) {
            throw new IOException(where + ": client is closed");
        }
    }

    /**
     * Completion-based read: sent now (pipelined with everything else on the connection), the
     * callback runs on the client's reader thread when the reply has arrived, or with the failure.
     * Waits only for a free request slot. Called on a reader thread ({@link CompletionThread}, as
     * from a callback) it waits for nothing and sends nothing there: the request is sent from a
     * continuation thread (once a slot is free, when none is), so that a reader never waits for the
     * socket or for another thread's send while replies it alone can read are due.
     */
    public void readAsync(long offset, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        try {
            checkBuffer(dst, dstOffset, length);
            checkRange("read", offset, length);
        } catch (IOException | RuntimeException e) {
            callback.ioDone(tag, e instanceof IOException io ? io : new IOException(e.getMessage(), e));
            return;
        }
        submitAsync(NbdProtocol.CMD_READ, 0, offset, length, dst, dstOffset, callback, tag);
    }

    /** Completion-based write; see {@link #readAsync}. */
    public void writeAsync(long offset, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        try {
            checkBuffer(src, srcOffset, length);
            checkWritable("write");
            checkRange("write", offset, length);
        } catch (IOException | RuntimeException e) {
            callback.ioDone(tag, e instanceof IOException io ? io : new IOException(e.getMessage(), e));
            return;
        }
        submitAsync(NbdProtocol.CMD_WRITE, 0, offset, length, src, srcOffset, callback, tag);
    }

    private void submitAsync(
            int type,
            int flags,
            long offset,
            int length,
            ByteBuffer buffer,
            int bufferOffset,
            IoCallback callback,
            int tag) {
        long timeout = config.requestTimeout().toNanos();
        long deadline = System.nanoTime() + timeout;
        PendingRequest slot;
        try {
            checkOpen();
            slot = freeSlots.poll();
            if (slot == null && CompletionThread.isCurrent()) {
                // A callback on a reader (this connection's or another's) that found every slot
                // taken must not wait here: the reply that frees one may be its own to read. The
                // submission waits on a continuation thread instead (rare: allocates).
                IoThreads.runContinuation(
                        () -> submitAsync(type, flags, offset, length, buffer, bufferOffset, callback, tag));
                return;
            }
            if (slot == null) {
                slot = freeSlots.poll(timeout, TimeUnit.NANOSECONDS);
            }
            if (slot == null) {
                checkOpen();
                throw new NbdTimeoutException(
                        where + ": all " + slots.length + " request slots stayed busy for " + config.requestTimeout());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            callback.ioDone(tag, new InterruptedIOException(where + ": interrupted while waiting for a request slot"));
            return;
        } catch (IOException e) {
            callback.ioDone(tag, e);
            return;
        }
        slot.prepare(type, flags, offset, length, type == NbdProtocol.CMD_READ ? buffer : null, bufferOffset, deadline);
        slot.callback = callback;
        slot.tag = tag;
        slot.payload = type == NbdProtocol.CMD_WRITE ? buffer : null;
        slot.payloadOffset = bufferOffset;
        slot.publishWaiting();
        // As in submit(): publish WAITING, then read failure; fail() sets failure, then sweeps WAITING.
        if (failure != null || closing) {
            if (slot.claim()) {
                slot.complete(0, failure != null ? failure : new IOException(where + ": client is closed"));
            }
        } else if (CompletionThread.isCurrent()) {
            deferred.offer(slot);
            // One send task per batch: the task clears the flag before it drains, so a request queued
            // after that is either drained by it or finds the flag clear and schedules the next.
            if (!sendScheduled.get() && !sendScheduled.getAndSet(true)) {
                IoThreads.runContinuation(sendDeferred);
            }
        } else {
            send(slot, slot.payload, bufferOffset, length, deadline);
        }
    }

    /**
     * Sends the requests callbacks on a reader started, in the order they were started: under one
     * hold of the send lock, the headers of requests without data (reads) gathered into one write,
     * a write's header and data alone.
     */
    private void sendDeferred() {
        sendScheduled.set(false);
        while (!deferred.isEmpty()) {
            long wait = Math.max(0, config.requestTimeout().toNanos());
            try {
                if (!sendLock.tryLock(wait, TimeUnit.NANOSECONDS)) {
                    fail(new NbdTimeoutException(where + ": could not send a request within " + config.requestTimeout()
                            + " (another sender is blocked)"));
                    return; // fail() sweeps the waiting requests, these among them
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                IoThreads.runContinuation(sendDeferred); // another thread sends them
                return;
            }
            try {
                sendDeferredLocked();
            } catch (IOException e) {
                fail(
                        failure != null
                                ? failure
                                : new IOException(where + ": sending a request failed: " + e.getMessage(), e));
                return;
            } finally {
                sendLock.unlock();
            }
        }
    }

    /** Under the send lock: up to a batch of the deferred requests. */
    private void sendDeferredLocked() throws IOException {
        ByteBuffer[] gather = sendGather;
        int[] sizes = sendSizes;
        int n = 0;
        PendingRequest slot;
        while (n < gather.length && (slot = deferred.relaxedPoll()) != null) {
            if (failure != null || closing) {
                if (slot.claim()) { // else fail()'s sweep of WAITING slots has it
                    slot.complete(0, failure != null ? failure : new IOException(where + ": client is closed"));
                }
                continue;
            }
            if (slot.payload == null || slot.length == 0) {
                gather[n] = slot.header.position(0).limit(NbdProtocol.REQUEST_HEADER_BYTES);
                sizes[n++] = NbdProtocol.REQUEST_HEADER_BYTES;
                continue;
            }
            writeFully(gather, sizes, n); // the reads before it first, in order
            n = 0;
            writeRequestLocked(slot, slot.payload, slot.payloadOffset, slot.length);
        }
        writeFully(gather, sizes, n);
    }

    /** Under the send lock: {@code slot}'s header, and {@code length} bytes of {@code payload} after it for a write. */
    private void writeRequestLocked(PendingRequest slot, ByteBuffer payload, int payloadOffset, int length)
            throws IOException {
        ByteBuffer[] gather = sendGather;
        int[] sizes = sendSizes;
        gather[0] = slot.header.position(0).limit(NbdProtocol.REQUEST_HEADER_BYTES);
        sizes[0] = NbdProtocol.REQUEST_HEADER_BYTES;
        if (payload == null || length == 0) {
            writeFully(gather, sizes, 1);
            return;
        }
        int savedPosition = payload.position();
        int savedLimit = payload.limit();
        try {
            gather[1] = payload.limit(payloadOffset + length).position(payloadOffset);
            sizes[1] = length;
            writeFully(gather, sizes, 2);
        } finally {
            payload.limit(savedLimit).position(savedPosition);
        }
    }

    /**
     * Writes {@code buffers[0..n)}, of {@code sizes} bytes each, and forgets them. Progress is
     * counted, never read back from a buffer that is wholly out: its request may already have
     * been answered and its slot prepared again, header refilled, by another thread.
     */
    private void writeFully(ByteBuffer[] buffers, int[] sizes, int n) throws IOException {
        long total = 0;
        for (int i = 0; i < n; i++) {
            total += sizes[i];
        }
        long written = 0;
        long before = 0; // bytes of the buffers before 'first'
        int first = 0;
        try {
            while (written < total) {
                written += out.write(buffers, first, n - first);
                while (first < n && before + sizes[first] <= written) {
                    before += sizes[first++];
                }
            }
        } finally {
            Arrays.fill(buffers, 0, n, null);
        }
    }

    /** The end of a completion-based request (reader thread, or whoever failed the client): free the slot, then tell. */
    private void finishAsync(PendingRequest slot) {
        IoCallback callback = slot.callback;
        int tag = slot.tag;
        IOException error = null;
        if (slot.failure != null) {
            error = new IOException(
                    where + ": " + commandName(slot.type) + " at offset " + slot.offset + " length " + slot.length
                            + " failed: " + slot.failure.getMessage(),
                    slot.failure);
        } else if (slot.error != 0) {
            error = new NbdErrorException(
                    where + ": " + commandName(slot.type) + " at offset " + slot.offset + " length "
                            + Integer.toUnsignedString(slot.length),
                    slot.error);
        }
        slot.reset();
        freeSlots.offer(slot);
        callback.ioDone(tag, error);
    }

    /** Sends one request and waits for its reply. */
    private void submit(int type, int flags, long offset, int length, ByteBuffer buffer, int bufferOffset)
            throws IOException {
        checkOpen();
        long timeout = config.requestTimeout().toNanos();
        long deadline = System.nanoTime() + timeout;
        PendingRequest slot;
        try {
            slot = freeSlots.poll(timeout, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(where + ": interrupted while waiting for a request slot");
        }
        if (slot == null) {
            checkOpen();
            throw new NbdTimeoutException(
                    where + ": all " + slots.length + " request slots stayed busy for " + config.requestTimeout());
        }
        try {
            slot.prepare(
                    type, flags, offset, length, type == NbdProtocol.CMD_READ ? buffer : null, bufferOffset, deadline);
            slot.publishWaiting();
            // Pairs with fail(): it sets failure then sweeps WAITING slots; we publish WAITING then
            // read failure. One of the two sees the other, so no slot is left waiting forever.
            if (failure != null || closing) {
                if (slot.claim()) {
                    slot.complete(0, failure != null ? failure : new IOException(where + ": client is closed"));
                }
            } else {
                send(slot, type == NbdProtocol.CMD_WRITE ? buffer : null, bufferOffset, length, deadline);
            }
            await(slot);
            if (slot.failure != null) {
                IOException cause = slot.failure;
                if (cause instanceof NbdTimeoutException) {
                    throw new NbdTimeoutException(cause.getMessage());
                }
                if (cause instanceof InterruptedIOException) {
                    throw new InterruptedIOException(cause.getMessage());
                }
                throw new IOException(
                        where + ": " + commandName(type) + " at offset " + offset + " length " + length + " failed: "
                                + cause.getMessage(),
                        cause);
            }
            if (slot.error != 0) {
                throw new NbdErrorException(
                        where + ": " + commandName(type) + " at offset " + offset + " length "
                                + Integer.toUnsignedString(length),
                        slot.error);
            }
        } finally {
            int state = slot.state();
            if (state == PendingRequest.DONE || state == PendingRequest.FREE) {
                slot.reset();
                freeSlots.offer(slot);
            }
        }
    }

    private void send(PendingRequest slot, ByteBuffer payload, int payloadOffset, int length, long deadline) {
        try {
            long wait = deadline - System.nanoTime();
            if (!sendLock.tryLock(Math.max(0, wait), TimeUnit.NANOSECONDS)) {
                fail(new NbdTimeoutException(where + ": could not send a request within " + config.requestTimeout()
                        + " (another sender is blocked)"));
                return;
            }
        } catch (InterruptedException e) {
            // Nothing was sent: only this request fails, the connection stays healthy.
            Thread.currentThread().interrupt();
            if (slot.claim()) {
                slot.complete(0, new InterruptedIOException(where + ": interrupted before the request was sent"));
            }
            return;
        }
        try {
            writeRequestLocked(slot, payload, payloadOffset, length);
        } catch (IOException e) {
            fail(
                    failure != null
                            ? failure
                            : new IOException(where + ": sending a request failed: " + e.getMessage(), e));
        } finally {
            sendLock.unlock();
        }
    }

    /** Parks until the slot is DONE; on deadline, fails the client, then still waits for DONE. */
    private void await(PendingRequest slot) {
        boolean interrupted = false;
        boolean timedOut = false;
        while (slot.state() != PendingRequest.DONE) {
            long remaining = slot.deadlineNanos - System.nanoTime();
            if (remaining <= 0 && !timedOut) {
                timedOut = true;
                fail(new NbdTimeoutException(
                        where + ": " + commandName(slot.type) + " got no reply within " + config.requestTimeout()));
            }
            if (timedOut) {
                // The socket is closed, so the reader stops promptly; if it is gone, claim it ourselves.
                if (!reader.isAlive() && slot.claim()) {
                    slot.complete(0, failure);
                }
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(50));
            } else {
                LockSupport.parkNanos(this, remaining);
            }
            if (Thread.interrupted()) {
                interrupted = true; // the request is on the wire: finish it, then restore the flag
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reader thread: replies until the connection ends. */
    private void readReplies() {
        PendingRequest current = null;
        IOException cause;
        try {
            while (true) {
                if (!in.await(NbdProtocol.SIMPLE_REPLY_BYTES)) {
                    throw new EOFException(where + ": server closed the connection");
                }
                int magic = in.readInt();
                if (magic != NbdProtocol.SIMPLE_REPLY_MAGIC) {
                    throw new IOException(where + ": protocol error, reply magic 0x" + Integer.toHexString(magic));
                }
                int error = in.readInt();
                long cookie = in.readLong();
                int index = (int) (cookie & 0xFFFF);
                PendingRequest slot = index < slots.length ? slots[index] : null;
                if (slot == null || slot.state() != PendingRequest.WAITING || slot.cookie != cookie || !slot.claim()) {
                    throw new IOException(
                            where + ": protocol error, reply for unknown cookie 0x" + Long.toHexString(cookie));
                }
                current = slot;
                if (error == 0 && slot.type == NbdProtocol.CMD_READ && slot.length > 0) {
                    in.readFully(slot.dst, slot.dstOffset, slot.length);
                }
                current = null;
                slot.complete(error, null);
            }
        } catch (AsynchronousCloseException e) {
            cause = new IOException(where + ": connection closed");
        } catch (IOException e) {
            cause = e;
        } catch (RuntimeException e) {
            cause = new IOException(where + ": reader failed: " + e, e);
        }
        fail(cause);
        IOException reason = failure;
        if (current != null) {
            current.complete(0, reason);
        }
        for (PendingRequest slot : slots) {
            if (slot.claim()) {
                slot.complete(0, reason);
            }
        }
    }

    /** Watchdog: a request past its deadline (e.g. a sender stuck on a full socket) fails the client. */
    private void checkDeadlines() {
        if (failure != null) {
            return;
        }
        long now = System.nanoTime();
        for (PendingRequest slot : slots) {
            int state = slot.state();
            if ((state == PendingRequest.WAITING || state == PendingRequest.CLAIMED) && now - slot.deadlineNanos > 0) {
                fail(new NbdTimeoutException(
                        where + ": " + commandName(slot.type) + " got no reply within " + config.requestTimeout()));
                return;
            }
        }
    }

    /** Makes the client failed (first cause wins) and closes the socket; the reader then fails all pending. */
    private void fail(IOException cause) {
        synchronized (closeLock) {
            if (failure == null) {
                failure = cause;
                if (!closing) {
                    LOG.debug("{}: connection failed: {}", where, cause.getMessage());
                }
            }
        }
        closeQuietly(channel);
    }

    /**
     * Waits (up to the request timeout) for in-flight requests, sends NBD_CMD_DISC, closes the
     * socket. Idempotent.
     */
    @Override
    public void close() {
        synchronized (closeLock) {
            if (closing) {
                return;
            }
            closing = true;
        }
        long deadline = System.nanoTime() + config.requestTimeout().toNanos();
        int idle = 0;
        PendingRequest[] held = new PendingRequest[slots.length];
        try {
            while (idle < slots.length && failure == null) {
                PendingRequest slot = freeSlots.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (slot == null) {
                    break;
                }
                held[idle++] = slot;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure == null && idle == slots.length && sendLock.tryLock()) {
            try {
                ByteBuffer disc = ByteBuffer.allocate(NbdProtocol.REQUEST_HEADER_BYTES);
                disc.putInt(NbdProtocol.REQUEST_MAGIC)
                        .putShort((short) 0)
                        .putShort((short) NbdProtocol.CMD_DISC)
                        .putLong(0)
                        .putLong(0)
                        .putInt(0)
                        .flip();
                while (disc.hasRemaining()) {
                    out.write(disc);
                }
            } catch (IOException e) {
                LOG.debug("{}: sending NBD_CMD_DISC failed: {}", where, e.toString());
            } finally {
                sendLock.unlock();
            }
        }
        fail(new IOException("client closed"));
        for (int i = 0; i < idle; i++) {
            freeSlots.offer(held[i]);
        }
        watchdogTask.cancel(false);
        try {
            reader.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.debug("{}: closed", where);
    }

    @Override
    public String toString() {
        return "NbdClient[" + where + ", " + export.size() + " bytes" + (isOpen() ? "" : ", closed") + "]";
    }

    private static String commandName(int type) {
        switch (type) {
            case NbdProtocol.CMD_READ:
                return "NBD_CMD_READ";
            case NbdProtocol.CMD_WRITE:
                return "NBD_CMD_WRITE";
            case NbdProtocol.CMD_FLUSH:
                return "NBD_CMD_FLUSH";
            case NbdProtocol.CMD_TRIM:
                return "NBD_CMD_TRIM";
            case NbdProtocol.CMD_WRITE_ZEROES:
                return "NBD_CMD_WRITE_ZEROES";
            default:
                return "command " + type;
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing is best effort
        }
    }

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "nbd-client-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }
}
