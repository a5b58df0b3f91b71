package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
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
    private final Raid5Layout layout;

    WritePath(ArrayCore core) {
        this.core = core;
        this.layout = core.layout;
    }

    /** Caller holds the configuration read lock, has checked the range and marked the array dirty. */
    void write(long offset, ByteBuffer src, int srcOffset, int length) throws IOException {
        int chunkSize = layout.chunkSize();
        int shift = layout.chunkShift();
        long stripeBytes = layout.stripeDataBytes();
        while (length > 0) {
            long stripe = offset / stripeBytes;
            long inStripe = offset - stripe * stripeBytes;
            int n = (int) Math.min(length, stripeBytes - inStripe);
            int firstIndex = (int) (inStripe >>> shift);
            int firstStart = (int) (inStripe & (chunkSize - 1));
            long endInStripe = inStripe + n;
            int lastIndex = (int) ((endInStripe - 1) >>> shift);
            int lastEnd = (int) (endInStripe - ((long) lastIndex << shift));
            try (StripeOp op = core.ops.acquire(stripe)) {
                core.checkUsable();
                writeStripe(op, firstIndex, firstStart, lastIndex, lastEnd, src, srcOffset);
            }
            offset += n;
            srcOffset += n;
            length -= n;
        }
    }

    /**
     * Data indices {@code first..last} are written: {@code first} from column {@code firstStart},
     * {@code last} up to column {@code lastEnd}, those between whole. {@code srcBase} is where the
     * byte for (first, firstStart) sits in {@code src}.
     */
    private void writeStripe(StripeOp op, int first, int firstStart, int last, int lastEnd, ByteBuffer src, int srcBase)
            throws IOException {
        int chunkSize = layout.chunkSize();
        int a = firstStart;
        int b = lastEnd;
        int lo = Math.min(a, b);
        int hi = Math.max(a, b);
        writeSegment(op, first, firstStart, last, lastEnd, 0, lo, src, srcBase);
        writeSegment(op, first, firstStart, last, lastEnd, lo, hi, src, srcBase);
        writeSegment(op, first, firstStart, last, lastEnd, hi, chunkSize, src, srcBase);
    }

    private void writeSegment(
            StripeOp op,
            int first,
            int firstStart,
            int last,
            int lastEnd,
            int from,
            int to,
            ByteBuffer src,
            int srcBase)
            throws IOException {
        if (from >= to) {
            return;
        }
        // Chunk 'first' covers [firstStart, C), chunk 'last' covers [0, lastEnd) (both when first == last).
        int lowIndex = from >= firstStart ? first : first + 1;
        int highIndex = to <= lastEnd ? last : last - 1;
        if (lowIndex > highIndex) {
            return;
        }
        int piece = Math.min(core.ops.pieceSize(), core.consistency.maxPiece());
        for (int x = from; x < to; x += piece) {
            int len = Math.min(piece, to - x);
            // Offset in src of column x of data index lowIndex.
            int srcAt = srcBase + (lowIndex - first) * layout.chunkSize() + x - firstStart;
            op.writePiece(lowIndex, highIndex, x, len, src, srcAt);
        }
    }
}
