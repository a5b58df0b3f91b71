package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Completion-based I/O for a disk that has only blocking calls: they run on {@link IoThreads}. */
final class BlockingAsyncDisk implements AsyncDisk {
    private final MemberDisk disk;

    BlockingAsyncDisk(MemberDisk disk) {
        this.disk = disk;
    }

    @Override
    public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        IoThreads.SHARED.submit(disk, IoThreads.Op.READ, position, dst, dstOffset, length, callback, tag);
    }

    @Override
    public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        IoThreads.SHARED.submit(disk, IoThreads.Op.WRITE, position, src, srcOffset, length, callback, tag);
    }

    @Override
    public boolean runsOnIoThreads() {
        return true;
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        IoThreads.SHARED.submit(disk, IoThreads.Op.FLUSH, 0, null, 0, 0, callback, tag);
    }

    @Override
    public long size() {
        return disk.size();
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        disk.read(position, dst, dstOffset, length);
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        disk.write(position, src, srcOffset, length);
    }

    @Override
    public void flush() throws IOException {
        disk.flush();
    }

    @Override
    public String name() {
        return disk.name();
    }

    @Override
    public DiskClaim claim(ClaimMode mode, String holder) throws IOException {
        return disk.claim(mode, holder);
    }

    @Override
    public void close() throws IOException {
        disk.close();
    }
}
