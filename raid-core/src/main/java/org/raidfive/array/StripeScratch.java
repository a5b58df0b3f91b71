package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jctools.queues.MpmcArrayQueue;

/**
 * Scratch buffers for one stripe operation: one piece-sized buffer per member slot plus one for
 * parity, and the argument arrays the parity kernel takes. Pooled ({@link Pool}) so the I/O path
 * allocates nothing in steady state: a thread borrows a set for the length of one stripe
 * operation and gives it back.
 */
final class StripeScratch {
    final ByteBuffer[] buffers;
    final ByteBuffer parity;
    final ByteBuffer[] sources;
    final int[] offsets;
    private final boolean[] direct;
    /** Members whose memory is used in place by the operation in hand, each holding one nr_pending. */
    private final Member[] pinned;
    private int pinnedCount;
    /** The member I/O of the operation's current phase, issued together and awaited together. */
    final MemberPhase phase;
    ByteBuffer destination;
    int destinationOffset;
    /** Where the last parity computation left its result, and whether that is the parity member itself. */
    ByteBuffer parityBuffer;
    int parityOffset;
    boolean parityInPlace;

    StripeScratch(int slots, int pieceSize) {
        buffers = new ByteBuffer[slots];
        for (int i = 0; i < slots; i++) {
            buffers[i] = aligned(pieceSize);
        }
        parity = aligned(pieceSize);
        // Read-modify-write XORs old parity plus old and new bytes of every written member.
        sources = new ByteBuffer[2 * slots + 1];
        offsets = new int[2 * slots + 1];
        direct = new boolean[2 * slots + 1];
        pinned = new Member[2 * slots + 2];
        phase = new MemberPhase(4 * slots + 4);
    }

    /** Starts a phase of member reads (see {@link #addSource}, {@link #awaitReads}). */
    void beginReads() {
        phase.begin();
    }

    /**
     * Makes source {@code k} the bytes of member {@code m} at {@code memberOffset}: in place when the
     * member's disk offers direct access (pinned with nr_pending until {@link #release()}), else a
     * read into this slot's buffer, issued now and completed by {@link #awaitReads}. Returns false
     * after failing the member if its memory cannot be reached.
     */
    boolean addSource(int k, Member m, int slot, long memberOffset, int len, ArrayCore core) throws IOException {
        try {
            ByteBuffer inPlace = m.direct(memberOffset, len);
            if (inPlace != null) {
                m.nrPending.get();
                pinned[pinnedCount++] = m;
                sources[k] = inPlace;
                offsets[k] = m.directIndex(memberOffset);
                direct[k] = true;
                return true;
            }
        } catch (IOException e) {
            core.memberFailed(m, e);
            return false;
        }
        phase.read(m, memberOffset, buffers[slot], 0, len);
        sources[k] = buffers[slot];
        offsets[k] = 0;
        direct[k] = false;
        return true;
    }

    /**
     * Waits for every read of the phase; false, after failing the members whose reads failed (the
     * caller re-plans), if any did.
     */
    boolean awaitReads(ArrayCore core) throws IOException {
        if (phase.await()) {
            return true;
        }
        phase.failMembers(core);
        return false;
    }

    /** Makes source {@code k} the caller's new bytes. */
    void addCallerSource(int k, ByteBuffer src, int offset) {
        sources[k] = src;
        offsets[k] = offset;
        direct[k] = false;
    }

    boolean sourceIsDirect(int k) {
        return direct[k];
    }

    /**
     * Pins member {@code m}'s bytes at {@code memberOffset} as the destination of the parity
     * computation ({@link #destination}), when its disk offers direct access; false otherwise.
     */
    boolean pinDestination(Member m, long memberOffset, int len) {
        try {
            ByteBuffer inPlace = m.direct(memberOffset, len);
            if (inPlace == null) {
                return false;
            }
            m.nrPending.get();
            pinned[pinnedCount++] = m;
            destination = inPlace;
            destinationOffset = m.directIndex(memberOffset);
            return true;
        } catch (IOException e) {
            return false; // the copying path will meet the same error and fail the member
        }
    }

    /** Drops the pins and the references to sources taken by the operation. */
    void release() {
        for (int i = 0; i < pinnedCount; i++) {
            pinned[i].nrPending.put();
            pinned[i] = null;
        }
        pinnedCount = 0;
        java.util.Arrays.fill(sources, null);
        destination = null;
    }

    static ByteBuffer aligned(int size) {
        return ByteBuffer.allocateDirect(size + 4096).alignedSlice(4096).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A bounded lock-free pool; when empty a new set is made, when full a returned set is dropped. */
    static final class Pool {
        private final MpmcArrayQueue<StripeScratch> queue;
        private final int slots;
        private final int pieceSize;

        Pool(int slots, int pieceSize, int capacity) {
            this.queue = new MpmcArrayQueue<>(capacity);
            this.slots = slots;
            this.pieceSize = pieceSize;
        }

        int pieceSize() {
            return pieceSize;
        }

        StripeScratch borrow() {
            StripeScratch s = queue.relaxedPoll();
            return s != null ? s : new StripeScratch(slots, pieceSize);
        }

        void giveBack(StripeScratch s) {
            s.parityBuffer = null;
            queue.relaxedOffer(s);
        }
    }
}
