package org.raidfive.disk;

import java.nio.ByteBuffer;

/**
 * A {@link ForwardingDisk} that forwards completion-based I/O too: to the disk beneath's own
 * ({@link AsyncDisk#of}: memory completes inline, files run on the I/O threads), so a wrapper keeps
 * the way the disk beneath it completes.
 */
public abstract class ForwardingAsyncDisk extends ForwardingDisk implements AsyncDisk {
    private final AsyncDisk async;

    /** A disk that hands every call, blocking or completion-based, to {@code inner}. */
    protected ForwardingAsyncDisk(MemberDisk inner) {
        super(inner);
        this.async = AsyncDisk.of(inner);
    }

    @Override
    public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        async.readAsync(position, dst, dstOffset, length, callback, tag);
    }

    @Override
    public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        async.writeAsync(position, src, srcOffset, length, callback, tag);
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        async.flushAsync(callback, tag);
    }

    @Override
    public boolean completesInline() {
        return async.completesInline();
    }

    @Override
    public boolean handsOffLocalIo() {
        return async.handsOffLocalIo();
    }

    @Override
    public boolean batchesOnRing() {
        return async.batchesOnRing();
    }

    @Override
    public boolean pipelinesOnConnection() {
        return async.pipelinesOnConnection();
    }

    @Override
    public boolean bufferedByPageCache() {
        return async.bufferedByPageCache();
    }
}
