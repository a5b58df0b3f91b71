package org.raidfive.counter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One slot number per thread, shared by every counter with owned cells: slot {@code s} is cell
 * {@code s} of each {@link PercpuRef} and {@link PercpuRwSemaphore} that uses them, and only the
 * thread that holds the slot ever writes that cell (the JVM's stand-in for a CPU number: per-CPU
 * data without the kernel's preemption control).
 *
 * <p>Finding the slot writes nothing: the thread id's Fibonacci hash names a home slot, and a
 * thread that holds it finds itself there (one load and a reference compare, in a table that is
 * written only when a thread registers). A thread whose home slot was taken holds another one, which it finds through
 * a {@link ThreadLocal}. A thread registers on its first use: its home slot if free, else the first
 * free slot after it, else one whose owner has ended; a thread that finds none (more live threads
 * than {@link #CAPACITY}) gets {@code -1} and is counted on the counter's shared word instead
 * (correct, only slower), trying again after {@link #RETRY} more uses.
 *
 * <p>Handing a slot on. A slot whose owner has ended goes to the next thread that needs one, with
 * whatever the old owner left in the cells: counts are sums, so the new owner adds to them. The
 * taker saw {@link Thread#isAlive()} return false, which synchronizes-with the owner's end (JLS
 * 17.4.4): every store the old owner made to its cells happens-before the new owner's first load
 * of them, so a cell still has a single writer at any time.
 */
final class ThreadSlots {
    /**
     * Slots: the next power of two at or above 8 x CPUs, at least 512 (the member I/O pool alone
     * grows to 256 threads), at most 4096. Each counter with owned cells has one 128-byte cell per
     * slot (64 KiB at 512); switchers read only the slots ever taken ({@link #nextUsed}).
     */
    static final int CAPACITY = capacity(Runtime.getRuntime().availableProcessors());
    /** Uses between two registration attempts of a thread that found no slot. */
    static final int RETRY = 4096;

    private static final long PHI = 0x9E3779B97F4A7C15L;
    private static final int SHIFT = 64 - Integer.numberOfTrailingZeros(CAPACITY);
    private static final VarHandle OWNER = MethodHandles.arrayElementVarHandle(Thread[].class);

    /** The thread holding each slot, null when free. Written under the class lock. */
    private static final Thread[] OWNERS = new Thread[CAPACITY];
    /** Bit s set once slot s has been taken (never cleared: its cells may hold counts). */
    private static final AtomicLongArray USED = new AtomicLongArray(CAPACITY / 64);
    /** Words of {@link #usedWord}. */
    private static final int USED_WORDS = CAPACITY / 64;
    /** A thread away from its home slot: {slot, uses left before retrying when slot is -1}. */
    private static final ThreadLocal<int[]> AWAY = ThreadLocal.withInitial(() -> new int[] {-1, 0});

    private ThreadSlots() {}

    static int capacity(int cpus) {
        int wanted = Math.max(512, 8 * cpus);
        return Math.min(4096, Integer.highestOneBit(wanted - 1) << 1);
    }

    /** The calling thread's slot, registering it on first use; -1 if there is none for it. */
    static int slot() {
        Thread me = Thread.currentThread();
        int home = (int) ((me.getId() * PHI) >>> SHIFT);
        // A plain load: only this thread ever stores itself, so finding itself means it registered
        // (its own earlier store); another thread replaces it only after it has ended.
        if (OWNERS[home] == me) {
            return home;
        }
        return slotAway(me, home);
    }

    private static int slotAway(Thread me, int home) {
        int[] away = AWAY.get();
        int s = away[0];
        if (s >= 0 && OWNER.getOpaque(OWNERS, s) == me) {
            return s;
        }
        if (away[1] > 0) {
            away[1]--;
            return -1;
        }
        s = register(me, home);
        away[0] = s;
        away[1] = s < 0 ? RETRY : 0;
        return s;
    }

    private static synchronized int register(Thread me, int home) {
        for (int k = 0; k < CAPACITY; k++) {
            int j = (home + k) & (CAPACITY - 1);
            if (OWNERS[j] == null) {
                return take(j, me);
            }
        }
        for (int k = 0; k < CAPACITY; k++) {
            int j = (home + k) & (CAPACITY - 1);
            if (!OWNERS[j].isAlive()) { // synchronizes-with its end: its cells are ours to continue
                return take(j, me);
            }
        }
        return -1;
    }

    private static int take(int j, Thread me) {
        // The used bit first (volatile): a thread's sections come after it in program order, so a
        // switcher that could miss one of its striped adds (see PercpuRef) cannot miss the bit.
        USED.set(j >> 6, USED.get(j >> 6) | 1L << (j & 63));
        OWNER.setVolatile(OWNERS, j, me);
        return j;
    }

    /**
     * Bits 64k .. 64k+63 of the slots ever taken: what a switcher sums, instead of every slot.
     * Read after the switcher's membarrier, it includes every thread that may have counted in a
     * cell (that thread set its bit before its first section).
     */
    private static long usedWord(int k) {
        return USED.get(k);
    }

    /**
     * The first slot at or after {@code from} that was ever taken, or -1: what a switcher visits,
     * {@code for (int s = nextUsed(0); s >= 0; s = nextUsed(s + 1))}. Read after the switcher's
     * membarrier it visits every thread that may have counted in a cell (see {@link #usedWord}).
     */
    static int nextUsed(int from) {
        for (int k = from >> 6; k < USED_WORDS; k++) {
            long used = usedWord(k) & (k == from >> 6 ? -1L << (from & 63) : -1L);
            if (used != 0L) {
                return (k << 6) + Long.numberOfTrailingZeros(used);
            }
        }
        return -1;
    }

    /** Slots held now by threads that have not ended (for tests and diagnostics). */
    static synchronized int liveOwners() {
        int n = 0;
        for (Thread t : OWNERS) {
            if (t != null && t.isAlive()) {
                n++;
            }
        }
        return n;
    }
}
