package org.raidfive.counter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * A few statistics counters (at most 16) that many threads add to and one reader sums now and then:
 * I/O counts and bytes for {@code raid stat}. Each thread adds into cells of its own (found through
 * a {@link ThreadLocal}, registered on its first add), written only by that thread: an add is a
 * plain load and an opaque store, no atomic read-modify-write and no LOCK prefix, to a cache line no
 * other thread writes.
 *
 * <p>Memory ordering. A cell has one writer, so no add is lost; its stores are opaque, so a reader's
 * opaque load sees a whole value, one the owner stored, and (coherence) never one older than a
 * value it saw before: each cell, and so the sum, only grows between two reads. The sum is a moving
 * snapshot, exact once the adders are quiet. A thread that has ended is folded into the retired
 * totals by the reader: its termination synchronizes-with the reader's {@link Thread#isAlive()}
 * returning false (JLS 17.4.4), so the fold sees every add it made, and its cells are dropped.
 */
public final class ThreadStats {
    /** Counters per thread. */
    public static final int MAX_WIDTH = 16;
    /** The cells sit between 16 longs of padding on each side (128 bytes: the adjacent-line prefetcher's pair). */
    private static final int PAD = 16;

    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);

    private final int width;
    private final ThreadLocal<long[]> mine = ThreadLocal.withInitial(this::register);
    /** Registered threads and their cells; under this object's lock. */
    private final List<Thread> owners = new ArrayList<>();

    private final List<long[]> cells = new ArrayList<>();
    /** What threads that ended had counted; under this object's lock. */
    private final long[] retired;

    /** {@code width} counters, indexed 0 .. width-1. */
    public ThreadStats(int width) {
        if (width < 1 || width > MAX_WIDTH) {
            throw new IllegalArgumentException("width must be 1.." + MAX_WIDTH + ", was " + width);
        }
        this.width = width;
        this.retired = new long[width];
    }

    private synchronized long[] register() {
        long[] c = new long[PAD + MAX_WIDTH + PAD];
        owners.add(Thread.currentThread());
        cells.add(c);
        return c;
    }

    /** The calling thread's cells, to pass to {@link #add(long[], int, long)} for several adds in a row. */
    public long[] mine() {
        return mine.get();
    }

    /** Adds {@code n} to counter {@code counter} in {@code own}, the calling thread's cells from {@link #mine()}. */
    public static void add(long[] own, int counter, long n) {
        int i = PAD + counter;
        CELL.setOpaque(own, i, (long) CELL.getOpaque(own, i) + n); // one writer: no lost update
    }

    /** Adds {@code n} to counter {@code counter}. */
    public void add(int counter, long n) {
        add(mine(), counter, n);
    }

    /** The sum of counter {@code counter} over every thread, those that have ended included. */
    public synchronized long sum(int counter) {
        if (counter < 0 || counter >= width) {
            throw new IndexOutOfBoundsException("counter " + counter + " of " + width);
        }
        long sum = 0;
        for (int t = owners.size() - 1; t >= 0; t--) {
            long[] c = cells.get(t);
            if (!owners.get(t).isAlive()) {
                for (int k = 0; k < width; k++) {
                    retired[k] += (long) CELL.getOpaque(c, PAD + k);
                }
                owners.remove(t);
                cells.remove(t);
                continue;
            }
            sum += (long) CELL.getOpaque(c, PAD + counter);
        }
        return sum + retired[counter];
    }

    /** The number of counters. */
    public int width() {
        return width;
    }

    /** Threads whose cells are registered now (ended ones are dropped by the next {@link #sum}). */
    public synchronized int threads() {
        return owners.size();
    }
}
