package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Completion-based I/O for a disk that has only blocking calls: they run on {@link IoThreads}. Every
 * other call, claims included, goes to the disk itself.
 */
final class BlockingAsyncDisk extends ForwardingDisk implements AsyncDisk {

    BlockingAsyncDisk(MemberDisk disk) {
        super(disk);
    }

    @Override
    public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        IoThreads.SHARED.submit(inner, IoThreads.Op.READ, position, dst, dstOffset, length, callback, tag);
    }

    @Override
    public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        IoThreads.SHARED.submit(inner, IoThreads.Op.WRITE, position, src, srcOffset, length, callback, tag);
    }

    @Override
    public boolean handsOffLocalIo() {
        return true;
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        IoThreads.SHARED.submit(inner, IoThreads.Op.FLUSH, 0, null, 0, 0, callback, tag);
    }

    @Override
    public DiskClaim claim(ClaimMode mode, String holder) throws IOException {
        return inner.claim(mode, holder);
    }
}
