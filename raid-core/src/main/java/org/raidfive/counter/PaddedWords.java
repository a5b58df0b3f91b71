package org.raidfive.counter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Layout of the one {@code long[]} that holds every mutable hot word of a
 * {@link PercpuRef} or {@link PercpuRwSemaphore}: a few control words, then
 * the striped cells, each word alone in its own 128-byte span.
 *
 * <pre>
 *   index:  0 .. 15      16         32        ...   base        base+16  ...  end
 *           [lead pad ] [control 0] [control 1] ... [cell 0]    [cell 1] ... [trail pad]
 * </pre>
 *
 * <p>128 bytes (16 longs) rather than 64 because Intel's adjacent-line
 * prefetcher pulls cache lines in pairs. The lead span keeps control word 0
 * away from the array header and whatever object precedes the array; the
 * trail span does the same for the last cell. Array elements are never
 * reordered by the JVM, unlike {@code long} padding fields (JDK 15+), and
 * {@code @Contended} is ignored outside the JDK.
 *
 * <p>A thread finds its cell without writing anything shared: a Fibonacci
 * hash of its thread id (the top bits of {@code id * 2^64/phi}). Consecutive
 * ids, the common case for thread pools, land at least a quarter of the
 * table apart, so two threads created one after the other never share a cell
 * while there are at least 4 slots. Two threads that do hash to one cell
 * stay correct (cells are updated with atomic read-modify-writes) and only
 * contend with each other, as an {@code AtomicLong} would.
 */
final class PaddedWords {
    /** Every access to the words goes through this handle; plain indexing is never used. */
    static final VarHandle WORD = MethodHandles.arrayElementVarHandle(long[].class);

    /** log2 of the span between two hot words, in longs: 16 longs = 128 bytes. */
    static final int SPAN_SHIFT = 4;
    /** Upper bound on cells: 256 x 128 B = 32 KiB per counter, whatever the CPU count. */
    static final int MAX_SLOTS = 256;

    private static final long PHI = 0x9E3779B97F4A7C15L;

    private PaddedWords() {}

    /** Slots for this machine: next power of two at or above 4 x CPUs, at least 8, at most {@link #MAX_SLOTS}. */
    static int defaultSlots() {
        int wanted = nextPowerOfTwo(4 * Runtime.getRuntime().availableProcessors());
        return checkSlots(Math.min(MAX_SLOTS, Math.max(8, wanted)));
    }

    static int checkSlots(int slots) {
        if (slots < 2 || slots > MAX_SLOTS || Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two in [2, " + MAX_SLOTS + "], was " + slots);
        }
        return slots;
    }

    static long[] allocate(int controlWords, int slots) {
        return new long[(controlWords + slots + 2) << SPAN_SHIFT];
    }

    /** Index of control word {@code k}. */
    static int controlIndex(int k) {
        return (k + 1) << SPAN_SHIFT;
    }

    /** Index of cell 0 when there are {@code controlWords} control words. */
    static int cellBase(int controlWords) {
        return (controlWords + 1) << SPAN_SHIFT;
    }

    /** Right shift that turns a 64-bit hash into a slot number below {@code slots}. */
    static int slotShift(int slots) {
        return 64 - Integer.numberOfTrailingZeros(slots);
    }

    /** Index of the calling thread's cell; reads only the thread's own id. */
    static int cellIndex(int cellBase, int slotShift) {
        return cellBase + ((int) ((Thread.currentThread().getId() * PHI) >>> slotShift) << SPAN_SHIFT);
    }

    /** Volatile sum of all cells; a moving snapshot unless the cells are quiet. */
    static long sumCells(long[] words, int cellBase, int slots) {
        long sum = 0;
        for (int i = 0; i < slots; i++) {
            sum += (long) WORD.getVolatile(words, cellBase + (i << SPAN_SHIFT));
        }
        return sum;
    }

    private static int nextPowerOfTwo(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }
}
