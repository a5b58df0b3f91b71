package org.raidfive.disk;

import java.io.EOFException;

/** Range checks shared by the disk implementations, with messages that name the numbers. */
final class DiskRanges {
    private DiskRanges() {
    }

    static void check(String name, long size, long position, int length) throws EOFException {
        if (position < 0 || length < 0 || position > size - length) {
            throw new EOFException(name + ": I/O at offset " + position + " length " + length
                    + " lies outside the disk (size " + size + " bytes)");
        }
    }
}
