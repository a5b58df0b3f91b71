package org.raidfive.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;

/**
 * TLS over a blocking {@link SocketChannel} with the JDK's {@link SSLEngine}, as a plain byte
 * channel, so the NBD code reads and writes through it exactly as through the socket after
 * NBD_OPT_STARTTLS.
 *
 * <p>Concurrency: one thread reads (the connection's reader), others write (the reply writer);
 * {@code SSLEngine} allows one {@code unwrap} and one {@code wrap} to run at once, so reads hold
 * {@code readLock} and writes {@code writeLock}. A read that needs the engine to send something
 * (a TLS 1.3 key update answer) takes {@code writeLock} for that wrap.
 */
final class TlsChannel implements ByteChannel, GatheringByteChannel {
    private final SocketChannel socket;
    private final SSLEngine engine;
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    /** Encrypted bytes read from the socket, not yet unwrapped: [0, position) after compact. */
    private ByteBuffer netIn;
    /** Decrypted bytes not yet handed out: [position, limit). */
    private ByteBuffer appIn;

    private ByteBuffer netOut;
    private boolean inboundClosed;

    private TlsChannel(SocketChannel socket, SSLEngine engine, ByteBuffer alreadyRead) {
        this.socket = socket;
        this.engine = engine;
        SSLSession s = engine.getSession();
        netIn = ByteBuffer.allocate(Math.max(s.getPacketBufferSize(), alreadyRead.remaining()));
        netIn.put(alreadyRead);
        appIn = ByteBuffer.allocate(s.getApplicationBufferSize());
        appIn.flip();
        netOut = ByteBuffer.allocate(s.getPacketBufferSize());
    }

    /**
     * Runs the TLS handshake over {@code socket} ({@code alreadyRead}: bytes of it the caller read
     * ahead) and returns the channel, or throws when it fails (a bad or missing certificate).
     */
    static TlsChannel handshake(SocketChannel socket, SSLEngine engine, ByteBuffer alreadyRead) throws IOException {
        TlsChannel t = new TlsChannel(socket, engine, alreadyRead);
        engine.beginHandshake();
        t.runHandshake();
        return t;
    }

    SSLSession session() {
        return engine.getSession();
    }

    private void runHandshake() throws IOException {
        synchronized (readLock) {
            synchronized (writeLock) {
                while (true) {
                    SSLEngineResult.HandshakeStatus hs = engine.getHandshakeStatus();
                    switch (hs) {
                        case NEED_WRAP:
                            wrapLocked(new ByteBuffer[] {ByteBuffer.allocate(0)}, 0, 1);
                            break;
                        case NEED_UNWRAP:
                        case NEED_UNWRAP_AGAIN:
                            appIn.compact(); // write mode, keeping what the handshake's last record carried
                            int n;
                            try {
                                n = unwrapLocked();
                            } finally {
                                appIn.flip();
                            }
                            if (n < 0) {
                                throw new EOFException("the peer closed the connection during the TLS handshake");
                            }
                            break;
                        case NEED_TASK:
                            Runnable task;
                            while ((task = engine.getDelegatedTask()) != null) {
                                task.run();
                            }
                            break;
                        default:
                            return; // FINISHED or NOT_HANDSHAKING
                    }
                }
            }
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        synchronized (readLock) {
            while (!appIn.hasRemaining()) {
                if (inboundClosed) {
                    return -1;
                }
                appIn.compact();
                int n;
                try {
                    n = unwrapLocked();
                } finally {
                    appIn.flip();
                }
                if (n < 0) {
                    return -1;
                }
            }
            int n = Math.min(dst.remaining(), appIn.remaining());
            ByteBuffer slice = appIn.duplicate();
            slice.limit(slice.position() + n);
            dst.put(slice);
            appIn.position(appIn.position() + n);
            return n;
        }
    }

    /**
     * Unwraps one record into {@code appIn} (write mode), reading from the socket as needed.
     * Returns the bytes produced, or -1 at the end of the stream. Caller holds readLock.
     */
    private int unwrapLocked() throws IOException {
        while (true) {
            netIn.flip();
            SSLEngineResult r;
            try {
                r = engine.unwrap(netIn, appIn);
            } finally {
                netIn.compact();
            }
            switch (r.getStatus()) {
                case OK:
                    if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                        Runnable task;
                        while ((task = engine.getDelegatedTask()) != null) {
                            task.run();
                        }
                    }
                    if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP
                            && !Thread.holdsLock(writeLock)) {
                        synchronized (writeLock) { // e.g. answering a TLS 1.3 key update
                            wrapLocked(new ByteBuffer[] {ByteBuffer.allocate(0)}, 0, 1);
                        }
                    }
                    if (r.bytesProduced() > 0
                            || engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
                                    && engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.FINISHED) {
                        return r.bytesProduced();
                    }
                    if (r.bytesConsumed() > 0) {
                        continue; // a record without application data (a ticket): read on
                    }
                    break;
                case BUFFER_OVERFLOW:
                    ByteBuffer bigger = ByteBuffer.allocate(appIn.capacity() * 2);
                    appIn.flip();
                    bigger.put(appIn);
                    appIn = bigger;
                    continue;
                case BUFFER_UNDERFLOW:
                    if (netIn.position() == netIn.capacity()) {
                        ByteBuffer bigger2 = ByteBuffer.allocate(netIn.capacity() * 2);
                        netIn.flip();
                        bigger2.put(netIn);
                        netIn = bigger2;
                    }
                    break;
                case CLOSED:
                    inboundClosed = true;
                    return -1;
                default:
                    throw new SSLException("unexpected TLS state " + r.getStatus());
            }
            if (socket.read(netIn) < 0) {
                inboundClosed = true;
                try {
                    engine.closeInbound();
                } catch (SSLException truncated) {
                    // the peer closed without close_notify: the stream ends here either way
                }
                return -1;
            }
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return (int) write(new ByteBuffer[] {src}, 0, 1);
    }

    @Override
    public long write(ByteBuffer[] srcs) throws IOException {
        return write(srcs, 0, srcs.length);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        synchronized (writeLock) {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                total += srcs[i].remaining();
            }
            long before = total;
            do {
                wrapLocked(srcs, offset, length);
                total = 0;
                for (int i = offset; i < offset + length; i++) {
                    total += srcs[i].remaining();
                }
            } while (total > 0);
            return before;
        }
    }

    /** Wraps as much of {@code srcs} as one record holds and writes it out. Caller holds writeLock. */
    private void wrapLocked(ByteBuffer[] srcs, int offset, int length) throws IOException {
        while (true) {
            netOut.clear();
            SSLEngineResult r = engine.wrap(srcs, offset, length, netOut);
            if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                netOut = ByteBuffer.allocate(netOut.capacity() * 2);
                continue;
            }
            if (r.getStatus() == SSLEngineResult.Status.CLOSED && r.bytesProduced() == 0) {
                throw new IOException("the TLS session is closed");
            }
            netOut.flip();
            while (netOut.hasRemaining()) {
                socket.write(netOut);
            }
            if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                Runnable task;
                while ((task = engine.getDelegatedTask()) != null) {
                    task.run();
                }
            }
            return;
        }
    }

    @Override
    public boolean isOpen() {
        return socket.isOpen();
    }

    /** Sends close_notify (best effort), then closes the socket. */
    @Override
    public void close() throws IOException {
        try {
            synchronized (writeLock) {
                engine.closeOutbound();
                if (socket.isOpen()) {
                    netOut.clear();
                    engine.wrap(ByteBuffer.allocate(0), netOut);
                    netOut.flip();
                    while (netOut.hasRemaining() && socket.write(netOut) > 0) {
                        // flush the close_notify
                    }
                }
            }
        } catch (IOException e) {
            // the socket is gone: nothing to notify
        } finally {
            socket.close();
        }
    }
}
