package org.raidfive.nbd;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;

/**
 * A test wrapper: counts flushes and concurrent calls, can hold I/O at a gate, and can fail a
 * byte range with an IOException or a RuntimeException.
 */
final class InstrumentedDisk extends ForwardingDisk {
    final AtomicInteger flushes = new AtomicInteger();
    final AtomicInteger active = new AtomicInteger();
    final AtomicInteger maxActive = new AtomicInteger();
    final AtomicInteger waitingAtGate = new AtomicInteger();
    private volatile CountDownLatch gate;
    private volatile long ioErrorFrom = -1;
    private volatile long ioErrorTo = -1;
    private volatile long crashFrom = -1;
    private volatile long crashTo = -1;

    InstrumentedDisk(MemberDisk inner) {
        super(inner);
    }

    /** Holds every read and write until {@link #openGate()}. */
    void closeGate() {
        gate = new CountDownLatch(1);
    }

    void openGate() {
        CountDownLatch g = gate;
        gate = null;
        if (g != null) {
            g.countDown();
        }
    }

    void failWithIoException(long from, long to) {
        ioErrorFrom = from;
        ioErrorTo = to;
    }

    void failWithRuntimeException(long from, long to) {
        crashFrom = from;
        crashTo = to;
    }

    private void enter(long position, int length) throws IOException {
        int now = active.incrementAndGet();
        maxActive.accumulateAndGet(now, Math::max);
        CountDownLatch g = gate;
        if (g != null) {
            waitingAtGate.incrementAndGet();
            try {
                g.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted at the gate");
            } finally {
                waitingAtGate.decrementAndGet();
            }
        }
        if (position < ioErrorTo && position + length > ioErrorFrom) {
            throw new IOException("injected I/O error at " + position);
        }
        if (position < crashTo && position + length > crashFrom) {
            throw new IllegalStateException("injected bug at " + position);
        }
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        try {
            enter(position, length);
            inner.read(position, dst, dstOffset, length);
        } finally {
            active.decrementAndGet();
        }
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        try {
            enter(position, length);
            inner.write(position, src, srcOffset, length);
        } finally {
            active.decrementAndGet();
        }
    }

    @Override
    public void flush() throws IOException {
        flushes.incrementAndGet();
        inner.flush();
    }

    @Override
    public String name() {
        return "instrumented " + inner.name();
    }
}
