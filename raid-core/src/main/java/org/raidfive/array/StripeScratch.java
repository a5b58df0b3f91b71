package org.raidfive.array;

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

    StripeScratch(int slots, int pieceSize) {
        buffers = new ByteBuffer[slots];
        for (int i = 0; i < slots; i++) {
            buffers[i] = aligned(pieceSize);
        }
        parity = aligned(pieceSize);
        // Read-modify-write XORs old parity plus old and new bytes of every written member.
        sources = new ByteBuffer[2 * slots + 1];
        offsets = new int[2 * slots + 1];
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
            queue.relaxedOffer(s);
        }
    }
}
