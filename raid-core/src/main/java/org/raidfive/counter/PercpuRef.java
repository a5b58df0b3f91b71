package org.raidfive.counter;

import static org.raidfive.counter.PaddedWords.WORD;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A reference count that is striped across per-thread cells while nobody
 * needs to see zero, and collapses into one exact atomic counter when
 * somebody does: the JVM port of Linux's {@code percpu_ref}
 * ({@code lib/percpu-refcount.c}) that md uses for {@code nr_pending} and
 * {@code active_aligned_reads}.
 *
 * <h2>Two kinds</h2>
 * <ul>
 * <li><b>Reference</b> ({@link #create}): as in the kernel. It starts with
 *     one <em>initial reference</em> owned by whoever will {@link #kill()}
 *     it; {@code kill()} switches it to atomic mode, marks it dying and drops
 *     the initial reference. When the exact count reaches zero the release
 *     callback runs, exactly once, in the thread that dropped the last
 *     reference. Zero means "nobody can use this any more".</li>
 * <li><b>In-flight counter</b> ({@link #inflightCounter}): what md's
 *     {@code nr_pending} and {@code active_aligned_reads} are. It starts at
 *     <em>zero</em>, has no initial reference and no release callback;
 *     {@code get()}/{@code put()} bracket each in-flight operation, zero
 *     means "idle" and is passed through any number of times. To wait for
 *     idle: stop new work, {@link #switchToAtomicSync()}, then
 *     {@link #awaitZero(Duration)}, then {@link #switchToPercpu()}.
 *     For member removal, {@link #kill()} switches it to atomic mode and
 *     marks it dying, so that {@link #tryGetLive()} fails while plain
 *     get/put still count; {@link #awaitZero(Duration)} then waits for the
 *     operations already in flight, and {@link #resurrect()} makes it live
 *     (and striped) again. How this differs from the kernel's
 *     initial-reference semantics: a kernel percpu_ref always starts at 1
 *     (the initial reference), so an idle one reads 1, not 0, and the only
 *     way to see zero is to drop that reference, which is final (release;
 *     only reinit brings it back). An in-flight counter has no initial
 *     reference, so zero is an ordinary, repeatable state that can be
 *     awaited without killing anything, and there is no release
 *     callback.</li>
 * </ul>
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>{@code get()}, {@code put()}: no lock, no allocation; in striped mode
 *     no write to any word shared with another running thread. Never block.
 *     Where Linux's {@code membarrier(2)} is available (probed once at start
 *     and logged) each thread has a cell of its own, written with plain
 *     stores and no atomic instruction; elsewhere cells are shared by a hash
 *     of the thread id and updated with one atomic add.</li>
 * <li>{@code put()} on the atomic path that takes the count to zero runs the
 *     release callback (references) and wakes an {@link #awaitZero} waiter.
 *     A put in striped mode cannot see zero; a ref that went to zero there
 *     is released by the next switch to atomic mode, which sums the
 *     cells.</li>
 * <li>{@link #isZero()} is exact in atomic mode and always false in striped
 *     mode or during a switch, as {@code percpu_ref_is_zero}.
 *     {@link #count()} is exact in atomic mode.</li>
 * <li>Mode switches, {@code kill}, {@code resurrect} and {@code reinit}
 *     serialise on one per-ref lock. They are synchronous: when
 *     {@code switchToAtomic} returns (and before its callback runs) every
 *     later get and put counts in the atomic word. Confirm callbacks run in
 *     the calling thread, before the call returns, while that lock is held
 *     (they may call back into this ref).</li>
 * <li>After {@link #killAndConfirm}'s callback has run, {@link #tryGetLive()}
 *     fails until {@link #resurrect()} or {@link #reinit()}.</li>
 * <li>Memory ordering: every count change is a volatile read-modify-write
 *     (part of the JMM synchronization order). Everything a thread did
 *     before a {@code put()} happens-before the release callback and before
 *     an {@code isZero()}, {@code count()} or {@code awaitZero()} that
 *     observes the count that put produced.</li>
 * </ul>
 *
 * <p>As in the kernel: {@code put()} without a matching earlier get, or
 * {@code get()} on a released reference, is a bug in the caller and is not
 * detected on the fast path (a negative count is reported by the next
 * switch to atomic mode).
 */
public final class PercpuRef {
    /*
     * Design (the JVM has no RCU grace period; this is how the race between
     * "I saw striped mode" and "the switcher already summed my cell" is
     * closed).
     *
     * Layout. Every mutable hot word lives in one padded long[] (see
     * PaddedWords): MODE (STRIPED or ATOMIC), COUNT (the atomic counter),
     * then `slots` cells, each in its own 128-byte span. The object itself
     * holds only final fields on the hot path, so it is never written while
     * the ref runs. A thread's cell is a hash of its thread id: finding it
     * writes nothing.
     *
     * Values. A cell is either LIVE, holding a small signed count
     * (|v| < 2^61: gets and puts of one reference may land in different
     * cells), or a TOMBSTONE: 2^62 plus garbage. Anything >= 2^61 is a
     * tombstone, so one compare tells them apart. COUNT is
     *   [BIAS = 2^62 while the cells are live] + [DEAD = 2^60 while dying] + x
     * with |x| < 2^59: x is whatever was counted on the atomic path, and the
     * exact count once folded. BIAS keeps COUNT far from zero whenever the
     * cells carry part of the count, so a put on the atomic path never sees
     * a false zero and isZero() is false in striped mode, as the kernel's
     * PERCPU_COUNT_BIAS does. COUNT < 2^61 means "folded": that, not MODE,
     * is what isAtomic() reports. DEAD lives in COUNT (the kernel keeps its
     * DEAD flag in the word its fast path reads, too) so that tryGetLive can
     * test it and increment in one CAS.
     *
     * Invariant (outside a switch):
     *   true count = x + sum(live cells)
     * Tombstones contribute nothing; during a switch the sum in the
     * switcher's hands is added back.
     *
     * get/put. Read MODE (opaque). If STRIPED, getAndAdd on the own cell:
     * the value returned by that same instruction says whether the cell was
     * live (done: counted in the cell) or a tombstone (the add landed on a
     * dead cell and counts for nothing: do the getAndAdd on COUNT instead).
     * If MODE says ATOMIC, getAndAdd on COUNT.
     *
     * Switch to atomic (under switchLock): MODE := ATOMIC, so new callers go
     * straight to COUNT; then getAndSet(cell, TOMBSTONE) on every cell,
     * summing the returned values; then COUNT += sum - BIAS in one
     * getAndAdd, the FOLD. The fold is the switch's linearization point:
     * isAtomic() and isZero() read COUNT only, every get/put before it has
     * landed in a swept cell or the biased COUNT, and after it all cells
     * are tombstones. If the fold makes COUNT zero, the switcher handles
     * zero as a put would.
     *
     * Why no get/put is lost or counted twice: each operation ends in
     * exactly one contribution, its getAndAdd on a live cell or its
     * getAndAdd on COUNT. On one cell, the operation's getAndAdd and the
     * switcher's getAndSet are both atomic, so one comes first in that
     * cell's modification order. If the add comes first, it returned a live
     * value (the operation is done) and the getAndSet returns a value that
     * includes it, which the fold moves into COUNT: counted once. If the
     * getAndSet comes first, the add returns the tombstone, the operation
     * adds to COUNT itself, and its add to the cell is garbage that the
     * fold never sees: counted once. There is no third order. The decision
     * is taken on the value returned by the instruction that did the add,
     * so there is no window between "I saw striped" and "my add landed";
     * that window is what RCU closes in the kernel. MODE is only a hint: a
     * stale STRIPED costs a redirect through the tombstone, a stale ATOMIC
     * adds to COUNT, which is part of the total in both modes. A thread
     * descheduled between its MODE read and its add may land in any later
     * epoch; the rule only looks at the cell as the add finds it, so ABA
     * across several switches is harmless.
     *
     * Switch to percpu (under switchLock): COUNT += BIAS first (the
     * linearization point; from here on COUNT cannot read zero), then
     * setVolatile(cell, 0) on every cell, then MODE := STRIPED. A late add
     * that lands on a cell before its reset was a redirected operation (its
     * garbage is dropped); one that lands after counts in a live cell,
     * which the next fold sums.
     *
     * Zero is only ever seen on COUNT (as 0 or DEAD): by the put whose
     * getAndAdd leaves it there, or by the fold (or kill's add) that does.
     * Each transition to zero has exactly one such observer, in COUNT's
     * modification order. The release callback
     * is additionally guarded by a CAS on `releaseState` (LIVE -> RELEASING,
     * then DONE when it returns), so it runs once per lifetime even if a buggy
     * caller drives the count through zero twice.
     *
     * Lifetimes. reinit() and resurrect() start a new lifetime with one CAS
     * on COUNT from the value they checked (exact zero for reinit) to the
     * revived value: a get or put that lands in between fails the CAS and
     * the check is made again, so no revive "succeeds" over an operation it
     * did not see (a separate check-then-add did). A reference revived from
     * zero must not overtake its own release: the put that reached zero
     * claims the release after its getAndAdd, outside any lock, so a revive
     * in that window would start a lifetime whose zero the late claim then
     * takes (the old callback runs in the new lifetime, the new one is never
     * released). A revive from zero therefore waits, outside the switch lock,
     * until releaseState is DONE; the releasing thread itself (a callback
     * that revives) is let through.
     *
     * Kill and tryGetLive. kill() adds DEAD (and, for a reference, -1 for
     * the initial reference) to COUNT in the fold's own getAndAdd, or in one
     * getAndAdd if already atomic: that add is the kill's linearization
     * point. A tryGetLive that finds its cell live is ordered before the
     * sweep of that cell, hence before the fold, and is counted by it like
     * any get. One that goes to COUNT does compareAndSet(c, c + 1) only on a
     * c without DEAD (and, for a reference, not zero: inc_not_zero). Since
     * DEAD and the count are one word, "not dying" and "incremented" are a
     * single atomic step: a tryGetLive either takes its reference before
     * the kill (and a later awaitZero waits for it) or fails without ever
     * touching the count. A separate dead flag would force either
     * check-then-increment (a tryGetLive could succeed after awaitZero
     * returned; the kernel closes that window with its grace period) or
     * increment-then-check-then-undo (isZero() would see a phantom reference
     * while a failing tryGetLive backs out). resurrect()/reinit() likewise
     * clear DEAD, retake the initial reference and re-add BIAS in one
     * getAndAdd. Only killAndConfirm(callback) is two steps, as in the
     * kernel: DEAD with the fold, the callback, then the initial put (so
     * release never precedes confirmation).
     *
     * Memory ordering. Cell and COUNT updates are volatile RMWs (x86 LOCK
     * XADD/XCHG, full fences). A put's write to a cell synchronizes-with the
     * switcher's getAndSet of that cell, which precedes the fold's write to
     * COUNT, which synchronizes-with any later read of COUNT: hence "before
     * put() happens-before the observer of zero". MODE is read opaque: it
     * only picks a path and correctness never depends on its freshness;
     * opaque still forbids the JIT from hoisting it out of a loop, so a
     * thread spinning on get/put does notice a switch. MODE := STRIPED is a
     * release store only to state the intended order (reset, then publish);
     * the opaque readers do not pair with it and need not.
     *
     * Owned cells (the default where membarrier(2) works; the shared,
     * tombstoned cells above are the fallback, chosen once at start by
     * Membarrier and logged there). The kernel's this_cpu_inc is a plain add
     * because preemption is off and the CPU's own area is written by that CPU
     * only. Here a thread holds a slot (ThreadSlots: one per thread, not a
     * hash) and only it writes its up and down words: in one 128-byte span,
     * the sum of its gets (up) and of its puts (down), and beside them what
     * the last fold read of each (folded up, folded down; written by folds).
     * get/put (addOwned), on the own, L1-resident line plus two reads of MODE
     * (whose striped value is STRIPED_OWNED for owned cells, so the read that
     * picks the path also says which cells; STRIPED below means that value):
     *   P: m = MODE (opaque); if m == ATOMIC: go to COUNT
     *   S: up := up + n, or down := down + n for a put (release; one word)
     *   L: m = MODE (opaque); if m == STRIPED: done, counted in the cell
     *   else settle (below)
     * The fold (switcher, under switchLock, then foldLock):
     *   W: MODE := ATOMIC (volatile);  membarrier(PRIVATE_EXPEDITED)
     *   R: for each cell of a slot ever taken (ThreadSlots.nextUsed): read
     *      down and up (acquire), keep them as folded down and folded up
     * then COUNT += (sum of up - down) - foldedSum - BIAS. The fold waits
     * for nothing. The cells are never reset (their owners alone write
     * them): foldedSum remembers what the last fold took, and the next fold
     * moves only the difference. Switching back to percpu is COUNT += BIAS,
     * then MODE := STRIPED under foldLock.
     *
     * Settle. A section whose L read ATOMIC raced a switch and cannot tell
     * whether R read its S. It takes foldLock: every change of MODE and
     * every fold's reading of the cells happen under it, so there the
     * state stands still. If MODE is striped again, its S stands in the
     * cell like any striped add (counted by the next fold if the last one
     * did not read it). If atomic and the last fold's folded word holds the
     * value S stored, that fold counted it. Otherwise no fold read S (the
     * word is written by this thread only, so the fold read either the
     * value before S or S's): the section stores the old value back and
     * the caller counts on COUNT. Sections of other threads never wait for
     * it, and it waits for a fold's reading of the cells, never for a
     * callback (those run outside foldLock).
     *
     * Why one word, not a busy flag around the add (the version before):
     * the flag's two stores per operation cost about a fifth of a get+put
     * pair, and made the fold wait for every section open at its
     * membarrier. The flag made a racing section invisible to the fold
     * until it finished; now the racing section finds out afterwards, by
     * its second read of MODE, and settles. Gets and puts still move
     * different words, so the up chain and the down chain run side by side
     * through the store buffer, one store-to-load forwarding per pair.
     *
     * Why no add is lost or counted twice. This is Dekker's pattern (S then
     * L against W then R) with an asymmetric fence, the membarrier flavour
     * of userspace RCU. membarrier returns only after every CPU running one
     * of our threads has executed a full barrier (a thread not running has
     * passed one: a context switch is one), and the call itself is a full
     * barrier for the switcher. Take a section whose L read STRIPED. If the
     * barrier on its CPU came before S, then L came after the barrier,
     * which is after W became visible: L would have read ATOMIC. So S came
     * before the barrier and is visible when membarrier returns: R reads
     * S's value (or a later one of this thread), acquire against S's
     * release, and the add is in the fold's sum. A section whose L read
     * ATOMIC settles: counted by the fold, or taken back and counted on
     * COUNT, decided under foldLock against the value the fold read, so
     * exactly one of the two. An operation whose P read ATOMIC counts on
     * COUNT. A section whose L read STRIPED after a switch to atomic and
     * back (ABA) is counted by the fold that read its S or, if none did, by
     * the next: it takes effect in the striped period in which its L ran,
     * inside the call, so a tryGetLive that spans a kill and a resurrect
     * holds a reference of the new lifetime, never of the killed one.
     *
     * What the JMM does not promise, and what supplies it. The JMM gives no
     * order between an opaque store and a later opaque load of another
     * variable (only volatile accesses are in the synchronization order), and
     * it knows nothing of membarrier. Two things stand in for it. The
     * compiler: HotSpot's C2 wraps every VarHandle/Unsafe access with an
     * ordering mode (opaque, acquire, release) in MemBarCPUOrder nodes
     * (C2Access::needs_cpu_membar in barrierSetC2.cpp), which keep memory
     * accesses on both sides where they are; C1 and the interpreter do not
     * reorder them. The hardware: x86-TSO may let L pass S (the store
     * buffer) and nothing else, and ARMv8 may reorder both; that is exactly
     * the reordering the membarrier IPI's full barrier (MFENCE / DMB ISH)
     * closes. What stays on the JMM's side: the release store S and the
     * acquire loads R (or foldLock, for a section that settles) make "before put() happens-before the observer of zero"
     * hold, as the volatile RMWs do for shared cells.
     *
     * Bounds. |cell| < 2^61 and |x| < 2^59: at 10^9 unbalanced operations
     * per second that is 18 years (an owned cell's up and down may wrap: only
     * their difference is used). n in get(n)/put(n) is at most 2^32.
     *
     * Differences from the kernel: no grace period, so switches are
     * synchronous and confirm callbacks run in the caller; the cells are
     * never freed, so switching back to percpu is always possible and
     * ALLOW_REINIT only decides whether a released ref may be resurrected or
     * reinitialised; DEAD is in the count word, not the mode word (above).
     */

    /** Initialisation flags, as {@code PERCPU_REF_INIT_*} and {@code PERCPU_REF_ALLOW_REINIT}. */
    public enum Flag {
        /**
         * Start in atomic mode and stay there (also across {@link #resurrect()})
         * until {@link #switchToPercpu()}; implies {@link #ALLOW_REINIT}, as in the kernel.
         */
        INIT_ATOMIC,
        /**
         * Start dying, in atomic mode, at count zero without having released;
         * {@link #reinit()} to use (it then goes striped unless {@link #INIT_ATOMIC}).
         */
        INIT_DEAD,
        /** Allow {@link #resurrect()} and {@link #reinit()} after the release callback has run. */
        ALLOW_REINIT
    }

    private static final long STRIPED = 0L;
    private static final long ATOMIC = 1L;
    /** MODE of a striped ref with owned cells: the one read that picks the path also says which cells. */
    private static final long STRIPED_OWNED = 2L;

    private static final long BIAS = 1L << 62;
    private static final long TOMBSTONE = 1L << 62;
    /** Cells at or above this are tombstones; COUNT at or above it still carries BIAS. */
    private static final long LIVE_LIMIT = 1L << 61;
    /** Set in COUNT while dying. */
    private static final long DEAD = 1L << 60;
    /** An unbiased COUNT at or above this carries DEAD. */
    private static final long DEAD_LIMIT = 1L << 59;

    private static final long MAX_DELTA = 1L << 32;
    /** Owned cells, offsets in the cell's own span: the sum of its gets and the sum of its puts. */
    private static final int UP = 0;

    private static final int DOWN = 1;
    /**
     * Owned cells: from UP or DOWN to the word beside it that holds what the last fold read of it
     * (written by the folder, under foldLock).
     */
    private static final int FOLDED = 2;

    private static final int MODE = PaddedWords.controlIndex(0);
    private static final int COUNT = PaddedWords.controlIndex(1);
    private static final int CELL_BASE = PaddedWords.cellBase(2);

    private static final VarHandle RELEASE_STATE;
    private static final VarHandle ZERO_WAITER;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            RELEASE_STATE = lookup.findVarHandle(PercpuRef.class, "releaseState", int.class);
            ZERO_WAITER = lookup.findVarHandle(PercpuRef.class, "zeroWaiter", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // Hot path: final fields only.
    private final long[] words;
    private final int slotShift;
    private final int slots;
    /** Owned cells (one writer each, plain stores, membarrier on switch) rather than shared tombstoned ones. */
    private final boolean owned;

    // Cold path.
    private final Consumer<PercpuRef> release;
    private final boolean initialRef;
    private final boolean allowReinit;
    private final boolean atomicOnly;
    private final Object switchLock = new Object();
    /**
     * Owned cells: held around every change of MODE and the fold's reading of the cells, and by a
     * section that raced a switch while it settles (never while a callback runs).
     */
    private final Object foldLock = new Object();
    /** As the kernel's force_atomic: set by switchToAtomic, cleared by switchToPercpu. */
    private volatile boolean forceAtomic;
    /**
     * Where this lifetime's release stands (references only): {@link #LIVE} until the zero's observer
     * claims it, {@link #RELEASING} while the callback runs, {@link #DONE} after it (or for a ref that
     * starts dead). A revive waits for DONE: the callback of one lifetime can never run in the next.
     */
    private volatile int releaseState;
    /** The thread running the release callback, which may itself revive the ref. */
    private volatile Thread releasingThread;

    private static final int LIVE = 0;
    private static final int RELEASING = 1;
    private static final int DONE = 2;
    private volatile Thread zeroWaiter;
    /**
     * Owned cells: the sum of the cells' counts at the last fold (written under foldLock). The
     * cells are never reset (only their owners write them); the next fold moves what they gained
     * since into COUNT.
     */
    private volatile long foldedSum;

    /**
     * How a reference starts: {@code percpu_ref_init}'s flags and ours, named (the two kinds of
     * reference are made by {@link #counted} and {@link #inflight}).
     */
    private record Init(
            Consumer<PercpuRef> release,
            boolean initialRef,
            boolean allowReinit,
            boolean atomicOnly,
            boolean startAtomic,
            boolean forceAtomic,
            boolean startDead,
            int slots,
            boolean owned) {
        /** A counted reference with one initial reference and a release callback ({@code percpu_ref_init}). */
        static Init counted(Consumer<PercpuRef> release, int slots, boolean owned, Flag... flags) {
            boolean atomic = false;
            boolean startDead = false;
            boolean reinit = false;
            for (Flag f : flags) {
                switch (f) {
                    case INIT_ATOMIC -> {
                        atomic = true;
                        reinit = true;
                    }
                    case INIT_DEAD -> {
                        startDead = true;
                        reinit = true;
                    }
                    case ALLOW_REINIT -> reinit = true;
                    default -> throw new AssertionError(f);
                }
            }
            return new Init(release, true, reinit, false, atomic || startDead, atomic, startDead, slots, owned);
        }

        /** An in-flight counter from zero, no release; {@code ATOMIC} never stripes. */
        static Init inflight(CounterMode mode, int slots, boolean owned) {
            boolean atomicOnly = mode == CounterMode.ATOMIC;
            return new Init(
                    null, false, true, atomicOnly, atomicOnly, atomicOnly, false, atomicOnly ? 0 : slots, owned);
        }
    }

    private PercpuRef(Init init) {
        this.release = init.release();
        this.initialRef = init.initialRef();
        this.allowReinit = init.allowReinit();
        this.atomicOnly = init.atomicOnly();
        this.owned = init.owned() && !atomicOnly;
        this.slots = this.owned ? ThreadSlots.CAPACITY : init.slots();
        this.slotShift = atomicOnly ? 0 : PaddedWords.slotShift(this.slots);
        this.words = PaddedWords.allocate(2, this.slots);
        this.forceAtomic = init.forceAtomic(); // kernel: force_atomic = flags & PERCPU_REF_INIT_ATOMIC
        boolean startDead = init.startDead();
        this.releaseState = startDead ? DONE : LIVE;
        long start = (initialRef && !startDead ? 1 : 0) + (startDead ? DEAD : 0);
        int slots = init.slots();
        if (init.startAtomic()) {
            words[MODE] = ATOMIC;
            words[COUNT] = start;
            for (int i = 0; i < slots && !this.owned; i++) {
                words[cell(i)] = TOMBSTONE;
            }
        } else {
            words[MODE] = stripedMode();
            words[COUNT] = BIAS + start;
        }
        // Plain stores suffice: `words` is final, so whoever sees this object sees the array as written here.
    }

    /**
     * A reference with one initial reference and a release callback, as
     * {@code percpu_ref_init}. Starts striped unless {@link Flag#INIT_ATOMIC}
     * or {@link Flag#INIT_DEAD} is given.
     *
     * @param release run exactly once, in the thread that drops the last
     *                reference (or switches the ref to atomic mode and finds it at zero)
     */
    public static PercpuRef create(Consumer<PercpuRef> release, Flag... flags) {
        return create(release, Membarrier.available(), PaddedWords.defaultSlots(), flags);
    }

    /** A reference with shared (tombstoned) cells, {@code slots} of them. */
    static PercpuRef create(Consumer<PercpuRef> release, int slots, Flag... flags) {
        return create(release, false, slots, flags);
    }

    /** A reference with owned cells; needs {@link Membarrier#available()}. */
    static PercpuRef createOwned(Consumer<PercpuRef> release, Flag... flags) {
        requireMembarrier();
        return create(release, true, 2, flags);
    }

    private static PercpuRef create(Consumer<PercpuRef> release, boolean owned, int slots, Flag... flags) {
        Objects.requireNonNull(release, "release");
        return new PercpuRef(Init.counted(release, PaddedWords.checkSlots(slots), owned, flags));
    }

    /**
     * An in-flight counter starting at zero, with no initial reference and no
     * release callback (see the class comment). {@link CounterMode#ATOMIC}
     * gives one exact counter that never stripes; {@link CounterMode#PERCPU}
     * starts striped, in owned cells where {@code membarrier(2)} is available
     * (else shared cells); {@link CounterMode#PERCPU_SHARED} starts striped in
     * shared cells.
     */
    public static PercpuRef inflightCounter(CounterMode mode) {
        boolean owned = Objects.requireNonNull(mode, "mode") == CounterMode.PERCPU && Membarrier.available();
        return inflightCounter(mode, PaddedWords.defaultSlots(), owned);
    }

    /** An in-flight counter; striped ones get {@code slots} shared cells. */
    static PercpuRef inflightCounter(CounterMode mode, int slots) {
        return inflightCounter(mode, slots, false);
    }

    /** A striped in-flight counter with owned cells; needs {@link Membarrier#available()}. */
    static PercpuRef inflightOwned() {
        requireMembarrier();
        return inflightCounter(CounterMode.PERCPU, 2, true);
    }

    private static PercpuRef inflightCounter(CounterMode mode, int slots, boolean owned) {
        boolean atomicOnly = Objects.requireNonNull(mode, "mode") == CounterMode.ATOMIC;
        return new PercpuRef(Init.inflight(mode, atomicOnly ? 0 : PaddedWords.checkSlots(slots), owned));
    }

    private static void requireMembarrier() {
        if (!Membarrier.available()) {
            throw new IllegalStateException("owned cells need membarrier(2): " + Membarrier.unavailableReason());
        }
    }

    /** True if this ref counts in owned cells (plain stores; membarrier on a switch). */
    boolean ownedCells() {
        return owned;
    }

    // ---------------------------------------------------------------- hot path

    /** Takes one reference (counts one in-flight operation). */
    public void get() {
        final long[] w = words;
        if (!countedInCell(w, 1L)) {
            long unused = (long) WORD.getAndAdd(w, COUNT, 1L);
        }
    }

    /** Drops one reference; may run the release callback if it was the last one. */
    public void put() {
        final long[] w = words;
        if (!countedInCell(w, -1L) && (((long) WORD.getAndAdd(w, COUNT, -1L) - 1L) & ~DEAD) == 0L) {
            onZero();
        }
    }

    /** Takes {@code n} references at once, {@code 0 <= n <= 2^32}. */
    public void get(long n) {
        checkDelta(n);
        final long[] w = words;
        if (!countedInCell(w, n)) {
            long unused = (long) WORD.getAndAdd(w, COUNT, n);
        }
    }

    /** Drops {@code n} references at once, {@code 0 <= n <= 2^32}. */
    public void put(long n) {
        checkDelta(n);
        final long[] w = words;
        if (!countedInCell(w, -n) && n != 0 && (((long) WORD.getAndAdd(w, COUNT, -n) - n) & ~DEAD) == 0L) {
            onZero();
        }
    }

    /**
     * Takes a reference unless the count is zero in atomic mode (a released
     * reference), as {@code percpu_ref_tryget}. Always succeeds in striped
     * mode and, for an in-flight counter, always.
     */
    public boolean tryGet() {
        final long[] w = words;
        return countedInCell(w, 1L) || tryGetAtomic(w, false);
    }

    /**
     * Takes a reference unless the ref is dying ({@link #kill()}) or, for a
     * reference, released, as {@code percpu_ref_tryget_live}. After
     * {@link #killAndConfirm}'s callback it always fails.
     */
    public boolean tryGetLive() {
        final long[] w = words;
        // Counted in a cell: ordered before any kill's fold (which waits for or sweeps that cell), so counted by it.
        return countedInCell(w, 1L) || tryGetAtomic(w, true);
    }

    /**
     * The striped path: adds {@code n} to the calling thread's cell and returns true, or returns
     * false (the ref is atomic, or the thread has no cell) and the caller counts on COUNT.
     */
    private boolean countedInCell(long[] w, long n) {
        return countedInCell(w, n, null, null);
    }

    /** {@link #countedInCell(long[], long)}; the pauses: see {@link #addOwned}. */
    private boolean countedInCell(long[] w, long n, Runnable beforeStore, Runnable afterStore) {
        long m = (long) WORD.getOpaque(w, MODE);
        if (m == STRIPED_OWNED) {
            return addOwned(w, n, beforeStore, afterStore);
        }
        return m == STRIPED && (long) WORD.getAndAdd(w, cellIndex(), n) < LIVE_LIMIT;
    }

    /** MODE while striped: {@link #STRIPED_OWNED} for owned cells, else {@link #STRIPED}. */
    private long stripedMode() {
        return owned ? STRIPED_OWNED : STRIPED;
    }

    /**
     * Owned cells (see "Owned cells" above): the caller read MODE (P); store the own up or down
     * word, read MODE again; if it still says striped the add is counted, else settle it. Loads and
     * stores only: no LOCK prefix, no fence, and one word written. {@code beforeStore} and
     * {@code afterStore} (tests only; null on the I/O path, folded away by the JIT) run where a
     * thread descheduled at the worst moments stands: after the first read of MODE, before the
     * store (a fold then misses the store), and after the store, before the second read of MODE
     * (a fold then counts it, and the section learns so only by settling).
     */
    private boolean addOwned(long[] w, long n, Runnable beforeStore, Runnable afterStore) {
        int slot = ThreadSlots.slot();
        if (slot < 0) {
            return false;
        }
        int word = cell(slot) + (n >= 0 ? UP : DOWN); // get() and put() pass a constant: no branch left
        // Plain: only this thread writes the word, and it wrote the value it loads.
        long before = (long) WORD.get(w, word);
        if (beforeStore != null) {
            beforeStore.run();
        }
        long after = before + (n >= 0 ? n : -n);
        WORD.setRelease(w, word, after); // S: a fold that acquires this value sees what came before it
        if (afterStore != null) {
            afterStore.run();
        }
        // L. StoreLoad between S and L: a compiler barrier only (see above); the switcher's
        // membarrier supplies the hardware fence.
        if ((long) WORD.getOpaque(w, MODE) == STRIPED_OWNED) {
            return true;
        }
        return settleOwned(w, word, before, after);
    }

    /**
     * A section whose second read of MODE found a switch under way: it cannot tell from here
     * whether the fold read its store. Under foldLock, with no switch in progress, it can: if
     * the ref is striped again, the store stands in the cell (counted by the next fold if the
     * last did not read it); if atomic and the last fold read {@code after}, the add is in COUNT;
     * otherwise no fold read it, so the store is taken back and the caller counts on COUNT.
     */
    private boolean settleOwned(long[] w, int word, long before, long after) {
        synchronized (foldLock) {
            if ((long) WORD.getVolatile(w, MODE) == STRIPED_OWNED || (long) WORD.get(w, word + FOLDED) == after) {
                return true;
            }
            WORD.setRelease(w, word, before);
            return false;
        }
    }

    /** For tests: {@link #tryGetLive()} whose owned-cell section runs the pauses (see {@link #addOwned}). */
    boolean tryGetLivePausing(Runnable beforeStore, Runnable afterStore) {
        final long[] w = words;
        return countedInCell(w, 1L, beforeStore, afterStore) || tryGetAtomic(w, true);
    }

    /** For tests: {@link #put()} whose owned-cell section runs the pauses (see {@link #addOwned}). */
    void putPausing(Runnable beforeStore, Runnable afterStore) {
        final long[] w = words;
        if (!countedInCell(w, -1L, beforeStore, afterStore)
                && (((long) WORD.getAndAdd(w, COUNT, -1L) - 1L) & ~DEAD) == 0L) {
            onZero();
        }
    }

    /** The atomic path of tryGet/tryGetLive: one CAS decides and increments (see "Kill and tryGetLive"). */
    private boolean tryGetAtomic(long[] w, boolean live) {
        if (!initialRef && !live) {
            long unused = (long) WORD.getAndAdd(w, COUNT, 1L);
            return true;
        }
        long c = (long) WORD.getVolatile(w, COUNT);
        while (!(live && isDeadWord(c)) && !(initialRef && (c & ~DEAD) == 0L)) { // a released reference stays released
            long seen = (long) WORD.compareAndExchange(w, COUNT, c, c + 1);
            if (seen == c) {
                return true;
            }
            c = seen;
        }
        return false;
    }

    private static boolean isDeadWord(long c) {
        return (c >= LIVE_LIMIT ? c - BIAS : c) >= DEAD_LIMIT;
    }

    private int cellIndex() {
        return PaddedWords.cellIndex(CELL_BASE, slotShift);
    }

    private static void checkDelta(long n) {
        if (n < 0 || n > MAX_DELTA) {
            throw new IllegalArgumentException("n must be in [0, 2^32], was " + n);
        }
    }

    /** The count just became exactly zero on COUNT; called by exactly one thread per transition. */
    private void onZero() {
        if (release != null && RELEASE_STATE.compareAndSet(this, LIVE, RELEASING)) {
            releasingThread = Thread.currentThread();
            try {
                release.accept(this);
            } finally {
                releasingThread = null;
                // Unless the callback revived the ref (a new lifetime, LIVE again), this one is over.
                RELEASE_STATE.compareAndSet(this, RELEASING, DONE);
            }
        }
        Thread waiter = zeroWaiter; // read after our write of COUNT: Dekker with awaitZero's register-then-check
        if (waiter != null) {
            LockSupport.unpark(waiter);
        }
    }

    // ------------------------------------------------------------ mode switches

    /**
     * Switches to atomic mode and keeps it there until {@link #switchToPercpu()}
     * (as {@code percpu_ref_switch_to_atomic}); then runs {@code confirmSwitch}
     * (may be null) in this thread. Synchronous: waits for a concurrent switch,
     * never for readers.
     */
    public void switchToAtomic(Consumer<PercpuRef> confirmSwitch) {
        synchronized (switchLock) {
            forceAtomic = true;
            foldLocked(0);
            if (confirmSwitch != null) {
                confirmSwitch.accept(this);
            }
        }
    }

    /** {@link #switchToAtomic} without a callback: on return the count is exact and {@link #isZero()} meaningful. */
    public void switchToAtomicSync() {
        switchToAtomic(null);
    }

    /**
     * Lets the ref go back to striped mode, as {@code percpu_ref_switch_to_percpu}.
     * It stays atomic while dying or released, and always for a
     * {@link CounterMode#ATOMIC} counter.
     */
    public void switchToPercpu() {
        synchronized (switchLock) {
            forceAtomic = false;
            unfoldLocked(0);
        }
    }

    /**
     * Switches to atomic mode, marks the ref dying and drops the initial
     * reference (references only), as {@code percpu_ref_kill}. The last two
     * happen in one atomic step, so the release callback may run in this
     * thread before this returns.
     *
     * @throws IllegalStateException if the ref is already dying
     */
    public void kill() {
        killAndConfirm(null);
    }

    /**
     * {@link #kill()}, running {@code confirmKill} (may be null) once the ref
     * is atomic and dying as seen by every thread: from then on
     * {@link #tryGetLive()} fails. With a callback, the initial reference
     * (references only) is dropped after it, as in the kernel, so the release
     * callback never runs before the confirmation.
     *
     * @throws IllegalStateException if the ref is already dying
     */
    public void killAndConfirm(Consumer<PercpuRef> confirmKill) {
        boolean dropLater = initialRef && confirmKill != null;
        synchronized (switchLock) {
            if (isDying()) {
                throw new IllegalStateException("kill() called more than once on " + this);
            }
            // DEAD goes in with the fold, in one atomic add: before it every tryGetLive succeeds (and is
            // counted), after it every tryGetLive fails. The initial reference goes with it unless a
            // confirmation has to run first.
            foldLocked(DEAD - (initialRef && !dropLater ? 1 : 0));
            if (confirmKill != null) {
                confirmKill.accept(this);
            }
        }
        if (dropLater) {
            put();
        }
    }

    /**
     * Undoes {@link #kill()}: clears dying, takes a new initial reference
     * (references only) and returns to striped mode unless forced atomic, as
     * {@code percpu_ref_resurrect}.
     *
     * @throws IllegalStateException if not dying, or released without {@link Flag#ALLOW_REINIT}
     */
    public void resurrect() {
        revive(false);
    }

    /**
     * Re-initialises a ref whose count is exactly zero in atomic mode to its
     * just-created state (count 1 for a reference, 0 for an in-flight
     * counter; live; striped unless forced atomic), as {@code percpu_ref_reinit}.
     * The zero check and the revive are one compare-and-set on the count, so a
     * get that races a reinit makes it fail rather than vanish; a reference
     * whose release callback is still running (in the thread that dropped the
     * last reference) is revived only once the callback has returned.
     *
     * @throws IllegalStateException if the count is not zero, or released without {@link Flag#ALLOW_REINIT}
     */
    public void reinit() {
        revive(true);
    }

    /** Revives under the switch lock; waits for a running release callback outside it (it may call back in). */
    private void revive(boolean fromZeroOnly) {
        for (; ; ) {
            synchronized (switchLock) {
                if (reviveLocked(fromZeroOnly)) {
                    return;
                }
            }
            awaitRelease();
        }
    }

    /**
     * Starts a new lifetime: from exact zero (reinit; resurrect of a dying ref that reached zero) or
     * from a dying count above zero (resurrect). One CAS on COUNT takes the ref from the state it was
     * checked in to the revived one: clears DEAD, takes the initial reference and, unless the ref must
     * stay atomic, re-biases for striped mode. If the count moved in between (a get, a put), the check
     * is made again on the new value. False when a release callback of the lifetime that ended has
     * still to finish: the caller waits for it without the lock and tries again.
     */
    private boolean reviveLocked(boolean fromZeroOnly) {
        final long[] w = words;
        for (; ; ) {
            long c = (long) WORD.getVolatile(w, COUNT);
            boolean zero = c < LIVE_LIMIT && (c & ~DEAD) == 0L;
            if (fromZeroOnly ? !zero : !isDeadWord(c)) {
                throw new IllegalStateException((fromZeroOnly
                                ? "reinit() needs count zero in atomic mode: "
                                : "resurrect() needs a dying ref: ")
                        + this);
            }
            if (zero && release != null && releaseState != DONE && releasingThread != Thread.currentThread()) {
                // The put that reached zero has not finished its release yet (it runs in that thread,
                // outside this lock): wait for it, so its callback stays in the lifetime that ended.
                return false;
            }
            if (zero && releaseState != LIVE && !allowReinit) {
                throw new IllegalStateException("released ref created without ALLOW_REINIT: " + this);
            }
            boolean striped = !(atomicOnly || forceAtomic);
            long next = (isDeadWord(c) ? c - DEAD : c) + (initialRef ? 1 : 0) + (striped ? BIAS : 0);
            int before = releaseState;
            if (zero) {
                releaseState = LIVE; // before the CAS: a put may end the new lifetime at once
            }
            if ((long) WORD.compareAndExchange(w, COUNT, c, next) == c) {
                if (striped) {
                    goStriped(w);
                }
                return true;
            }
            if (zero) {
                releaseState = before;
            }
        }
    }

    /**
     * Spins, then yields, then parks briefly while the count is zero and the release of the lifetime
     * that reached it has not finished (not yet claimed, or its callback running).
     */
    private void awaitRelease() {
        for (int spins = 0; ; spins++) {
            long c = (long) WORD.getVolatile(words, COUNT);
            if (releaseState == DONE || c >= LIVE_LIMIT || (c & ~DEAD) != 0L) {
                return; // released, or revived meanwhile (by the callback): the caller looks again
            }
            Backoff.idle(spins, this);
        }
    }

    /**
     * Switches to atomic mode if striped, adding {@code extra} to COUNT in the
     * same atomic step as the fold (or alone, if already atomic): that step is
     * where the switch, and a kill, take effect.
     */
    private void foldLocked(long extra) {
        long now;
        synchronized (foldLock) {
            now = foldAdding(extra);
        }
        if (now == Long.MIN_VALUE) {
            return;
        }
        if ((now & ~DEAD) == 0L) {
            onZero();
        } else if (valueOf(now) < 0) {
            throw new IllegalStateException(
                    "count is " + valueOf(now) + " after switching to atomic: put() without get()");
        }
    }

    /** {@link #foldLocked}'s work under foldLock: COUNT after the add, or MIN_VALUE if nothing was added. */
    private long foldAdding(long extra) {
        final long[] w = words;
        long delta = extra;
        if ((long) WORD.getVolatile(w, MODE) != ATOMIC) {
            WORD.setVolatile(w, MODE, ATOMIC); // new callers go straight to COUNT
            if (owned) {
                Membarrier.barrier(); // from here every section's second read of MODE sees ATOMIC
                long sum = sumOwnedCells(w);
                delta += sum - foldedSum - BIAS;
                foldedSum = sum;
            } else {
                long sum = 0;
                for (int i = 0; i < slots; i++) {
                    sum += (long) WORD.getAndSet(w, cell(i), TOMBSTONE);
                }
                delta += sum - BIAS;
            }
        } else if (extra == 0) {
            return Long.MIN_VALUE;
        }
        return (long) WORD.getAndAdd(w, COUNT, delta) + delta;
    }

    /**
     * Owned cells, after MODE := ATOMIC and the membarrier: the sum of every cell's count (up -
     * down), each word's value kept beside it for a section that raced this fold to settle by
     * ({@link #settleOwned}). Nothing waits: a section still between its two reads of MODE will
     * read ATOMIC and settle once this fold has let go of foldLock. The acquire loads pair with
     * the owners' release stores: what a section did before its add is visible here.
     */
    private long sumOwnedCells(long[] w) {
        long sum = 0;
        for (int s = ThreadSlots.nextUsed(0); s >= 0; s = ThreadSlots.nextUsed(s + 1)) {
            int c = cell(s);
            long down = (long) WORD.getAcquire(w, c + DOWN);
            long up = (long) WORD.getAcquire(w, c + UP);
            WORD.setOpaque(w, c + UP + FOLDED, up);
            WORD.setOpaque(w, c + DOWN + FOLDED, down);
            sum += up - down;
        }
        return sum;
    }

    /**
     * An owned cell's count: its gets minus its puts (two's complement: right even once they wrap).
     * Down first: a put read there comes after its get, which the later load of up then includes,
     * so a moving snapshot never shows a cell below what it held.
     */
    private static long ownedCount(long[] w, int c) {
        long down = (long) WORD.getAcquire(w, c + DOWN);
        return (long) WORD.getAcquire(w, c + UP) - down;
    }

    /**
     * Adds {@code extra} to the folded COUNT and, unless the ref must stay
     * atomic, switches to striped mode in the same atomic add (re-biasing).
     */
    private void unfoldLocked(long extra) {
        final long[] w = words;
        boolean stay = atomicOnly
                || forceAtomic
                || releaseState != LIVE
                || (long) WORD.getVolatile(w, MODE) != ATOMIC
                || isDeadWord((long) WORD.getVolatile(w, COUNT) + extra);
        if (stay) {
            if (extra != 0) {
                long unused = (long) WORD.getAndAdd(w, COUNT, extra);
            }
            return;
        }
        long unused = (long) WORD.getAndAdd(w, COUNT, BIAS + extra); // first: COUNT can no longer read zero
        goStriped(w);
    }

    /** After COUNT took BIAS: shared cells reset, then MODE := striped, under foldLock (see settleOwned). */
    private void goStriped(long[] w) {
        synchronized (foldLock) {
            resetSharedCells(w);
            WORD.setRelease(w, MODE, stripedMode());
        }
    }

    /**
     * Shared cells, going striped: tombstones back to live zeros (drops the garbage of redirected
     * adds; later adds count here). Owned cells are never written by a switcher: their counts at
     * the last fold are in foldedSum.
     */
    private void resetSharedCells(long[] w) {
        for (int i = 0; i < slots && !owned; i++) {
            WORD.setVolatile(w, cell(i), 0L);
        }
    }

    /** Owned cells' counts as they stand (a moving snapshot; no wait for open sections). */
    private long sumOwnedCellsNow(long[] w) {
        long sum = 0;
        for (int s = ThreadSlots.nextUsed(0); s >= 0; s = ThreadSlots.nextUsed(s + 1)) {
            sum += ownedCount(w, cell(s));
        }
        return sum;
    }

    /** x of an unbiased COUNT: the count without DEAD. */
    private static long valueOf(long unbiased) {
        return unbiased >= DEAD_LIMIT ? unbiased - DEAD : unbiased;
    }

    private static int cell(int i) {
        return CELL_BASE + (i << PaddedWords.SPAN_SHIFT);
    }

    // ------------------------------------------------------------------ queries

    /**
     * True in atomic mode: from the moment a switch to atomic has folded the
     * cells (so the count is exact) until a switch to percpu starts.
     */
    public boolean isAtomic() {
        return (long) WORD.getVolatile(words, COUNT) < LIVE_LIMIT;
    }

    /** True once killed, until resurrected or reinitialised, as {@code percpu_ref_is_dying}. */
    public boolean isDying() {
        return isDeadWord((long) WORD.getVolatile(words, COUNT));
    }

    /** Exact zero test in atomic mode; false in striped mode and during a switch. */
    public boolean isZero() {
        return ((long) WORD.getVolatile(words, COUNT) & ~DEAD) == 0L;
    }

    /**
     * The count: exact in atomic mode; in striped mode a moving snapshot
     * (exact only if no get/put or switch runs meanwhile), like
     * {@code LongAdder.sum()}.
     */
    public long count() {
        final long[] w = words;
        long c = (long) WORD.getVolatile(w, COUNT);
        if (c < LIVE_LIMIT) {
            return valueOf(c);
        }
        long sum = valueOf(c - BIAS);
        if (owned) {
            return sum - foldedSum + sumOwnedCellsNow(w);
        }
        for (int i = 0; i < slots; i++) {
            long v = (long) WORD.getVolatile(w, cell(i));
            if (v < LIVE_LIMIT) {
                sum += v;
            }
        }
        return sum;
    }

    /** For tests: the exact count if atomic, else -1, decided on one read of COUNT (linearizable). */
    long exactCountOrMinusOne() {
        long c = (long) WORD.getVolatile(words, COUNT);
        return c < LIVE_LIMIT ? valueOf(c) : -1;
    }

    /**
     * Waits until the count is exactly zero, for quiesce: call after
     * {@link #switchToAtomicSync()} or {@link #kill()}, once new work is
     * stopped (an operation that starts after this returns is not waited
     * for). Wakes on the put that reaches zero; other waiters than the first
     * poll with a backoff of at most 1 ms.
     *
     * @return true if the count was zero, false on timeout (or if another
     *         thread switched the ref back to striped mode meanwhile)
     * @throws IllegalStateException if the ref is in striped mode
     * @throws InterruptedException  if interrupted while waiting
     */
    public boolean awaitZero(Duration timeout) throws InterruptedException {
        long c = (long) WORD.getVolatile(words, COUNT); // one read decides: exact zero, striped, or wait
        if ((c & ~DEAD) == 0L) {
            return true;
        }
        if (c >= LIVE_LIMIT) {
            throw new IllegalStateException("awaitZero needs atomic mode: call switchToAtomicSync() or kill() first");
        }
        final long deadline = System.nanoTime() + timeout.toNanos();
        final Thread me = Thread.currentThread();
        final boolean registered = ZERO_WAITER.compareAndSet(this, null, me);
        long backoff = 1_000;
        try {
            for (int spins = 0; ; spins++) {
                if (isZero()) { // read after registering: pairs with onZero's read of zeroWaiter
                    return true;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                if (spins < 100) {
                    Thread.onSpinWait();
                } else if (registered) {
                    LockSupport.parkNanos(this, left);
                } else {
                    LockSupport.parkNanos(this, Math.min(left, backoff));
                    backoff = Math.min(backoff * 2, 1_000_000);
                }
            }
        } finally {
            if (registered) {
                ZERO_WAITER.compareAndSet(this, me, null);
            }
        }
    }

    @Override
    public String toString() {
        return "PercpuRef[" + (initialRef ? "ref" : "inflight")
                + (atomicOnly ? ", atomic-only" : owned ? ", owned" : "")
                + ", " + (isAtomic() ? "atomic" : "striped") + (isDying() ? ", dying" : "")
                + (releaseState != LIVE ? ", released" : "") + ", count~" + count() + "]";
    }
}
