package org.raidfive.disk;

import java.io.EOFException;

/** Range checks shared by the disk implementations, with messages that name the numbers. */
final class DiskRanges {
    private DiskRanges() {}

    static void check(String name, long size, long position, int length) throws EOFException {
        if (position < 0 || length < 0 || position > size - length) {
            throw outside(name, size, position, length);
        }
    }

    /** Names the disk only when the range is bad: a path's name is built anew on every call. */
    static void check(MemberDisk disk, long size, long position, int length) throws EOFException {
        if (position < 0 || length < 0 || position > size - length) {
            throw outside(disk.name(), size, position, length);
        }
    }

    static EOFException outside(String name, long size, long position, int length) {
        return new EOFException(name + ": I/O at offset " + position + " length " + length
                + " lies outside the disk (size " + size + " bytes)");
    }
}
