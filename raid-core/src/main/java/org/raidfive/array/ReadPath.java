package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.parity.Xor;

/**
 * Reads. A request is cut at chunk boundaries; each piece whose member holds valid data is read
 * straight into the caller's buffer with no stripe lock (md's aligned-read bypass, counted in
 * {@code activeAlignedReads}). A piece whose member is missing or failed is reconstructed under
 * the stripe lock from the other members; a piece whose read fails is reconstructed the same way
 * and written back to the member, as md does with read errors.
 */
final class ReadPath {
    private final ArrayCore core;
    private final Raid5Layout layout;

    ReadPath(ArrayCore core) {
        this.core = core;
        this.layout = core.layout;
    }

    /** Caller holds the configuration read lock and has checked the range. */
    void read(long offset, ByteBuffer dst, int dstOffset, int length) throws IOException {
        int chunkSize = layout.chunkSize();
        int shift = layout.chunkShift();
        while (length > 0) {
            long chunk = offset >>> shift;
            int inChunk = (int) (offset & (chunkSize - 1));
            int n = Math.min(length, chunkSize - inChunk);
            readPiece(layout.stripeOfChunk(chunk), layout.dataIndexOfChunk(chunk), inChunk, dst, dstOffset, n);
            offset += n;
            dstOffset += n;
            length -= n;
        }
    }

    private void readPiece(long stripe, int dataIndex, int inChunk, ByteBuffer dst, int dstOffset, int n)
            throws IOException {
        core.checkUsable();
        int slot = layout.dataSlot(stripe, dataIndex);
        long stripeOffset = layout.memberOffset(stripe);
        Member m = core.slots[slot];
        if (m != null && m.readable(stripeOffset)) {
            IOException error;
            core.activeAlignedReads.get();
            try {
                m.readData(stripeOffset + inChunk, dst, dstOffset, n);
                return;
            } catch (IOException e) {
                error = e;
            } finally {
                core.activeAlignedReads.put();
            }
            correctReadError(m, stripe, slot, inChunk, dst, dstOffset, n, error);
            return;
        }
        core.locks.lock(stripe);
        try {
            reconstruct(stripe, slot, inChunk, dst, dstOffset, n);
        } finally {
            core.locks.unlock(stripe);
        }
    }

    /**
     * md's read-error handling: rebuild the bytes from the other members, hand them to the caller
     * and write them back over the bad sectors. The member is failed if the rewrite fails or it has
     * needed too many corrections.
     */
    private void correctReadError(Member m, long stripe, int slot, int inChunk, ByteBuffer dst, int dstOffset,
                                  int n, IOException error) throws IOException {
        core.locks.lock(stripe);
        try {
            Member[] s = core.slots;
            long stripeOffset = layout.memberOffset(stripe);
            if (core.unreadableSlots(s, stripeOffset) > 0) {
                // Already degraded elsewhere: nothing to rebuild from, so this member must go.
                core.memberFailed(m, error);
                reconstruct(stripe, slot, inChunk, dst, dstOffset, n);
                return;
            }
            reconstructFromOthers(s, stripe, slot, inChunk, dst, dstOffset, n);
            if (core.readOnly) {
                return;
            }
            try {
                m.writeData(stripeOffset + inChunk, dst, dstOffset, n);
            } catch (IOException rewriteError) {
                rewriteError.addSuppressed(error);
                core.memberFailed(m, rewriteError);
                return;
            }
            if (m.correctedReadErrors.incrementAndGet() > ArrayCore.MAX_CORRECTED_READ_ERRORS) {
                core.memberFailed(m, new IOException(m.name() + ": more than "
                        + ArrayCore.MAX_CORRECTED_READ_ERRORS + " read errors corrected", error));
            }
        } finally {
            core.locks.unlock(stripe);
        }
    }

    /**
     * Caller holds the stripe lock. Produces the bytes of {@code slot} from the others, failing
     * members whose reads fail until it succeeds or the stripe is lost.
     */
    void reconstruct(long stripe, int slot, int inChunk, ByteBuffer dst, int dstOffset, int n)
            throws IOException {
        while (true) {
            core.checkUsable();
            Member[] s = core.slots;
            long stripeOffset = layout.memberOffset(stripe);
            Member target = s[slot];
            if (target != null && target.readable(stripeOffset)) {
                try {
                    target.readData(stripeOffset + inChunk, dst, dstOffset, n);
                    return;
                } catch (IOException e) {
                    core.memberFailed(target, e);
                    continue;
                }
            }
            if (core.unreadableSlots(s, stripeOffset) > 1) {
                throw core.stripeLost(stripe);
            }
            if (reconstructFromOthers(s, stripe, slot, inChunk, dst, dstOffset, n)) {
                return;
            }
        }
    }

    /**
     * XOR of every other slot's bytes into {@code dst}. Returns false when a member read failed
     * (that member is then faulty and the caller re-plans).
     */
    boolean reconstructFromOthers(Member[] s, long stripe, int slot, int inChunk, ByteBuffer dst, int dstOffset,
                                  int n) throws IOException {
        long memberOffset = layout.memberOffset(stripe) + inChunk;
        StripeScratch scratch = core.scratch.borrow();
        try {
            int piece = core.scratch.pieceSize();
            for (int done = 0; done < n; done += piece) {
                int len = Math.min(piece, n - done);
                boolean first = true;
                for (int j = 0; j < s.length; j++) {
                    if (j == slot) {
                        continue;
                    }
                    Member other = s[j];
                    try {
                        if (first) {
                            other.readData(memberOffset + done, dst, dstOffset + done, len);
                            first = false;
                        } else {
                            ByteBuffer buf = scratch.buffers[j];
                            other.readData(memberOffset + done, buf, 0, len);
                            Xor.xorInto(dst, dstOffset + done, buf, 0, len);
                        }
                    } catch (IOException e) {
                        core.memberFailed(other, e);
                        return false;
                    }
                }
            }
            return true;
        } finally {
            core.scratch.giveBack(scratch);
        }
    }
}
