package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A member whose bytes live in memory the engine can address in place, so parity can be computed
 * straight from the members and into the parity member without copying through scratch buffers
 * (md works on its stripe pages in place in the same spirit).
 *
 * <p>The buffer returned is the disk's own storage: use absolute indexing only, never change its
 * position or limit, and do not keep it beyond the operation. Concurrent access follows the same
 * rules as {@link #read}/{@link #write}. Wrappers such as {@link FaultyDisk} do not offer this, and
 * the engine then copies as it does for any disk.
 */
public interface DirectAccessDisk extends MemberDisk {

    /**
     * The buffer holding bytes {@code [position, position + length)} contiguously, or null when they
     * are not contiguous in one buffer (the caller falls back to read and write). The byte at
     * {@code position} is at {@link #directIndex(long)} in it.
     *
     * @throws java.io.EOFException if the range ends beyond {@link #size()}
     * @throws IOException if the disk is closed
     */
    ByteBuffer directBuffer(long position, int length) throws IOException;

    /** Index, in the buffer {@link #directBuffer} returns, of the byte at {@code position}. */
    int directIndex(long position);
}
