package org.raidfive.array;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * md's partial parity log entry for one stripe write piece, as the stripe engine hands it to
 * {@link ConsistencyPort#log}: the modified data ({@link #dataSector}, {@link #dataSize} bytes, as
 * md's entry gives them) and its partial parity, {@link #size} bytes (none for a full stripe), which
 * the log has computed where it keeps it: {@link #fill} into its io_unit, or into
 * {@link #partialParity} to be copied. Owned and reused by one stripe operation.
 */
final class PartialParityEntry {
    /** Computes the partial parity, {@code size} bytes, into a buffer at an index; once per write. */
    interface Filler {
        void fill(ByteBuffer dst, int at);
    }

    /** Allocated once per operation object of an array with a log. */
    ByteBuffer partialParity;

    int size;
    long dataSector;
    int dataSize;
    /** The operation's own, for the partial parity's checksum outside the log's lock. */
    final CRC32C crc = new CRC32C();

    private final Filler filler;

    PartialParityEntry(Filler filler) {
        this.filler = filler;
    }

    /** Computes the partial parity into {@code dst} at {@code at}: once per write, when {@code size > 0}. */
    void fill(ByteBuffer dst, int at) {
        filler.fill(dst, at);
    }
}
