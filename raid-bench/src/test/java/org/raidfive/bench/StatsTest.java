package org.raidfive.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class StatsTest {

    @Test
    void medianOfOddAndEvenCountsAndTheExtremes() {
        Stats odd = Stats.of(5, 1, 3);
        assertEquals(3, odd.median());
        assertEquals(1, odd.min());
        assertEquals(5, odd.max());
        assertEquals(3, odd.mean(), 1e-12);
        Stats even = Stats.of(4, 1, 3, 2);
        assertEquals(2.5, even.median());
        assertEquals(4, even.n());
    }

    @Test
    void coefficientOfVariationUsesTheSampleStandardDeviation() {
        // mean 10, sample variance ((-2)^2 + 0 + 2^2) / 2 = 4, sd 2, CV 0.2
        Stats s = Stats.of(8, 10, 12);
        assertEquals(0.2, s.cv(), 1e-12);
        assertTrue(s.spreadTooHigh());
        assertEquals(0.4, s.range(), 1e-12);
        assertEquals(0, Stats.of(7).cv(), "one run has no spread to measure");
        assertFalse(Stats.of(100, 101, 102).spreadTooHigh());
    }

    @Test
    void ratiosArePerPairThenSummarised() {
        Stats r = Stats.ofRatios(new double[] {110, 90, 200}, new double[] {100, 100, 100});
        assertEquals(1.1, r.median(), 1e-12);
        assertEquals(0.9, r.min(), 1e-12);
        assertEquals(2.0, r.max(), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> Stats.ofRatios(new double[] {1}, new double[] {1, 2}));
        assertThrows(IllegalArgumentException.class, Stats::of);
    }

    @Test
    void histogramsMergeCountsAndPercentiles() {
        Histogram a = Latency.newHistogram();
        Histogram b = Latency.newHistogram();
        for (int i = 1; i <= 900; i++) {
            Latency.record(a, 1_000);
        }
        for (int i = 1; i <= 100; i++) {
            Latency.record(b, 1_000_000);
        }
        Latency.record(b, 0); // clamped up to 1 ns
        Latency.record(b, 100_000_000_000L); // clamped down to the 10 s ceiling
        Histogram m = Latency.merge(List.of(a, b));
        assertEquals(1002, m.getTotalCount());
        assertEquals(900, a.getTotalCount(), "parts are left unchanged");
        Latency.Percentiles p = Latency.Percentiles.of(m);
        assertEquals(1_000, p.p50(), 1_000 * 0.001);
        assertEquals(1_000_000, p.p99(), 1_000_000 * 0.001);
        assertTrue(p.max() >= Latency.HIGHEST_NANOS * 0.999 && p.max() <= Latency.HIGHEST_NANOS * 1.001);
        assertEquals(0, Latency.Percentiles.of(Latency.newHistogram()).count());
    }

    @Test
    void sizesParseAndFormatLikeFio() {
        assertEquals(4096, Sizes.parse("4k"));
        assertEquals(1536L << 10, Sizes.parse("1536K"));
        assertEquals(1L << 30, Sizes.parse("1g"));
        assertEquals(512, Sizes.parse("512"));
        assertEquals(2L << 20, Sizes.parse("2MiB"));
        assertEquals("4k", Sizes.format(4096));
        assertEquals("1536k", Sizes.format(1536L << 10));
        assertEquals("1g", Sizes.format(1L << 30));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("4x"));
    }

    @Test
    void chartsScaleToNiceNumbers() {
        assertEquals(300_000, Chart.niceCeiling(254_000), 1e-6);
        assertEquals(1, Chart.niceCeiling(0));
        assertEquals("1.23M", Chart.human(1_234_000));
        assertEquals("254k", Chart.human(254_000));
    }
}
