package org.raidfive.array;

import java.nio.ByteBuffer;

/**
 * md's partial parity log entry for one stripe write piece, as the stripe engine hands it to
 * {@link ConsistencyPort#log}: the modified data ({@link #dataSector}, {@link #dataSize} bytes, as
 * md's entry gives them) and its partial parity, {@link #size} bytes at the start of
 * {@link #partialParity} (none for a full stripe). Owned and reused by one stripe operation; the
 * log copies what it keeps.
 */
final class PartialParityEntry {
    /** Allocated once per operation object of an array with a log. */
    ByteBuffer partialParity;

    int size;
    long dataSector;
    int dataSize;
}
