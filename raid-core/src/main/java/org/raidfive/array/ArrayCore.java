package org.raidfive.array;

import java.io.EOFException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import org.raidfive.counter.CounterMode;
import org.raidfive.counter.PercpuRef;
import org.raidfive.counter.PercpuRwSemaphore;
import org.raidfive.counter.ThreadStats;
import org.raidfive.layout.Raid5Layout;

/**
 * The state every part of the data path shares: geometry, the member table, stripe locks, the
 * pool of stripe operations, the configuration semaphore and the aligned-read counter.
 *
 * <p>The member table ({@link MemberTable}) is replaced, never mutated, and only while the
 * configuration semaphore is held for writing (quiesced), so an I/O that holds the read side sees
 * one consistent set of members for its whole life. Member <em>states</em> do change under running
 * I/O (a failure is discovered by I/O); they are volatile and every stripe decision re-reads them
 * under the stripe lock. A failure found by I/O goes through {@link #memberFailed}, the one path.
 */
final class ArrayCore {
    static final int MAX_PIECE = 256 * 1024;

    final String name;
    /**
     * The geometry. Replaced only while quiesced, and only by a size change ({@link
     * #growLayout}): the new layout maps every stripe as the old one did (same algorithm, members and
     * chunk) and only has more of them, so the copies the data path keeps for mapping stay right;
     * bounds come from here.
     */
    volatile Raid5Layout layout;

    final CounterMode counterMode;
    final StripeLocks locks;
    final StripeOp.Pool ops;
    final PercpuRwSemaphore config;
    /**
     * Request counts while live counters are published ({@link ArrayCounters}); null otherwise, so
     * that an array nobody watches pays one read of this field per request.
     */
    volatile ThreadStats stats;

    void countRequest(boolean write, long bytes) {
        IoStats.io(stats, write, bytes);
    }

    void countRequestError() {
        IoStats.one(stats, IoStats.ERRORS);
    }

    /** What happened, for the array's listeners (delivered on their own thread). */
    final ArrayEvents events;
    /**
     * How long a configuration change or close waits for I/O in flight (and a pass to stop) before it
     * gives up with an error naming the members with I/O still in flight.
     */
    /** How long close and a member change wait for I/O in flight, unless set. */
    static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(60);

    volatile Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
    final PercpuRef activeAlignedReads;
    final ArrayHooks hooks;
    /** When unreadable sectors are recorded as bad blocks and when they fail the member. */
    final BadBlockPolicy badBlocks = new BadBlockPolicy(this);

    /** Foreground operations, counted only while a sync pass runs (it yields to them). */
    final LongAdder foregroundOps = new LongAdder();

    volatile boolean syncRunning;
    /**
     * Member offset below which parity is known to match the data; all ones when the array is
     * clean. Writes above it use reconstruct-write so that the stripe they touch becomes
     * consistent, as md does above {@code recovery_cp}.
     */
    volatile long resyncOffset = Long.MAX_VALUE;

    /**
     * How parity is kept consistent across a crash (resync, write-intent bitmap or partial parity log).
     * Replaced only while quiesced (a policy change), read by every write and every pass.
     */
    volatile ConsistencyPort consistency = ConsistencyPort.RESYNC;

    /** Opened read-only: nothing is written, not even superblocks or read-error corrections. */
    volatile boolean readOnly;

    /** Who holds each slot; replaced as a whole, only while quiesced. */
    volatile MemberTable table;

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

    ArrayCore(String name, Raid5Layout layout, MemberTable table, CounterMode counterMode, ArrayHooks hooks) {
        this.name = name;
        this.layout = layout;
        this.counterMode = counterMode;
        this.hooks = hooks;
        this.table = table;
        this.locks = new StripeLocks(4096);
        this.ops = new StripeOp.Pool(this, Math.min(layout.chunkSize(), MAX_PIECE), 256);
        this.activeAlignedReads = PercpuRef.inflightCounter(counterMode);
        this.config = new PercpuRwSemaphore(counterMode != CounterMode.PERCPU_SHARED);
        this.events = new ArrayEvents(name);
    }

    long arrayBytes() {
        return layout.arrayBytes();
    }

    /** The same geometry over {@code memberBytes} per member; caller has quiesced the array. */
    void growLayout(long memberBytes) {
        Raid5Layout old = layout;
        Raid5Layout grown = new Raid5Layout(old.algorithm(), old.disks(), old.chunkSize(), memberBytes);
        if (grown.stripes() < old.stripes()) {
            throw new IllegalArgumentException(name + ": " + memberBytes + " bytes per member is less than the "
                    + old.memberBytesUsed() + " in use");
        }
        layout = grown;
    }

    /** Refuses I/O once the array has failed. */
    void checkUsable() throws ArrayFailedException {
        String f = failure;
        if (f != null) {
            throw new ArrayFailedException(name + " has failed: " + f + "; I/O is refused");
        }
    }

    /**
     * Validates an I/O range as {@link org.raidfive.disk.MemberDisk} promises: a range that is not
     * 512-byte aligned is a caller error ({@link IllegalArgumentException}); one that does not lie
     * inside the array is an {@link java.io.EOFException}, as on any member.
     */
    void checkRange(String op, long offset, long length) throws EOFException {
        if (((offset | length) & 511) != 0) {
            throw new IllegalArgumentException(name + ": " + op + " at offset " + offset + " length " + length
                    + " is not aligned to 512-byte sectors");
        }
        long size = arrayBytes();
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new EOFException(name + ": " + op + " at offset " + offset + " length " + length
                    + " ends beyond the array (size " + size + " bytes)");
        }
    }

    /**
     * A member's I/O failed (md's {@code md_error}): the member is marked faulty and the superblocks
     * of the live members say so before this returns. Throws {@link ArrayFailedException} when the
     * array can no longer serve. Every failure found by I/O comes here.
     */
    void memberFailed(Member m, IOException cause) throws IOException {
        hooks.memberFailed(m, cause);
        checkUsable();
    }

    /**
     * {@link #memberFailed} where the caller goes on with the other members whatever happens to
     * the array (a flush of every member, close): an array failure is left for the caller to see in
     * {@link #failure}.
     */
    void memberFailedQuietly(Member m, IOException cause) throws IOException {
        try {
            memberFailed(m, cause);
        } catch (ArrayFailedException e) {
            // recorded in failure; the caller checks it
        }
    }

    ArrayFailedException stripeLost(long stripe) {
        return new ArrayFailedException(
                name + ": stripe " + stripe + " has more than one unreadable member; its data cannot be reconstructed");
    }
}
