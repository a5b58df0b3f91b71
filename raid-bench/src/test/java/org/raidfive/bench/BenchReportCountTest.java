package org.raidfive.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** IOPS as the reports print them: three significant digits and a unit, never an exponent. */
class BenchReportCountTest {
    @Test
    void countsRoundIntoTheNextUnitInsteadOfPrintingAnExponent() {
        assertEquals("9999", BenchReport.count(9999));
        assertEquals("10.0k", BenchReport.count(10_000));
        assertEquals("527k", BenchReport.count(527_123));
        assertEquals("999k", BenchReport.count(999_400));
        assertEquals("1.00M", BenchReport.count(999_600)); // was "1.00e+03k"
        assertEquals("1.00M", BenchReport.count(1_000_000));
        assertEquals("2.37M", BenchReport.count(2_371_000));
        assertEquals("1000M", BenchReport.count(999_700_000)); // was "1.00e+03M"
    }
}
