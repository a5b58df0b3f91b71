package org.raidfive.bench;

import org.HdrHistogram.Histogram;

/**
 * Completion-latency histograms: nanoseconds from 1 ns to 10 s at 3 significant digits, made up
 * front (recording never allocates or resizes), values above the range clamped to it.
 */
public final class Latency {
    public static final long HIGHEST_NANOS = 10_000_000_000L;

    private Latency() {}

    public static Histogram newHistogram() {
        return new Histogram(1, HIGHEST_NANOS, 3);
    }

    /** Records without allocation; single writer per histogram. */
    public static void record(Histogram h, long nanos) {
        h.recordValue(nanos < 1 ? 1 : Math.min(nanos, HIGHEST_NANOS));
    }

    /** A new histogram holding the sum of {@code parts} (which are left unchanged). */
    public static Histogram merge(Iterable<Histogram> parts) {
        Histogram total = newHistogram();
        for (Histogram h : parts) {
            total.add(h);
        }
        return total;
    }

    /** The fio-style percentile set of one histogram, in nanoseconds. */
    public record Percentiles(long count, double mean, long p50, long p99, long p999, long max) {
        public static Percentiles of(Histogram h) {
            if (h.getTotalCount() == 0) {
                return new Percentiles(0, 0, 0, 0, 0, 0);
            }
            return new Percentiles(
                    h.getTotalCount(),
                    h.getMean(),
                    h.getValueAtPercentile(50),
                    h.getValueAtPercentile(99),
                    h.getValueAtPercentile(99.9),
                    h.getMaxValue());
        }
    }
}
