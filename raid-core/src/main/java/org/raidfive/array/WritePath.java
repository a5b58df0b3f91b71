package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.parity.Xor;

/**
 * Writes, one stripe at a time under that stripe's lock.
 *
 * <p>Within a stripe the touched chunk-offset columns fall into at most three segments, each
 * written by a fixed run of data indices; each segment is worked in pieces of at most one scratch
 * buffer. For each piece the cheaper of md's two parity updates is chosen by the number of member
 * reads it needs, as md's {@code handle_stripe_dirtying} does:
 * <ul>
 *   <li>read-modify-write: read the old data being replaced and the old parity
 *       ({@code written + 1} reads); new parity = old parity ^ old data ^ new data;</li>
 *   <li>reconstruct-write: read the data not being written ({@code dataDisks - written} reads);
 *       new parity = XOR of all data. A full-stripe write is the case with no reads.</li>
 * </ul>
 * Ties go to reconstruct-write, as in md. A method that would need to read an unreadable member
 * is not eligible, which is how degraded writes fall out: a failed data member that is written is
 * folded into parity by reconstruct-write; a failed one that is not written forces
 * read-modify-write; a failed parity member means the data is written alone.
 */
final class WritePath {
    private enum Plan { READ_MODIFY_WRITE, RECONSTRUCT_WRITE, DATA_ONLY }

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
            core.locks.lock(stripe);
            try {
                core.checkUsable();
                writeStripe(stripe, firstIndex, firstStart, lastIndex, lastEnd, src, srcOffset);
            } finally {
                core.locks.unlock(stripe);
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
    private void writeStripe(long stripe, int first, int firstStart, int last, int lastEnd, ByteBuffer src,
                             int srcBase) throws IOException {
        int chunkSize = layout.chunkSize();
        int a = firstStart;
        int b = lastEnd;
        int lo = Math.min(a, b);
        int hi = Math.max(a, b);
        writeSegment(stripe, first, firstStart, last, lastEnd, 0, lo, src, srcBase);
        writeSegment(stripe, first, firstStart, last, lastEnd, lo, hi, src, srcBase);
        writeSegment(stripe, first, firstStart, last, lastEnd, hi, chunkSize, src, srcBase);
    }

    private void writeSegment(long stripe, int first, int firstStart, int last, int lastEnd, int from, int to,
                              ByteBuffer src, int srcBase) throws IOException {
        if (from >= to) {
            return;
        }
        // Chunk 'first' covers [firstStart, C), chunk 'last' covers [0, lastEnd) (both when first == last).
        int lowIndex = from >= firstStart ? first : first + 1;
        int highIndex = to <= lastEnd ? last : last - 1;
        if (lowIndex > highIndex) {
            return;
        }
        int piece = core.scratch.pieceSize();
        for (int x = from; x < to; x += piece) {
            int len = Math.min(piece, to - x);
            // Offset in src of column x of data index lowIndex.
            int srcAt = srcBase + (lowIndex - first) * layout.chunkSize() + x - firstStart;
            writePiece(stripe, lowIndex, highIndex, x, len, src, srcAt);
        }
    }

    /**
     * Writes columns {@code [x, x+len)} of data indices {@code lo..hi}; the new bytes of index
     * {@code i} are at {@code src[srcAt + (i-lo)*chunk ..)}.
     */
    private void writePiece(long stripe, int lo, int hi, int x, int len, ByteBuffer src, int srcAt)
            throws IOException {
        int chunkSize = layout.chunkSize();
        int paritySlot = layout.paritySlot(stripe);
        long stripeOffset = layout.memberOffset(stripe);
        long memberOffset = stripeOffset + x;
        StripeScratch scratch = core.scratch.borrow();
        try {
            Plan plan;
            Member[] s;
            while (true) {
                core.checkUsable();
                s = core.slots;
                if (core.unreadableSlots(s, stripeOffset, memberOffset, len) > 1) {
                    throw core.stripeLost(stripe);
                }
                plan = choosePlan(s, stripe, stripeOffset, memberOffset, len, lo, hi, paritySlot);
                if (plan == Plan.DATA_ONLY || readForParity(plan, s, stripe, lo, hi, x, len, paritySlot,
                        memberOffset, src, srcAt, scratch)) {
                    break;
                }
            }
            // Data, parity and replacements: one phase, all at once.
            MemberPhase phase = scratch.phase;
            phase.begin();
            Member[] r = core.replacements;
            for (int i = lo; i <= hi; i++) {
                int slot = layout.dataSlot(stripe, i);
                int at = srcAt + (i - lo) * chunkSize;
                writeTo(phase, s[slot], stripeOffset, memberOffset, src, at, len);
                writeTo(phase, r[slot], stripeOffset, memberOffset, src, at, len);
            }
            if (plan != Plan.DATA_ONLY) {
                if (!scratch.parityInPlace) {
                    writeTo(phase, s[paritySlot], stripeOffset, memberOffset, scratch.parityBuffer,
                            scratch.parityOffset, len);
                }
                writeTo(phase, r[paritySlot], stripeOffset, memberOffset, scratch.parityBuffer, scratch.parityOffset,
                        len);
            }
            if (!phase.await()) {
                phase.failMembers(core);
            }
        } finally {
            core.scratch.giveBack(scratch);
        }
    }

    private Plan choosePlan(Member[] s, long stripe, long stripeOffset, long memberOffset, int len, int lo, int hi,
                            int paritySlot) {
        Member parity = s[paritySlot];
        if (parity == null || !parity.writable(stripeOffset)) {
            return Plan.DATA_ONLY;
        }
        int dataDisks = layout.dataDisks();
        // Old parity that cannot be read (listed as bad blocks, or on a member being rebuilt whose
        // rebuild has started this stripe but not yet passed it) rules out read-modify-write;
        // reconstruct-write recomputes parity and writes it, which keeps a stripe the parallel
        // rebuild already did current (and makes bad sectors good).
        boolean rmwPossible = parity.readable(stripeOffset) && !parity.hasBadBlocks(memberOffset, len);
        boolean rcwPossible = true;
        for (int i = 0; i < dataDisks; i++) {
            Member m = s[layout.dataSlot(stripe, i)];
            boolean ok = m != null && m.readable(stripeOffset, memberOffset, len);
            if (i >= lo && i <= hi) {
                rmwPossible &= ok;
            } else {
                rcwPossible &= ok;
            }
        }
        int written = hi - lo + 1;
        int rmwReads = written + 1;
        int rcwReads = dataDisks - written;
        if (rcwPossible && stripeOffset >= core.resyncOffset) {
            // Parity here may not match yet: recompute it from all data rather than update it.
            return Plan.RECONSTRUCT_WRITE;
        }
        if (rmwPossible && (!rcwPossible || rmwReads < rcwReads)) {
            return Plan.READ_MODIFY_WRITE;
        }
        // unreadableSlots <= 1 and parity is readable, so at most one data member is out: if it is
        // written, reconstruct-write works; if not, read-modify-write was possible above (or the one
        // unreadable piece is old parity listed as bad, and no data member is out).
        return Plan.RECONSTRUCT_WRITE;
    }

    /**
     * Performs the reads of {@code plan} and computes the new parity, into the parity member in place
     * when its disk offers direct access ({@link StripeScratch#parityInPlace}) or else into
     * {@code scratch.parity}. Members with direct access are XORed in place rather than copied.
     * Returns false if a member read failed: that member is now faulty and the caller re-plans.
     */
    private boolean readForParity(Plan plan, Member[] s, long stripe, int lo, int hi, int x, int len,
                                  int paritySlot, long memberOffset, ByteBuffer src, int srcAt,
                                  StripeScratch scratch) throws IOException {
        int chunkSize = layout.chunkSize();
        try {
            int count = 0;
            boolean ok = true;
            scratch.beginReads(); // every read the plan needs goes out at once
            if (plan == Plan.READ_MODIFY_WRITE) {
                // new parity = old parity ^ old data ^ new data, in one fused pass over all of them;
                // old parity comes first so that the result may overwrite it in place.
                ok = scratch.addSource(count++, s[paritySlot], paritySlot, memberOffset, len, core);
                for (int i = lo; i <= hi && ok; i++) {
                    int slot = layout.dataSlot(stripe, i);
                    ok = scratch.addSource(count++, s[slot], slot, memberOffset, len, core);
                    scratch.addCallerSource(count++, src, srcAt + (i - lo) * chunkSize);
                }
            } else {
                for (int i = 0; i < layout.dataDisks() && ok; i++) {
                    if (i >= lo && i <= hi) {
                        scratch.addCallerSource(count++, src, srcAt + (i - lo) * chunkSize);
                    } else {
                        int slot = layout.dataSlot(stripe, i);
                        ok = scratch.addSource(count++, s[slot], slot, memberOffset, len, core);
                    }
                }
            }
            ok = scratch.awaitReads(core) && ok; // waits for every read issued, also after a failure
            if (!ok) {
                return false;
            }
            Member parityMember = s[paritySlot];
            boolean inPlace = plan == Plan.READ_MODIFY_WRITE
                    ? scratch.sourceIsDirect(0)
                    : scratch.pinDestination(parityMember, memberOffset, len);
            ByteBuffer dst = inPlace ? scratch.sources[0] : scratch.parity;
            int dOff = inPlace ? scratch.offsets[0] : 0;
            if (plan != Plan.READ_MODIFY_WRITE && inPlace) {
                dst = scratch.destination;
                dOff = scratch.destinationOffset;
            }
            Xor.parity(dst, dOff, scratch.sources, scratch.offsets, count, len);
            scratch.parityInPlace = inPlace;
            scratch.parityBuffer = dst;
            scratch.parityOffset = dOff;
            return true;
        } finally {
            scratch.release();
        }
    }

    /** Issues a write to {@code m} where it holds valid data (skips a missing, failed or not yet rebuilt one). */
    private static void writeTo(MemberPhase phase, Member m, long stripeOffset, long memberOffset, ByteBuffer buf,
                                int off, int len) {
        if (m == null || !m.writable(stripeOffset)) {
            return;
        }
        phase.write(m, memberOffset, buf, off, len);
    }
}
