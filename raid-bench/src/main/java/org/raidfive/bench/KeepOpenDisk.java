package org.raidfive.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.raidfive.disk.DirectAccessDisk;
import org.raidfive.disk.ForwardingAsyncDisk;
import org.raidfive.disk.MemberDisk;

/**
 * A view of a disk whose {@link #close()} does nothing, so that the members outlive the array made
 * on them: each benchmark run makes a fresh array (with its own counter mode) on the same disks. It
 * keeps the disk's completion-based I/O (memory completes inline, files on the I/O threads), so the
 * array drives it as it would the disk itself.
 */
class KeepOpenDisk extends ForwardingAsyncDisk {

    private KeepOpenDisk(MemberDisk disk) {
        super(disk);
    }

    /**
     * The view; it keeps the disk's direct access (memory members), so the array works in place as
     * it would on the disk itself.
     */
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
    public void close() {}
}
