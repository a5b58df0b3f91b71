package org.raidfive.disk;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault injection around any member: fail every call after N more operations; fail reads or writes
 * in a byte range (optionally only a number of times); return silently corrupted data (one flipped
 * bit per 512-byte sector) from reads in a range; add latency; hang (every call blocks); or
 * disappear (every call fails).
 * Every setting can be changed at run time from any thread and takes effect for calls that start
 * afterwards; {@link #heal()} clears them all.
 *
 * <p>Meant for tests and demonstrations: it counts every call (shared atomics, so it is not a
 * zero-overhead wrapper).
 */
public final class FaultyDisk implements AsyncDisk {
    private final MemberDisk inner;
    private final AtomicLong operations = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong injected = new AtomicLong();
    private final AtomicLong hung = new AtomicLong();

    private volatile long failAfterOperation = Long.MAX_VALUE;
    private volatile Range readFaults;
    private volatile Range writeFaults;
    private volatile Range corruptReads;
    private volatile long latencyNanos;
    private volatile boolean gone;
    private volatile CountDownLatch hangGate;

    /** A byte range [from, to) and how many more times it may fire (Long.MAX_VALUE: always). */
    private static final class Range {
        final long from;
        final long to;
        final AtomicLong remaining;

        Range(long from, long to, long times) {
            if (from < 0 || to < from) {
                throw new IllegalArgumentException("fault range [" + from + ", " + to + ") is empty or negative");
            }
            this.from = from;
            this.to = to;
            this.remaining = new AtomicLong(times);
        }

        boolean fires(long position, int length) {
            if (position >= to || position + length <= from) {
                return false;
            }
            return remaining.getAndUpdate(n -> n == Long.MAX_VALUE || n <= 0 ? n : n - 1) > 0;
        }
    }

    /** Wraps {@code inner} with no fault set. */
    public FaultyDisk(MemberDisk inner) {
        this.inner = inner;
    }

    /** The wrapped disk. */
    public MemberDisk inner() {
        return inner;
    }

    /** Every call from the {@code n+1}-th one after now fails. */
    public FaultyDisk failAfter(long n) {
        failAfterOperation = operations.get() + n;
        return this;
    }

    /** Reads touching [from, to) fail, always. */
    public FaultyDisk failReads(long from, long to) {
        return failReads(from, to, Long.MAX_VALUE);
    }

    /** Reads touching [from, to) fail, the next {@code times} times. */
    public FaultyDisk failReads(long from, long to, long times) {
        readFaults = new Range(from, to, times);
        return this;
    }

    /** Writes touching [from, to) fail, always. */
    public FaultyDisk failWrites(long from, long to) {
        writeFaults = new Range(from, to, Long.MAX_VALUE);
        return this;
    }

    /** Reads touching [from, to) succeed but return one flipped bit in every 512-byte sector of the range. */
    public FaultyDisk corruptReads(long from, long to) {
        corruptReads = new Range(from, to, Long.MAX_VALUE);
        return this;
    }

    /** Adds this much delay to every call (0 for none). */
    public FaultyDisk latency(long amount, TimeUnit unit) {
        latencyNanos = unit.toNanos(amount);
        return this;
    }

    /**
     * The device stops answering: every call that starts from now on blocks (interruptibly) until
     * {@link #heal()}, as a hung remote disk or a dead controller does.
     */
    public FaultyDisk hang() {
        if (hangGate == null) {
            hangGate = new CountDownLatch(1);
        }
        return this;
    }

    /** Calls blocked by {@link #hang()} right now. */
    public long hungCalls() {
        return hung.get();
    }

    /** The device is gone: every call fails from now on (until {@link #heal()}). */
    public FaultyDisk disappear() {
        gone = true;
        return this;
    }

    /** Clears every fault. */
    public FaultyDisk heal() {
        gone = false;
        failAfterOperation = Long.MAX_VALUE;
        readFaults = null;
        writeFaults = null;
        corruptReads = null;
        latencyNanos = 0;
        CountDownLatch gate = hangGate;
        hangGate = null;
        if (gate != null) {
            gate.countDown();
        }
        return this;
    }

    /** Calls made so far (reads, writes and flushes). */
    public long operations() {
        return operations.get();
    }

    /** Reads made so far. */
    public long reads() {
        return reads.get();
    }

    /** Writes made so far. */
    public long writes() {
        return writes.get();
    }

    /** Faults injected so far (failed calls plus corrupted reads). */
    public long injectedFaults() {
        return injected.get();
    }

    private void before(String op, long position, int length) throws IOException {
        long n = operations.incrementAndGet();
        CountDownLatch gate = hangGate;
        if (gate != null) {
            hung.incrementAndGet();
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException(name() + ": interrupted while hung (injected)");
            } finally {
                hung.decrementAndGet();
            }
        }
        long delay = latencyNanos;
        if (delay > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException(name() + ": interrupted during injected latency");
            }
        }
        if (gone) {
            injected.incrementAndGet();
            throw new IOException(name() + ": device has disappeared (injected)");
        }
        if (n > failAfterOperation) {
            injected.incrementAndGet();
            throw new IOException(name() + ": " + op + " failed: device failed after " + failAfterOperation
                    + " operations (injected)");
        }
    }

    @Override
    public long size() {
        return inner.size();
    }

    @Override
    public int logicalBlockSize() {
        return inner.logicalBlockSize();
    }

    @Override
    public long refreshSize() throws IOException {
        return inner.refreshSize();
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        before("read", position, length);
        reads.incrementAndGet();
        Range r = readFaults;
        if (r != null && r.fires(position, length)) {
            injected.incrementAndGet();
            throw new IOException(name() + ": read error at offset " + position + " length " + length + " (injected)");
        }
        inner.read(position, dst, dstOffset, length);
        Range c = corruptReads;
        if (c != null && c.fires(position, length)) {
            injected.incrementAndGet();
            long start = Math.max(position, c.from);
            long end = Math.min(position + length, c.to);
            for (long sector = start - (start - position) % 512; sector < end; sector += 512) {
                int at = dstOffset + (int) (sector - position) + 17;
                if (sector >= position && at < dstOffset + length) {
                    dst.put(at, (byte) (dst.get(at) ^ 0x04));
                }
            }
        }
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        before("write", position, length);
        writes.incrementAndGet();
        Range r = writeFaults;
        if (r != null && r.fires(position, length)) {
            injected.incrementAndGet();
            throw new IOException(name() + ": write error at offset " + position + " length " + length + " (injected)");
        }
        inner.write(position, src, srcOffset, length);
    }

    @Override
    public void flush() throws IOException {
        before("flush", 0, 0);
        inner.flush();
    }

    @Override
    public String name() {
        return inner.name();
    }

    /** The wrapped disk's claim: a fault wrapper does not change who owns the storage. */
    @Override
    public DiskClaim claim(ClaimMode mode, String holder) throws IOException {
        return inner.claim(mode, holder);
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }

    @Override
    public String toString() {
        return "faulty(" + inner + ")";
    }

    // Completion-based I/O runs the blocking calls above (faults, latency) on the shared I/O threads.

    @Override
    public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        IoThreads.SHARED.submit(this, IoThreads.Op.READ, position, dst, dstOffset, length, callback, tag);
    }

    @Override
    public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        IoThreads.SHARED.submit(this, IoThreads.Op.WRITE, position, src, srcOffset, length, callback, tag);
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        IoThreads.SHARED.submit(this, IoThreads.Op.FLUSH, 0, null, 0, 0, callback, tag);
    }

    @Override
    public boolean handsOffLocalIo() {
        return true;
    }
}
