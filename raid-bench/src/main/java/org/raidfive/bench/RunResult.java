package org.raidfive.bench;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * One measured run of one variant: fio's per-run figures.
 *
 * @param round         0-based repeat index (runs of one round are adjacent in time)
 * @param measuredNanos length of the measured window
 * @param readLatency   completion latencies of reads, all jobs merged (ns)
 * @param writeLatency  the same for writes (empty when the pattern has none)
 * @param cpuPercent    process CPU time over the window as % of wall time x cores
 */
public record RunResult(
        Variant variant,
        int round,
        int bs,
        long measuredNanos,
        long readOps,
        long writeOps,
        Histogram readLatency,
        Histogram writeLatency,
        double cpuPercent) {

    public long ops() {
        return readOps + writeOps;
    }

    public double iops() {
        return ops() * 1e9 / measuredNanos;
    }

    public double readIops() {
        return readOps * 1e9 / measuredNanos;
    }

    public double writeIops() {
        return writeOps * 1e9 / measuredNanos;
    }

    /** Bytes per second, both directions. */
    public double bandwidth() {
        return iops() * bs;
    }

    /** Completion latency over both directions. */
    public Histogram latency() {
        List<Histogram> parts = new ArrayList<>(2);
        parts.add(readLatency);
        parts.add(writeLatency);
        return Latency.merge(parts);
    }

    static RunResult of(
            Variant v, int round, BenchConfig c, long measuredNanos, List<JobStats> stats, double cpuPercent) {
        long reads = 0;
        long writes = 0;
        List<Histogram> r = new ArrayList<>();
        List<Histogram> w = new ArrayList<>();
        for (JobStats s : stats) {
            reads += s.readOps;
            writes += s.writeOps;
            r.add(s.readLatency);
            if (s.writeLatency != null) {
                w.add(s.writeLatency);
            }
        }
        return new RunResult(
                v, round, c.bs(), measuredNanos, reads, writes, Latency.merge(r), Latency.merge(w), cpuPercent);
    }
}
