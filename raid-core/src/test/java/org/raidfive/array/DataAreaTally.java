package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;

/**
 * A member wrapper that counts, as an oracle independent of the engine, the reads and writes that
 * reach the data area (at or beyond {@code dataOffset}; superblock, bitmap and logs lie before it).
 */
public final class DataAreaTally extends ForwardingDisk {
    private volatile long dataOffset;
    public final AtomicLong reads = new AtomicLong();
    public final AtomicLong writes = new AtomicLong();
    public final AtomicLong readBytes = new AtomicLong();
    public final AtomicLong writeBytes = new AtomicLong();

    /** Counts from {@code dataOffset}; {@link Long#MAX_VALUE} counts nothing until {@link #dataOffset(long)}. */
    public DataAreaTally(MemberDisk inner, long dataOffset) {
        super(inner);
        this.dataOffset = dataOffset;
    }

    /** Where the data area starts (known once the array has made its superblocks). */
    public void dataOffset(long bytes) {
        dataOffset = bytes;
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        inner.read(position, dst, dstOffset, length);
        if (position >= dataOffset) {
            reads.incrementAndGet();
            readBytes.addAndGet(length);
        }
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        inner.write(position, src, srcOffset, length);
        if (position >= dataOffset) {
            writes.incrementAndGet();
            writeBytes.addAndGet(length);
        }
    }
}
