package org.raidfive.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.DirectAccessDisk;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;

/**
 * A view of a disk whose {@link #close()} does nothing, so that the members outlive the array made
 * on them: each benchmark run makes a fresh array (with its own counter mode) on the same disks. It
 * keeps the disk's completion-based I/O (memory completes inline, files on the I/O threads), so the
 * array drives it as it would the disk itself.
 */
class KeepOpenDisk implements AsyncDisk {
    private final MemberDisk disk;
    private final AsyncDisk async;

    private KeepOpenDisk(MemberDisk disk) {
        this.disk = disk;
        this.async = AsyncDisk.of(disk);
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
    public boolean runsOnIoThreads() {
        return async.runsOnIoThreads();
    }

    /** The view; it keeps the disk's direct access (memory members), so the array works in place as it would on the disk itself. */
    static MemberDisk of(MemberDisk disk) {
        return disk instanceof DirectAccessDisk ? new Direct((DirectAccessDisk) disk) : new KeepOpenDisk(disk);
    }

    /** The view of a disk that offers direct access. */
    private static final class Direct extends KeepOpenDisk implements DirectAccessDisk {
        private final DirectAccessDisk direct;

        Direct(DirectAccessDisk disk) {
            super(disk);
            this.direct = disk;
        }

        @Override
        public ByteBuffer directBuffer(long position, int length) throws IOException {
            return direct.directBuffer(position, length);
        }

        @Override
        public int directIndex(long position) {
            return direct.directIndex(position);
        }
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
    public void close() {}
}
