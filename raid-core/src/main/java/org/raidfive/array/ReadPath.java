package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.jctools.queues.MpmcArrayQueue;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.IoCallback;
import org.raidfive.layout.Raid5Layout;

/**
 * Reads. A request is cut at chunk boundaries; each piece whose member holds valid data is read
 * straight into the caller's buffer with no stripe lock (md's aligned-read bypass, counted in
 * {@code activeAlignedReads}). A piece whose member is missing or failed, or whose sectors the
 * member lists as bad blocks, is reconstructed under the stripe lock from the other members.
 *
 * <p>Read errors follow md's raid5 ({@code raid5_end_read_request}): the bytes are rebuilt from
 * the other members, handed to the caller, written back over the bad sectors and read again; a
 * member is failed only when that does not work (the rewrite or the re-read fails, or more than
 * {@link Member#MAX_READ_ERRORS} reads failed in a row), and when the stripe is degraded, so that
 * nothing can be rebuilt, the sectors are recorded as bad blocks where the member keeps a log (the
 * read fails; the array goes on) and the member is failed where it does not. Corrections are
 * counted in sectors, md's {@code cnt_corrected_read}.
 */
final class ReadPath {
    private final ArrayCore core;
    /** For mapping only: bounds are the core's (a size change replaces its layout, mapping alike). */
    private final Raid5Layout layout;
    /** Pooled state of completion-based bypass reads, one per read in flight. */
    private final MpmcArrayQueue<BypassRead> bypassReads = new MpmcArrayQueue<>(1024);

    /** Where a read that could not go the bypass way goes: the array's blocking path on the shared I/O threads. */
    private final AsyncDisk blockingReads;

    ReadPath(ArrayCore core, AsyncDisk blockingReads) {
        this.core = core;
        this.layout = core.layout;
        this.blockingReads = blockingReads;
    }

    /**
     * A completion-based aligned read of one piece on a healthy member: the member's own
     * completion-based read, no thread held while it is in flight. The caller holds the
     * configuration read side for it; the completion gives it back, and on a read error the whole
     * request is retried through the blocking path, which corrects it as md does.
     */
    private final class BypassRead implements IoCallback {
        Member member;
        IoCallback callback;
        int tag;
        long offset;
        ByteBuffer dst;
        int dstOffset;
        int length;

        @Override
        public void ioDone(int ignored, IOException error) {
            Member m = member;
            IoCallback cb = callback;
            int t = tag;
            m.nrPending.put();
            core.activeAlignedReads.put();
            if (error == null) {
                m.countIo(false, length);
                core.countRequest(false, length); // a failed one is counted by the blocking read that retries it
                m.readDataOk();
            } else {
                m.countError();
            }
            long o = offset;
            ByteBuffer d = dst;
            int doff = dstOffset;
            int len = length;
            member = null;
            callback = null;
            dst = null;
            bypassReads.relaxedOffer(this);
            core.config.readUnlock();
            if (error == null) {
                cb.ioDone(t, null);
            } else {
                retryBlocking(o, d, doff, len, cb, t);
            }
        }
    }

    private void retryBlocking(long offset, ByteBuffer dst, int dstOffset, int length, IoCallback cb, int tag) {
        blockingReads.readAsync(offset, dst, dstOffset, length, cb, tag);
    }

    /**
     * Starts a completion-based read if it is one piece on a readable member without bad blocks
     * (the common case: a random read inside a chunk); false, having done nothing, otherwise.
     * Caller has checked the range and holds the configuration read side, which this takes over
     * (released by the completion) when it returns true.
     */
    boolean tryBypassAsync(long offset, ByteBuffer dst, int dstOffset, int length, IoCallback cb, int tag) {
        int chunkSize = layout.chunkSize();
        long chunk = offset >>> layout.chunkShift();
        int inChunk = (int) (offset & (chunkSize - 1));
        if (inChunk + length > chunkSize || core.failure != null) {
            return false;
        }
        long stripe = layout.stripeOfChunk(chunk);
        int slot = layout.dataSlot(stripe, layout.dataIndexOfChunk(chunk));
        long stripeOffset = layout.memberOffset(stripe);
        Member m = core.table.slots[slot];
        if (m == null || !m.readable(stripeOffset, stripeOffset + inChunk, length) || m.async.completesInline()) {
            return false;
        }
        BypassRead r = bypassReads.relaxedPoll();
        if (r == null) {
            r = new BypassRead(); // grows once to the reads in flight, then reused
        }
        r.member = m;
        r.callback = cb;
        r.tag = tag;
        r.offset = offset;
        r.dst = dst;
        r.dstOffset = dstOffset;
        r.length = length;
        core.activeAlignedReads.get();
        m.nrPending.get();
        m.async.readAsync(m.dataOffsetBytes + stripeOffset + inChunk, dst, dstOffset, length, r, 0);
        return true;
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
        Member m = core.table.slots[slot];
        if (m != null && m.readable(stripeOffset)) {
            if (!m.hasBadBlocks(stripeOffset + inChunk, n)) {
                core.activeAlignedReads.get();
                try {
                    m.readData(stripeOffset + inChunk, dst, dstOffset, n);
                    return;
                } catch (IOException e) {
                    // md retries a failed read page by page, then corrects the pages that fail
                } finally {
                    core.activeAlignedReads.put();
                }
            }
            readPageByPage(stripe, slot, inChunk, dst, dstOffset, n);
            return;
        }
        reconstruct(stripe, slot, inChunk, dst, dstOffset, n);
    }

    /**
     * md's retry of a failed (or bad-block) read, one 4 KiB page at a time ({@code R5_ReadNoMerge}):
     * pages that read are kept, pages that fail or that the member lists as bad are corrected.
     */
    private void readPageByPage(long stripe, int slot, int inChunk, ByteBuffer dst, int dstOffset, int n)
            throws IOException {
        long stripeOffset = layout.memberOffset(stripe);
        Member m = core.table.slots[slot]; // the table stays as it is while the read holds the configuration read side
        int done = 0;
        while (done < n) {
            long at = stripeOffset + inChunk + done;
            int len = (int) Math.min(n - done, PAGE - (at & (PAGE - 1)));
            IOException error = null;
            if (m.state == MemberState.FAULTY) {
                reconstruct(stripe, slot, inChunk + done, dst, dstOffset + done, n - done);
                return;
            }
            if (!m.hasBadBlocks(at, len)) {
                try {
                    m.readData(at, dst, dstOffset + done, len);
                    done += len;
                    continue;
                } catch (IOException e) {
                    error = e;
                }
            }
            if (error != null) {
                countReadError(m, error);
            }
            try (StripeOp op = core.ops.acquire(stripe)) {
                op.correctPage(slot, inChunk + done, dst, dstOffset + done, len, error);
            }
            done += len;
        }
    }

    private static final int PAGE = 4096;

    /** md counts read errors in a row per member and fails it past its limit. */
    private void countReadError(Member m, IOException error) throws IOException {
        if (m.readErrors.incrementAndGet() > Member.MAX_READ_ERRORS) {
            core.memberFailed(
                    m,
                    new IOException(
                            m.name() + ": more than " + Member.MAX_READ_ERRORS + " read errors in a row (md's limit)",
                            error));
        }
    }

    /** Produces the bytes of {@code slot} under the stripe lock: from its member where it reads, else from the others. */
    private void reconstruct(long stripe, int slot, int inChunk, ByteBuffer dst, int dstOffset, int n)
            throws IOException {
        try (StripeOp op = core.ops.acquire(stripe)) {
            op.readSlot(slot, inChunk, dst, dstOffset, n);
        }
    }
}
