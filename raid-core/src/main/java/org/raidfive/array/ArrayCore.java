package org.raidfive.array;

import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;
import org.raidfive.counter.CounterMode;
import org.raidfive.counter.PercpuRef;
import org.raidfive.counter.PercpuRwSemaphore;
import org.raidfive.layout.Raid5Layout;

/**
 * The state every part of the data path shares: geometry, members by slot, stripe locks, scratch
 * buffers, the configuration semaphore and the aligned-read counter.
 *
 * <p>Configuration ({@code slots}, {@code replacements}) is replaced, never mutated in place,
 * and only while the configuration semaphore is held for writing (quiesced), so an I/O that holds
 * the read side sees one consistent set of members for its whole life. Member <em>states</em> do
 * change under running I/O (a failure is discovered by I/O); they are volatile and every stripe
 * decision re-reads them under the stripe lock.
 */
final class ArrayCore {
    static final int MAX_PIECE = 256 * 1024;

    final String name;
    final Raid5Layout layout;
    final CounterMode counterMode;
    final StripeLocks locks;
    final StripeScratch.Pool scratch;
    final PercpuRwSemaphore config = new PercpuRwSemaphore();
    final PercpuRef activeAlignedReads;
    final ArrayHooks hooks;

    /** Foreground operations, counted only while a sync pass runs (it yields to them). */
    final LongAdder foregroundOps = new LongAdder();
    volatile boolean syncRunning;
    /**
     * Member offset below which parity is known to match the data; all ones when the array is
     * clean. Writes above it use reconstruct-write so that the stripe they touch becomes
     * consistent, as md does above {@code recovery_cp}.
     */
    volatile long resyncOffset = Long.MAX_VALUE;

    /** Opened read-only: nothing is written, not even superblocks or read-error corrections. */
    volatile boolean readOnly;

    volatile Member[] slots;
    volatile Member[] replacements;
    volatile String failure;

    /** Set by writers, cleared by safemode's check; see {@link #noteWrite()}. */
    private volatile boolean wroteSinceCheck;

    /**
     * Records that a write started. Only the first writer after a check stores (a plain volatile
     * read otherwise), so writers do not bounce the flag's cache line between cores.
     */
    void noteWrite() {
        if (!wroteSinceCheck) {
            wroteSinceCheck = true;
        }
    }

    /** True if a write started since the last call; clears the note. */
    boolean takeWriteNote() {
        if (wroteSinceCheck) {
            wroteSinceCheck = false;
            return true;
        }
        return false;
    }

    ArrayCore(String name, Raid5Layout layout, Member[] slots, CounterMode counterMode, ArrayHooks hooks) {
        this.name = name;
        this.layout = layout;
        this.counterMode = counterMode;
        this.hooks = hooks;
        this.slots = slots.clone();
        this.replacements = new Member[layout.disks()];
        this.locks = new StripeLocks(4096);
        int piece = Math.min(layout.chunkSize(), MAX_PIECE);
        this.scratch = new StripeScratch.Pool(layout.disks(), piece, 256);
        this.activeAlignedReads = PercpuRef.inflightCounter(counterMode);
    }

    long arrayBytes() {
        return layout.arrayBytes();
    }

    /** Refuses I/O once the array has failed. */
    void checkUsable() throws ArrayFailedException {
        String f = failure;
        if (f != null) {
            throw new ArrayFailedException(name + " has failed: " + f + "; I/O is refused");
        }
    }

    /** Validates an I/O range: 512-byte aligned and inside the array. */
    void checkRange(String op, long offset, long length) {
        if (((offset | length) & 511) != 0) {
            throw new IllegalArgumentException(name + ": " + op + " at offset " + offset + " length " + length
                    + " is not aligned to 512-byte sectors");
        }
        long size = arrayBytes();
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IllegalArgumentException(name + ": " + op + " at offset " + offset + " length " + length
                    + " ends beyond the array (size " + size + " bytes)");
        }
    }

    /**
     * Number of slots whose bytes {@code [memberOffset, memberOffset + length)} of the stripe at
     * {@code stripeOffset} cannot be read (missing, faulty, not yet rebuilt, listed as bad blocks).
     */
    int unreadableSlots(Member[] s, long stripeOffset, long memberOffset, int length) {
        int n = 0;
        for (Member m : s) {
            if (m == null || !m.readable(stripeOffset, memberOffset, length)) {
                n++;
            }
        }
        return n;
    }

    /** Reports a member I/O error to the metadata; throws when the array can no longer serve. */
    void memberFailed(Member m, IOException cause) throws IOException {
        hooks.memberFailed(m, cause);
        checkUsable();
    }

    ArrayFailedException stripeLost(long stripe) {
        return new ArrayFailedException(name + ": stripe " + stripe
                + " has more than one unreadable member; its data cannot be reconstructed");
    }
}
