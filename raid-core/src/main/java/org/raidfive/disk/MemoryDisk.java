package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A member held in off-heap memory, any size (segments of up to 1 GiB each, so sizes beyond
 * 2 GiB work). Memory starts zeroed. Thread-safe: every access is an absolute bulk copy, which
 * never touches a segment's position or limit.
 *
 * <p>Closing drops the segments rather than freeing them explicitly: a thread still copying
 * holds its own reference, so the memory cannot be released under it; the collector frees it.
 */
public final class MemoryDisk implements DirectAccessDisk, AsyncDisk {
    private static final int SEGMENT_SHIFT = 30;
    private static final long SEGMENT_SIZE = 1L << SEGMENT_SHIFT;
    private static final long SEGMENT_MASK = SEGMENT_SIZE - 1;
    private static final AtomicInteger NEXT_ID = new AtomicInteger();

    private final long size;
    private final String name;
    private volatile ByteBuffer[] segments;

    /** A zero-filled disk of {@code size} bytes off the heap, named {@code memory#N}. */
    public MemoryDisk(long size) {
        this(size, "memory#" + NEXT_ID.incrementAndGet());
    }

    /** A zero-filled disk of {@code size} bytes off the heap, named {@code name}. */
    public MemoryDisk(long size, String name) {
        if (size < 0) {
            throw new IllegalArgumentException("memory disk size must not be negative: " + size);
        }
        this.size = size;
        this.name = name;
        int count = (int) ((size + SEGMENT_MASK) >>> SEGMENT_SHIFT);
        ByteBuffer[] allocated = new ByteBuffer[count];
        for (int i = 0; i < count; i++) {
            long segmentSize = Math.min(SEGMENT_SIZE, size - ((long) i << SEGMENT_SHIFT));
            allocated[i] = ByteBuffer.allocateDirect((int) segmentSize).order(ByteOrder.LITTLE_ENDIAN);
        }
        segments = allocated;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        ByteBuffer[] segs = openSegments();
        DiskRanges.check(name, size, position, length);
        while (length > 0) {
            ByteBuffer segment = segs[(int) (position >>> SEGMENT_SHIFT)];
            int inSegment = (int) (position & SEGMENT_MASK);
            int n = Math.min(length, segment.capacity() - inSegment);
            dst.put(dstOffset, segment, inSegment, n);
            position += n;
            dstOffset += n;
            length -= n;
        }
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        ByteBuffer[] segs = openSegments();
        DiskRanges.check(name, size, position, length);
        while (length > 0) {
            ByteBuffer segment = segs[(int) (position >>> SEGMENT_SHIFT)];
            int inSegment = (int) (position & SEGMENT_MASK);
            int n = Math.min(length, segment.capacity() - inSegment);
            segment.put(inSegment, src, srcOffset, n);
            position += n;
            srcOffset += n;
            length -= n;
        }
    }

    @Override
    public ByteBuffer directBuffer(long position, int length) throws IOException {
        ByteBuffer[] segs = openSegments();
        DiskRanges.check(name, size, position, length);
        ByteBuffer segment = segs[(int) (position >>> SEGMENT_SHIFT)];
        return (position & SEGMENT_MASK) + length <= segment.capacity() ? segment : null;
    }

    @Override
    public int directIndex(long position) {
        return (int) (position & SEGMENT_MASK);
    }

    @Override
    public void flush() throws IOException {
        openSegments();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void close() {
        segments = null;
    }

    private ByteBuffer[] openSegments() throws IOException {
        ByteBuffer[] segs = segments;
        if (segs == null) {
            throw new IOException(name + ": disk is closed");
        }
        return segs;
    }

    @Override
    public String toString() {
        return name + " (" + size + " bytes)";
    }

    // Completion-based I/O on memory is a copy: done inline, the callback runs before the call returns.

    @Override
    public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        IOException error = null;
        try {
            read(position, dst, dstOffset, length);
        } catch (IOException e) {
            error = e;
        }
        callback.ioDone(tag, error);
    }

    @Override
    public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        IOException error = null;
        try {
            write(position, src, srcOffset, length);
        } catch (IOException e) {
            error = e;
        }
        callback.ioDone(tag, error);
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        IOException error = null;
        try {
            flush();
        } catch (IOException e) {
            error = e;
        }
        callback.ioDone(tag, error);
    }

    @Override
    public boolean completesInline() {
        return true;
    }
}
