package org.raidfive.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Short runs on small memory disks: the numbers are sane (no timing assertions). */
@Timeout(120)
class IopsRunnerSmokeTest {

    private static BenchConfig.Builder small() {
        return BenchConfig.builder()
                .size(8L << 20)
                .chunk(64 * 1024)
                .disks(4)
                .numjobs(2)
                .runtime(Duration.ofMillis(200))
                .ramp(Duration.ofMillis(50))
                .warmup(Duration.ofMillis(50));
    }

    @Test
    void syncRandomReadsAgainstArrayAndRawGiveSaneNumbersAndARatio(@TempDir Path tmp) throws Exception {
        BenchConfig c = small().target(BenchConfig.Target.RAW, BenchConfig.Target.ARRAY)
                .repeat(2)
                .build();
        BenchReport report = IopsRunner.run(c);
        assertEquals(4, report.runs().size(), "2 rounds x 2 variants");
        for (RunResult r : report.runs()) {
            assertTrue(r.readOps() > 0 && r.writeOps() == 0, r.toString());
            assertTrue(r.iops() > 0 && Double.isFinite(r.iops()));
            assertEquals(r.iops() * 4096, r.bandwidth(), 1e-6);
            Latency.Percentiles p = Latency.Percentiles.of(r.latency());
            assertEquals(r.ops(), p.count(), "one latency per counted I/O");
            assertTrue(p.p50() > 0 && p.p50() <= p.p99() && p.p99() <= p.p999() && p.p999() <= p.max());
            // Process CPU time is sampled in clock ticks (10 ms): over a 200 ms window on 2 cores that
            // is a few percent either way, so a saturated run may read slightly above 100.
            assertTrue(r.cpuPercent() >= 0 && r.cpuPercent() <= 110, "cpu " + r.cpuPercent());
        }
        assertEquals(1, report.ratios().size());
        assertEquals("array percpu / raw", report.ratios().get(0).label());
        assertTrue(report.ratios().get(0).stats().median() > 0);
        String json = report.toJson();
        assertTrue(json.startsWith("{\"config\":") && json.contains("\"ratios\":[{\"numerator\":\"array percpu\""));
        Path svg = tmp.resolve("c.svg");
        Path png = tmp.resolve("c.png");
        Chart.ofIops(report).write(svg);
        Chart.ofIops(report).write(png);
        assertTrue(Files.readString(svg).contains("<svg") && Files.size(png) > 1000);
    }

    @Test
    void asyncRandomReadWriteKeepsTheDepthAndCountsBothDirections() throws Exception {
        BenchConfig c = small().rw(RwMode.RANDRW)
                .rwmixread(70)
                .iodepth(8)
                .counters(BenchConfig.Counters.BOTH)
                .degraded(true)
                .build();
        BenchReport report = IopsRunner.run(c);
        assertEquals(2, report.runs().size(), "atomic then percpu");
        for (RunResult r : report.runs()) {
            assertTrue(r.readOps() > 0 && r.writeOps() > 0, r.toString());
            double readShare = r.readOps() / (double) r.ops();
            assertTrue(readShare > 0.5 && readShare < 0.9, "about 70% reads: " + readShare);
        }
        assertEquals("array percpu / array atomic", report.ratios().get(0).label());
    }

    @Test
    void sequentialFullStripeWritesOnFilesAndRawMembers(@TempDir Path dir) throws Exception {
        BenchConfig c = small().rw(RwMode.WRITE)
                .bs(3 * 64 * 1024)
                .backend(BenchConfig.Backend.FILE)
                .dir(dir)
                .target(BenchConfig.Target.RAW_MEMBERS, BenchConfig.Target.ARRAY)
                .build();
        BenchReport report = IopsRunner.run(c);
        for (RunResult r : report.runs()) {
            assertTrue(r.writeOps() > 0 && r.readOps() == 0, r.toString());
        }
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count(), "member files are removed after the run");
        }
    }
}
