package org.raidfive.counter;

import static org.raidfive.counter.PaddedWords.WORD;

/**
 * A few statistics counters (at most 16) that many threads add to and one reader sums now and then:
 * I/O counts and bytes for {@code raid stat}. Each thread adds into its own 128-byte span of the
 * cells (the Fibonacci hash of its id, as {@link PercpuRef}'s cells), where all of its counters
 * sit together, so an I/O that bumps three counters writes one cache line that no other thread
 * writes. The adds are atomic (two threads that hash to one span stay exact); the sum is a moving
 * snapshot, exact once the adders are quiet.
 */
public final class StripedStats {
    /** Counters per span: one span is 16 longs. */
    public static final int MAX_WIDTH = 1 << PaddedWords.SPAN_SHIFT;
    private static final int CELL_BASE = PaddedWords.cellBase(0);

    private final long[] words;
    private final int slots;
    private final int slotShift;
    private final int width;

    /** {@code width} counters, indexed 0 .. width-1. */
    public StripedStats(int width) {
        if (width < 1 || width > MAX_WIDTH) {
            throw new IllegalArgumentException("width must be 1.." + MAX_WIDTH + ", was " + width);
        }
        this.width = width;
        this.slots = PaddedWords.defaultSlots();
        this.slotShift = PaddedWords.slotShift(slots);
        this.words = PaddedWords.allocate(0, slots);
    }

    /** The calling thread's span, to pass to {@link #add(int, int, long)} for several adds in a row. */
    public int span() {
        return PaddedWords.cellIndex(CELL_BASE, slotShift);
    }

    /** Adds {@code n} to counter {@code counter} in the span {@link #span()} returned to this thread. */
    public void add(int span, int counter, long n) {
        long unused = (long) WORD.getAndAdd(words, span + counter, n);
    }

    /** Adds {@code n} to counter {@code counter}. */
    public void add(int counter, long n) {
        add(span(), counter, n);
    }

    /** The sum of counter {@code counter} over every span. */
    public long sum(int counter) {
        if (counter < 0 || counter >= width) {
            throw new IndexOutOfBoundsException("counter " + counter + " of " + width);
        }
        long sum = 0;
        for (int i = 0; i < slots; i++) {
            sum += (long) WORD.getVolatile(words, CELL_BASE + (i << PaddedWords.SPAN_SHIFT) + counter);
        }
        return sum;
    }

    /** The number of counters. */
    public int width() {
        return width;
    }
}
