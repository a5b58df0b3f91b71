package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.raidfive.disk.CompletionThread;
import org.raidfive.disk.IoCallback;
import org.raidfive.layout.Raid5Layout;

/**
 * Writes, one stripe at a time under that stripe's lock.
 *
 * <p>Within a stripe the touched chunk-offset columns fall into at most three segments, each
 * written by a fixed run of data indices; each segment is worked in pieces of at most one piece
 * buffer, each piece by the stripe's {@link StripeOp}, which chooses md's cheaper parity update
 * (read-modify-write, reconstruct-write, full stripe, or data alone when parity is out).
 */
final class WritePath {

    private final ArrayCore core;
    /** For mapping only: bounds are the core's (a size change replaces its layout, mapping alike). */
    private final Raid5Layout layout;

    WritePath(ArrayCore core) {
        this.core = core;
        this.layout = core.layout;
    }

    /** Caller holds the configuration read lock, has checked the range and marked the array dirty. */
    void write(long offset, ByteBuffer src, int srcOffset, int length) throws IOException {
        long stripeBytes = layout.stripeDataBytes();
        while (length > 0) {
            long stripe = offset / stripeBytes;
            long inStripe = offset - stripe * stripeBytes;
            int n = (int) Math.min(length, stripeBytes - inStripe);
            try (StripeOp op = core.ops.acquire(stripe)) {
                core.checkUsable();
                writeStripe(op, inStripe, n, src, srcOffset);
            }
            offset += n;
            srcOffset += n;
            length -= n;
        }
    }

    /**
     * Starts a write that runs without a thread ({@link StripeOp#startWriteWithoutThread}) when it
     * can: inside one chunk and one piece (of the partial parity log's size, if any), every member
     * on the io_uring or an NBD connection (not called on a connection's reader then), its stripe's
     * lock free now, the stripe healthy and the bitmap's bits (if any) already on disk. False, having done nothing, otherwise. The caller holds the configuration read side,
     * has checked the range and found the array marked dirty; on true the read side belongs to the
     * write until its callback.
     */
    boolean tryWriteWithoutThread(long offset, ByteBuffer src, int srcOffset, int length, IoCallback cb, int tag) {
        int chunkSize = layout.chunkSize();
        long chunk = offset >>> layout.chunkShift();
        int inChunk = (int) (offset & (chunkSize - 1));
        if (inChunk + length > chunkSize
                || length > core.ops.pieceSize()
                || length > core.consistency.maxPiece()
                || !core.table.writesWithoutThread
                // a connection's reader must not wait for a request slot, as the first reads might
                || (core.table.continuesOffCompletionThread && CompletionThread.isCurrent())) {
            return false;
        }
        long stripe = layout.stripeOfChunk(chunk);
        StripeOp op = core.ops.tryAcquire(stripe);
        if (op == null) {
            return false; // another write holds the stripe: the blocking path waits for it
        }
        boolean started = false;
        try {
            op.pieceToWrite(layout.dataIndexOfChunk(chunk), inChunk, length, src, srcOffset);
            started = op.startWriteWithoutThread(cb, tag);
        } finally {
            if (!started) {
                op.close();
            }
        }
        return started;
    }

    /**
     * Writes {@code n} bytes from {@code src[srcBase..)} at {@code inStripe} bytes into the stripe's
     * data: data indices {@code first..last}, {@code first} from column {@code firstStart},
     * {@code last} up to column {@code lastEnd}, those between whole. The columns fall in up to three
     * segments, split at {@code firstStart} and {@code lastEnd}, each written to one run of data indices.
     */
    private void writeStripe(StripeOp op, long inStripe, int n, ByteBuffer src, int srcBase) throws IOException {
        int chunkSize = layout.chunkSize();
        int shift = layout.chunkShift();
        int first = (int) (inStripe >>> shift);
        int firstStart = (int) (inStripe & (chunkSize - 1));
        long endInStripe = inStripe + n;
        int last = (int) ((endInStripe - 1) >>> shift);
        int lastEnd = (int) (endInStripe - ((long) last << shift));
        int lo = Math.min(firstStart, lastEnd);
        int hi = Math.max(firstStart, lastEnd);
        for (int segment = 0; segment < 3; segment++) {
            int from = segment == 0 ? 0 : segment == 1 ? lo : hi;
            int to = segment == 0 ? lo : segment == 1 ? hi : chunkSize;
            if (from >= to) {
                continue;
            }
            // Chunk 'first' covers [firstStart, C), chunk 'last' covers [0, lastEnd) (both when first == last).
            int lowIndex = from >= firstStart ? first : first + 1;
            int highIndex = to <= lastEnd ? last : last - 1;
            if (lowIndex <= highIndex) {
                // src offset of column 'from' of data index lowIndex
                op.writeColumns(
                        lowIndex,
                        highIndex,
                        from,
                        to,
                        src,
                        srcBase + (lowIndex - first) * chunkSize + from - firstStart);
            }
        }
    }
}
