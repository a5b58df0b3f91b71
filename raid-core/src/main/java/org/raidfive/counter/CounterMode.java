package org.raidfive.counter;

/**
 * How an array counts its in-flight I/O: the benchmark setting that picks
 * between md before and after the "md: avoid counter operation conflicts"
 * series.
 */
public enum CounterMode {
    /**
     * One exact atomic counter, always: every get and put is a
     * read-modify-write on one shared word. Never switched to striped mode,
     * not even by {@link PercpuRef#switchToPercpu()}. Costs no striping
     * memory.
     */
    ATOMIC,

    /**
     * Striped per-thread cells while running; switched to one exact counter
     * only while somebody needs to see zero (quiesce, member removal), then
     * switched back. Each thread has a cell of its own, updated with plain
     * stores, where Linux's {@code membarrier(2)} is available (decided once
     * per JVM and logged); elsewhere this is {@link #PERCPU_SHARED}.
     */
    PERCPU,

    /**
     * {@link #PERCPU} with cells shared by a hash of the thread id and updated
     * with one atomic add each (what {@code PERCPU} falls back to without
     * {@code membarrier(2)}); for A/B measurements of the owned cells.
     */
    PERCPU_SHARED;

    /**
     * What this mode counts in within this JVM, for reports: {@code one atomic word},
     * {@code owned cells, membarrier(2)}, or {@code shared cells}, with the reason when
     * {@link #PERCPU} fell back to them.
     */
    public String cells() {
        return switch (this) {
            case ATOMIC -> "one atomic word";
            case PERCPU ->
                Membarrier.available()
                        ? "owned cells, membarrier(2)"
                        : "shared cells: " + Membarrier.unavailableReason();
            case PERCPU_SHARED -> "shared cells";
        };
    }
}
