package org.raidfive.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.raidfive.disk.MemberDisk;

/**
 * A view of a disk whose {@link #close()} does nothing, so that the members outlive the array made
 * on them: each benchmark run makes a fresh array (with its own counter mode) on the same disks.
 */
final class KeepOpenDisk implements MemberDisk {
    private final MemberDisk disk;

    KeepOpenDisk(MemberDisk disk) {
        this.disk = disk;
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
    public void close() {
    }
}
