package org.raidfive.disk;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Direct buffers at a 4 KiB address: what O_DIRECT needs of member I/O and the unit md lays out
 * its on-disk structures in. Little-endian, as md's structures are.
 */
public final class AlignedBuffers {
    /** The alignment of every buffer made here, and O_DIRECT's on the machines we run on. */
    public static final int ALIGNMENT = 4096;

    private AlignedBuffers() {}

    /** A new direct buffer of exactly {@code bytes} (capacity and limit), starting at a 4 KiB address. */
    public static ByteBuffer allocate(int bytes) {
        int rounded = (bytes + ALIGNMENT - 1) & -ALIGNMENT;
        return ByteBuffer.allocateDirect(rounded + ALIGNMENT)
                .alignedSlice(ALIGNMENT)
                .slice(0, bytes)
                .order(ByteOrder.LITTLE_ENDIAN);
    }
}
