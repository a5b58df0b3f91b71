package org.raidfive.counter;

import static org.raidfive.counter.PaddedWords.WORD;

import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A read-write lock for a read-mostly configuration: readers on the I/O path
 * write only a cell of their own (with plain stores where Linux's
 * {@code membarrier(2)} is available, else one atomic add on a striped cell)
 * and read one shared word that is only written by writers; a rare writer (reconfiguration, block-size
 * change) blocks new readers, waits for the active ones to drain, and then
 * runs alone. The JVM port of Linux's {@code percpu_rw_semaphore}
 * ({@code kernel/locking/percpu-rwsem.c}).
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>{@link #readLock()} never waits while no writer holds or wants the
 *     lock; {@link #tryReadLock()} fails without touching what the writer
 *     waits on, so pollers cannot starve it; {@link #tryWriteLock(Duration)}
 *     bounds a writer's wait and can be interrupted. Once a writer has called {@link #writeLock()}, new readers wait
 *     until every writer is done: writers are never starved by readers
 *     (readers can be starved by a continuous stream of writers; writers are
 *     meant to be rare).</li>
 * <li>Writers exclude each other and every reader.</li>
 * <li>Not reentrant for readers, as in the kernel: a thread that holds a
 *     read lock and calls {@code readLock()} again while a writer is
 *     waiting deadlocks (the writer waits for the first hold, the second
 *     waits for the writer). Telling a recursive reader apart would need
 *     per-thread state on the read path. Use {@link #tryReadLock()} where
 *     recursion is possible. No upgrade (read to write) and no downgrade.</li>
 * <li>A read lock may be released by another thread than the one that took
 *     it: the writer sums all cells, so which cell a release lands in does
 *     not matter.</li>
 * <li>Memory ordering: everything done under a write lock happens-before
 *     every later read lock, and everything done under a read lock
 *     happens-before the next write lock.</li>
 * </ul>
 */
public final class PercpuRwSemaphore {
    /*
     * Design. One padded long[] (PaddedWords) holds BLOCK, the number of
     * writers that hold or want the lock, and `slots` reader cells.
     *
     * Reader: getAndAdd(own cell, +1), then getVolatile(BLOCK). Zero: in.
     * Otherwise back out (getAndAdd(cell, -1), wake the draining writer),
     * wait on a condition until BLOCK is zero, and try again. Both read
     * paths look at BLOCK first and, if a writer is in or waiting, go
     * straight to waiting (readLock) or failing (tryReadLock) without
     * touching a cell: only readers that were already on their way can
     * still appear in the writer's sums, so pollers cannot starve a writer
     * by keeping a +1 in some cell at every sum (they did, before: writeLock
     * p50 from 1 us to 8 ms with 4 tryReadLock pollers). The early read is
     * only a shortcut; the Dekker argument below rests on the add and the
     * read after it.
     * Writer: getAndAdd(BLOCK, +1), take the writer mutex, publish itself
     * as the draining writer, then sum the cells until the sum is zero
     * (spinning briefly, then parking).
     *
     * This is Dekker's pattern, which the kernel's rcu_sync replaces with a
     * grace period (the kernel reader's this_cpu_inc is followed by smp_mb()
     * before it reads sem->block). The reader writes its cell then reads
     * BLOCK; the writer writes BLOCK then reads the cells. All four accesses
     * are volatile, so they are in the JMM's synchronization order, a total
     * order consistent with each thread's program order. If the reader's
     * read of BLOCK comes before the writer's write, then its cell write
     * comes earlier still and the writer's sum, which comes later, sees it:
     * the writer waits for that reader. If the reader's read comes after the
     * write, it sees BLOCK != 0 and backs out. No interleaving lets both miss
     * each other. (On x86 the LOCK'd add is the full fence; a plain store
     * followed by a load could be reordered by the store buffer, which is
     * why the cell update must be an atomic RMW or followed by a fence.)
     *
     * The writer's sum is not an atomic snapshot, yet zero still means "no
     * reader inside": every reader that got in had its increment ordered
     * before BLOCK was raised, hence before every read of the sum, so each
     * such increment is seen; its decrement, seen or not, only lowers the
     * sum if that reader has left. Readers that back out add +1 then -1 to
     * one cell, which a single read of that cell sees as 0 or +1, never -1.
     * So sum == 0 implies no reader holds the lock.
     *
     * Wake-ups. readUnlock() and a backing-out reader, after their
     * decrement, read BLOCK and, if it is set, unpark the draining writer.
     * The writer publishes itself (volatile) before summing. If a reader
     * reads the writer field as null, that read precedes the writer's
     * publication, which precedes its sum, so the sum sees the decrement;
     * otherwise the unpark gives the writer a permit before or during its
     * park. Either way no wake-up is lost. Readers wait on a Condition
     * under waitLock and re-check BLOCK under it; the last writer out
     * lowers BLOCK before signalling under the same lock.
     *
     * Owned cells (where membarrier(2) works; the kernel's rcu_sync shape).
     * A reader with a ThreadSlots slot uses its own cell, as PercpuRef's
     * owned cells do: read BLOCK (P; if set, touch nothing), one release
     * store that counts the hold (S), read BLOCK again (L). If L finds
     * BLOCK still clear the reader is in; else a writer raced it and it
     * backs out exactly as readUnlock does (the store taken back, the
     * writer woken if it waits), then waits for the writer. No atomic
     * instruction, no fence, one store. The writer raises BLOCK, publishes
     * itself, issues membarrier(PRIVATE_EXPEDITED), then sums every cell
     * (shared cells as before, each owned cell of a slot ever taken) until
     * the sum is zero. The argument is PercpuRef's: a reader whose L read
     * BLOCK clear made its S before the barrier on its CPU, so every sum
     * sees its hold until its readUnlock; a reader whose S the writer's sum
     * missed reads BLOCK set at L and backs out. A hold counted by a sum
     * and then backed out only makes the writer sum again. Only sections
     * whose P came before BLOCK was raised store at all, so pollers cannot
     * keep a draining writer from seeing zero. (The version before marked
     * the cell busy around the add and made the writer wait for the mark:
     * two stores to enter instead of one.)
     * readUnlock is a release store of the count minus 1, then an opaque
     * read of BLOCK; if set, a full fence and the writer field. If that
     * read of BLOCK ran before the membarrier's barrier on the reader's CPU,
     * so did the store, which the barrier makes visible to the writer's
     * sums; if after, it sees BLOCK and the fence pairs with the writer's
     * volatile publish before its sums (Dekker). Threads without a slot use
     * the shared cells; a hold may be released from another thread, since
     * only the total matters.
     *
     * Ordering for data: the writer's critical section is followed by its
     * volatile decrement of BLOCK, which a later reader's volatile read of
     * BLOCK synchronizes with. A reader's critical section is followed by
     * its volatile decrement of a cell, which the next writer's volatile
     * read of that cell synchronizes with.
     */

    private static final int BLOCK = PaddedWords.controlIndex(0);
    private static final int CELL_BASE = PaddedWords.cellBase(1);
    /** Sums a draining writer tries before it parks (readers' critical sections are usually short). */
    private static final int DRAIN_SPINS = 256;

    private final long[] words;
    private final int slotShift;
    private final int slots;
    private final int drainSpins;
    /** Owned reader cells (ThreadSlots), after the shared ones; null without membarrier. */
    private final long[] owned;

    private final ReentrantLock writerMutex = new ReentrantLock();
    private final ReentrantLock waitLock = new ReentrantLock();
    private final Condition unblocked = waitLock.newCondition();
    private volatile Thread drainingWriter;
    /** Sums made by draining writers (the writer path only): a test sees what wakes a writer. */
    private final AtomicLong drainSumCount = new AtomicLong();

    /**
     * A semaphore with as many reader cells as this machine warrants (see {@link PercpuRef}): a cell
     * of its own per reader thread where membarrier(2) is available, else shared cells.
     */
    public PercpuRwSemaphore() {
        this(Membarrier.available());
    }

    /**
     * A semaphore whose readers use owned cells (if {@code ownedCells} and membarrier(2) is
     * available) or shared cells with atomic adds (for A/B measurements: {@link CounterMode#PERCPU_SHARED}).
     */
    public PercpuRwSemaphore(boolean ownedCells) {
        this(PaddedWords.defaultSlots(), DRAIN_SPINS, ownedCells && Membarrier.available());
    }

    PercpuRwSemaphore(int slots) {
        this(slots, DRAIN_SPINS, false);
    }

    /** For tests: {@code drainSpins = 0} parks at once (keeps model checking small). */
    PercpuRwSemaphore(int slots, int drainSpins) {
        this(slots, drainSpins, false);
    }

    /** For tests: owned cells when {@code ownedCells} (needs membarrier), else {@code slots} shared ones. */
    PercpuRwSemaphore(int slots, int drainSpins, boolean ownedCells) {
        if (ownedCells && !Membarrier.available()) {
            throw new IllegalStateException("owned cells need membarrier(2): " + Membarrier.unavailableReason());
        }
        this.drainSpins = drainSpins;
        this.slots = PaddedWords.checkSlots(slots);
        this.slotShift = PaddedWords.slotShift(slots);
        this.words = PaddedWords.allocate(1, slots);
        this.owned = ownedCells ? PaddedWords.allocate(0, ThreadSlots.CAPACITY) : null;
    }

    /** True if readers use owned cells (plain stores; the writer issues a membarrier). */
    boolean ownedCells() {
        return owned != null;
    }

    // ------------------------------------------------------------------ readers

    /** Takes the read lock, waiting (uninterruptibly) while a writer holds or wants the lock. */
    public void readLock() {
        readLock(null, null);
    }

    /** {@link #readLock()}; the pauses: see {@link #enterOwned}. */
    private void readLock(Runnable beforeStore, Runnable afterStore) {
        final int c = callersOwnedCell();
        if (c >= 0) {
            while (!enterOwned(c, beforeStore, afterStore)) {
                awaitNoWriter();
            }
            return;
        }
        final long[] w = words;
        final int cell = PaddedWords.cellIndex(CELL_BASE, slotShift);
        if ((long) WORD.getVolatile(w, BLOCK) != 0L) { // a writer is in or waiting: touch nothing it sums
            readLockSlow(w, cell, false);
            return;
        }
        long unused = (long) WORD.getAndAdd(w, cell, 1L);
        if ((long) WORD.getVolatile(w, BLOCK) != 0L) { // after our add: Dekker with writeLock
            readLockSlow(w, cell, true);
        }
    }

    /**
     * Takes the read lock if no writer holds or wants it; never waits. A failed attempt while a
     * writer waits leaves the reader cells alone, so pollers cannot keep a writer's drain from
     * seeing zero (they starved it: each poll was a +1 and -1 in a cell the writer sums).
     */
    public boolean tryReadLock() {
        final int c = callersOwnedCell();
        if (c >= 0) {
            return enterOwned(c, null, null);
        }
        final long[] w = words;
        if ((long) WORD.getVolatile(w, BLOCK) != 0L) {
            return false;
        }
        final int cell = PaddedWords.cellIndex(CELL_BASE, slotShift);
        long unused = (long) WORD.getAndAdd(w, cell, 1L);
        if ((long) WORD.getVolatile(w, BLOCK) == 0L) {
            return true;
        }
        leave(w, cell);
        return false;
    }

    /** Releases a read lock taken by {@link #readLock()} or a successful {@link #tryReadLock()}. */
    public void readUnlock() {
        final int c = callersOwnedCell();
        if (c >= 0) {
            leaveOwned(c);
            return;
        }
        leave(words, PaddedWords.cellIndex(CELL_BASE, slotShift));
    }

    /** The calling thread's owned cell, or -1 (no owned cells here, or no slot for the thread: shared cells). */
    private int callersOwnedCell() {
        if (owned == null) {
            return -1;
        }
        int slot = ThreadSlots.slot();
        return slot < 0 ? -1 : ownedCell(slot);
    }

    private static int ownedCell(int slot) {
        return PaddedWords.cellBase(0) + (slot << PaddedWords.SPAN_SHIFT);
    }

    /**
     * Owned cell: read BLOCK; count the hold with one release store; read BLOCK again, and back out
     * (as {@link #leaveOwned}) if a writer came meanwhile. Nothing is stored when a writer is in or
     * waiting at the first read, so a writer's drain never sees that attempt. {@code beforeStore}
     * and {@code afterStore} (tests only; null on the I/O path, folded away by the JIT) run where a
     * reader descheduled at the worst moments stands: a writer's sum then misses the hold, or
     * counts it.
     */
    private boolean enterOwned(int c, Runnable beforeStore, Runnable afterStore) {
        final long[] o = owned;
        long v = (long) WORD.getOpaque(o, c); // our own word
        if ((long) WORD.getAcquire(words, BLOCK) != 0L) {
            return false; // a writer is in or waiting: touch nothing it sums
        }
        if (beforeStore != null) {
            beforeStore.run();
        }
        WORD.setRelease(o, c, v + 1);
        if (afterStore != null) {
            afterStore.run();
        }
        // StoreLoad: a compiler barrier here (see PercpuRef); the writer's membarrier is the fence.
        // Acquire: the last writer's critical section happens-before ours (its BLOCK decrement).
        if ((long) WORD.getAcquire(words, BLOCK) == 0L) {
            return true;
        }
        leaveOwned(c);
        return false;
    }

    /**
     * For tests: {@link #readLock()} whose owned-cell section runs the pauses (see
     * {@link #enterOwned}).
     */
    void readLockPausing(Runnable beforeStore, Runnable afterStore) {
        readLock(beforeStore, afterStore);
    }

    /**
     * Drops a hold from the own cell (release: our critical section happens-before the writer that
     * sums it). If a writer is draining it may be parked on a sum that missed this store: a full
     * fence, then the writer field (Dekker with the writer's publish-then-sum).
     */
    private void leaveOwned(int c) {
        final long[] o = owned;
        WORD.setRelease(o, c, (long) WORD.getOpaque(o, c) - 1);
        if ((long) WORD.getOpaque(words, BLOCK) != 0L) {
            VarHandle.fullFence();
            Thread writer = drainingWriter;
            if (writer != null) {
                LockSupport.unpark(writer);
            }
        }
    }

    private void awaitNoWriter() {
        waitLock.lock();
        try {
            while ((long) WORD.getVolatile(words, BLOCK) != 0L) {
                unblocked.awaitUninterruptibly();
            }
        } finally {
            waitLock.unlock();
        }
    }

    /**
     * Every read hold: the shared cells plus, with owned cells, each owned cell's count (acquire:
     * a reader's critical section happens-before the writer that sees its release store). Writers
     * call this after raising BLOCK, publishing themselves and (owned cells) issuing the
     * membarrier.
     */
    private long sumReaders() {
        long sum = PaddedWords.sumCells(words, CELL_BASE, slots);
        final long[] o = owned;
        for (int s = o == null ? -1 : ThreadSlots.nextUsed(0); s >= 0; s = ThreadSlots.nextUsed(s + 1)) {
            sum += (long) WORD.getAcquire(o, ownedCell(s));
        }
        return sum;
    }

    /** Owned cells: after BLOCK is raised and the writer published, every later reader section sees BLOCK. */
    private void fenceReaders() {
        if (owned != null) {
            Membarrier.barrier();
        }
    }

    private void leave(long[] w, int cell) {
        long unused = (long) WORD.getAndAdd(w, cell, -1L);
        if ((long) WORD.getVolatile(w, BLOCK) != 0L) {
            Thread writer = drainingWriter;
            if (writer != null) {
                LockSupport.unpark(writer);
            }
        }
    }

    private void readLockSlow(long[] w, int cell, boolean counted) {
        boolean inCell = counted;
        do {
            if (inCell) {
                leave(w, cell);
            }
            awaitNoWriter();
            long unused = (long) WORD.getAndAdd(w, cell, 1L);
            inCell = true;
        } while ((long) WORD.getVolatile(w, BLOCK) != 0L);
    }

    // ------------------------------------------------------------------ writers

    /**
     * Takes the write lock (uninterruptibly): from this call on new readers
     * wait; returns once earlier writers are done and active readers have
     * drained.
     */
    public void writeLock() {
        final long[] w = words;
        long unused = (long) WORD.getAndAdd(w, BLOCK, 1L); // first: no new reader gets in from here on
        writerMutex.lock();
        drainingWriter = Thread.currentThread(); // before summing: see the wake-up note
        fenceReaders();
        boolean interrupted = false;
        for (int spins = 0; sumReaders() != 0L; spins++) {
            drainSumCount.incrementAndGet();
            if (spins < drainSpins) {
                Thread.onSpinWait();
            } else {
                LockSupport.park(this);
                interrupted |= Thread.interrupted(); // park returns at once while the flag is set
            }
        }
        drainingWriter = null;
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * {@link #writeLock()} with a bound: waits at most {@code timeout} for earlier writers and
     * active readers, and can be interrupted. On timeout or interrupt the attempt is withdrawn
     * (readers held back by it are let in again) and nothing is held.
     *
     * @return true with the write lock held, false if the readers (or an earlier writer) did not
     *         finish within {@code timeout}
     * @throws InterruptedException if interrupted while waiting (the lock is not held)
     */
    public boolean tryWriteLock(Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + Math.max(0L, timeout.toNanos());
        final long[] w = words;
        long unused = (long) WORD.getAndAdd(w, BLOCK, 1L);
        boolean mutex = false;
        boolean held = false;
        try {
            mutex = writerMutex.tryLock(Math.max(0L, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!mutex) {
                return false;
            }
            drainingWriter = Thread.currentThread();
            fenceReaders();
            for (int spins = 0; sumReaders() != 0L; spins++) {
                drainSumCount.incrementAndGet();
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while readers drained");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0L) {
                    return false;
                }
                if (spins < drainSpins) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(this, left);
                }
            }
            held = true;
            return true;
        } finally {
            if (mutex) {
                drainingWriter = null;
            }
            if (!held) {
                if (mutex) {
                    writerMutex.unlock();
                }
                lowerBlock(w);
            }
        }
    }

    /**
     * Releases the write lock; if no other writer wants it, lets readers in.
     *
     * @throws IllegalMonitorStateException if this thread does not hold the write lock
     */
    public void writeUnlock() {
        if (!writerMutex.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("write lock not held by " + Thread.currentThread());
        }
        lowerBlock(words);
        writerMutex.unlock();
    }

    /** Withdraws one writer from BLOCK; the last one out lets the waiting readers in. */
    private void lowerBlock(long[] w) {
        if ((long) WORD.getAndAdd(w, BLOCK, -1L) == 1L) {
            waitLock.lock();
            try {
                unblocked.signalAll();
            } finally {
                waitLock.unlock();
            }
        }
    }

    /** Sums of the reader cells writers have made while draining (writers only; for tests). */
    long drainSums() {
        return drainSumCount.get();
    }

    /** True while a writer holds or waits for the lock. */
    public boolean isWriteLockedOrPending() {
        return (long) WORD.getVolatile(words, BLOCK) != 0L;
    }

    /** Read locks currently held (a moving snapshot that may include readers about to back out). */
    public long readers() {
        long sum = PaddedWords.sumCells(words, CELL_BASE, slots);
        final long[] o = owned;
        for (int s = o == null ? -1 : ThreadSlots.nextUsed(0); s >= 0; s = ThreadSlots.nextUsed(s + 1)) {
            sum += (long) WORD.getOpaque(o, ownedCell(s));
        }
        return sum;
    }
}
