package org.raidfive.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.counter.CounterMode;

class BenchConfigTest {

    @Test
    void badValuesAreRefusedNamingTheOptionAndTheRule() {
        assertMessage("--bs 1000", () -> BenchConfig.builder().bs(1000).build());
        assertMessage("--iodepth 0", () -> BenchConfig.builder().iodepth(0).build());
        assertMessage(
                "--rwmixread 101", () -> BenchConfig.builder().rwmixread(101).build());
        assertMessage("--size", () -> BenchConfig.builder().size(4096 * 3 + 100).build());
        assertMessage(
                "--size", () -> BenchConfig.builder().size(4096).numjobs(2).build());
        assertMessage(
                "--direct needs --backend file",
                () -> BenchConfig.builder().direct(true).build());
        assertMessage(
                "--backend file needs --dir",
                () -> BenchConfig.builder().backend(BenchConfig.Backend.FILE).build());
        assertMessage(
                "--degraded applies to --target array only",
                () -> BenchConfig.builder()
                        .target(BenchConfig.Target.RAW)
                        .degraded(true)
                        .build());
        assertMessage(
                "--counters both applies",
                () -> BenchConfig.builder()
                        .target(BenchConfig.Target.RAW)
                        .counters(BenchConfig.Counters.BOTH)
                        .build());
        assertMessage("chunk size 3000", () -> BenchConfig.builder().chunk(3000).build());
        assertMessage("unknown --rw 'randomread'", () -> RwMode.parse("randomread"));
        assertMessage("unknown --target 'disk'", () -> BenchConfig.Target.parse("disk"));
    }

    @Test
    void variantsInterleaveCountersAndTargetsInRoundOrder() {
        BenchConfig c = BenchConfig.builder()
                .target(BenchConfig.Target.RAW, BenchConfig.Target.ARRAY)
                .counters(BenchConfig.Counters.BOTH)
                .build();
        List<Variant> v = Variant.of(c);
        assertEquals(
                List.of(
                        new Variant(BenchConfig.Target.RAW, null, null),
                        new Variant(BenchConfig.Target.ARRAY, CounterMode.ATOMIC, ConsistencyPolicy.RESYNC),
                        new Variant(BenchConfig.Target.ARRAY, CounterMode.PERCPU, ConsistencyPolicy.RESYNC)),
                v);
        assertEquals("array percpu", v.get(2).label());
        assertTrue(c.describe().contains("target=raw,array"));
        // Which cells percpu had in this JVM: owned where membarrier(2) works, else shared and why.
        assertTrue(c.describe().contains("counters=both (percpu: " + CounterMode.PERCPU.cells() + ")"), c.describe());
        assertTrue(CounterMode.PERCPU.cells().startsWith("owned cells")
                || CounterMode.PERCPU.cells().startsWith("shared cells: "));
        assertEquals(50, BenchConfig.builder().rw(RwMode.RANDRW).build().readPercent());
        assertEquals(
                100, BenchConfig.builder().rw(RwMode.READ).rwmixread(10).build().readPercent());
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        assertTrue(
                x.getMessage().contains(expected), () -> "message '" + x.getMessage() + "' lacks '" + expected + "'");
    }
}
