package org.raidfive.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The outcome of one {@link IopsRunner} invocation: every run, a summary per variant over its
 * repeats (min/median/max, CV, latency over all its runs), and the per-round ratio of every
 * variant to the first one (the A/B comparison), as text in fio's shape and as JSON.
 */
public final class BenchReport {
    /** One variant over its repeats; latencies are over all its runs merged. */
    public record Summary(
            Variant variant,
            Stats iops,
            Stats bandwidth,
            Stats cpuPercent,
            Latency.Percentiles latency,
            Latency.Percentiles readLatency,
            Latency.Percentiles writeLatency) {}

    /** {@code numerator / denominator} IOPS, one ratio per round (pairs run back to back). */
    public record Ratio(Variant numerator, Variant denominator, Stats stats) {
        public String label() {
            return numerator.label() + " / " + denominator.label();
        }
    }

    private final BenchConfig config;
    private final Machine machine;
    private final List<Variant> variants;
    private final List<RunResult> runs;
    private final List<Summary> summaries;
    private final List<Ratio> ratios;

    private BenchReport(
            BenchConfig config,
            Machine machine,
            List<Variant> variants,
            List<RunResult> runs,
            List<Summary> summaries,
            List<Ratio> ratios) {
        this.config = config;
        this.machine = machine;
        this.variants = variants;
        this.runs = runs;
        this.summaries = summaries;
        this.ratios = ratios;
    }

    public static BenchReport of(BenchConfig config, Machine machine, List<Variant> variants, List<RunResult> runs) {
        List<Summary> summaries = new ArrayList<>();
        for (Variant v : variants) {
            List<RunResult> mine = runsOf(runs, v);
            if (mine.isEmpty()) {
                continue;
            }
            double[] iops = new double[mine.size()];
            double[] bw = new double[mine.size()];
            double[] cpu = new double[mine.size()];
            List<Histogram> all = new ArrayList<>();
            List<Histogram> reads = new ArrayList<>();
            List<Histogram> writes = new ArrayList<>();
            for (int i = 0; i < mine.size(); i++) {
                RunResult r = mine.get(i);
                iops[i] = r.iops();
                bw[i] = r.bandwidth();
                cpu[i] = r.cpuPercent();
                reads.add(r.readLatency());
                writes.add(r.writeLatency());
            }
            all.addAll(reads);
            all.addAll(writes);
            summaries.add(new Summary(
                    v,
                    Stats.of(iops),
                    Stats.of(bw),
                    Stats.of(cpu),
                    Latency.Percentiles.of(Latency.merge(all)),
                    Latency.Percentiles.of(Latency.merge(reads)),
                    Latency.Percentiles.of(Latency.merge(writes))));
        }
        List<Ratio> ratios = new ArrayList<>();
        if (!variants.isEmpty()) {
            Variant base = variants.get(0);
            for (Variant v : variants.subList(1, variants.size())) {
                List<Double> num = new ArrayList<>();
                List<Double> den = new ArrayList<>();
                for (int round = 0; round < config.repeat(); round++) {
                    RunResult a = find(runs, v, round);
                    RunResult b = find(runs, base, round);
                    if (a != null && b != null) {
                        num.add(a.iops());
                        den.add(b.iops());
                    }
                }
                if (!num.isEmpty()) {
                    ratios.add(new Ratio(v, base, Stats.ofRatios(unbox(num), unbox(den))));
                }
            }
        }
        return new BenchReport(config, machine, List.copyOf(variants), List.copyOf(runs), summaries, ratios);
    }

    private static List<RunResult> runsOf(List<RunResult> runs, Variant v) {
        List<RunResult> list = new ArrayList<>();
        for (RunResult r : runs) {
            if (r.variant().equals(v)) {
                list.add(r);
            }
        }
        return list;
    }

    private static RunResult find(List<RunResult> runs, Variant v, int round) {
        for (RunResult r : runs) {
            if (r.variant().equals(v) && r.round() == round) {
                return r;
            }
        }
        return null;
    }

    private static double[] unbox(List<Double> list) {
        double[] d = new double[list.size()];
        for (int i = 0; i < d.length; i++) {
            d[i] = list.get(i);
        }
        return d;
    }

    public BenchConfig config() {
        return config;
    }

    public Machine machine() {
        return machine;
    }

    public List<RunResult> runs() {
        return runs;
    }

    public List<Summary> summaries() {
        return summaries;
    }

    public List<Ratio> ratios() {
        return ratios;
    }

    public Summary summary(Variant v) {
        for (Summary s : summaries) {
            if (s.variant().equals(v)) {
                return s;
            }
        }
        throw new IllegalArgumentException("no runs of " + v);
    }

    // ------------------------------------------------------------------ text

    /** The header: configuration and machine. */
    public String headerText() {
        return headerText(config, machine);
    }

    public static String headerText(BenchConfig config, Machine machine) {
        return "raid bench: " + config.describe() + "\n"
                + String.format(
                        Locale.ROOT,
                        "machine: %s, %d cores, %.1f GiB, %s, load average %s%n",
                        machine.cpuModel(),
                        machine.cores(),
                        machine.memoryBytes() / (double) (1L << 30),
                        machine.jdk(),
                        machine.loadAverage());
    }

    /** One run, fio-style. */
    public static String runText(RunResult r, int repeat) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-14s run %d/%d: ", r.variant().label(), r.round() + 1, repeat));
        if (r.readOps() > 0 && r.writeOps() > 0) {
            sb.append(String.format(
                    Locale.ROOT, "read IOPS=%s write IOPS=%s, ", count(r.readIops()), count(r.writeIops())));
        }
        sb.append(
                String.format(Locale.ROOT, "%s: IOPS=%s, BW=%s", direction(r), count(r.iops()), bytes(r.bandwidth())));
        Latency.Percentiles p = Latency.Percentiles.of(r.latency());
        sb.append(" clat ").append(latency(p));
        sb.append(String.format(Locale.ROOT, " cpu=%.1f%%", r.cpuPercent()));
        return sb.toString();
    }

    private static String direction(RunResult r) {
        return r.writeOps() == 0 ? "read" : r.readOps() == 0 ? "write" : "rw";
    }

    /** Summaries, warnings and ratios. */
    public String summaryText() {
        StringBuilder sb = new StringBuilder();
        for (Summary s : summaries) {
            Stats i = s.iops();
            sb.append(String.format(
                    Locale.ROOT,
                    "%-14s summary (%d runs): IOPS min %s median %s max %s, CV %.1f%%; BW median %s; clat %s; cpu median %.1f%%%n",
                    s.variant().label(),
                    i.n(),
                    count(i.min()),
                    count(i.median()),
                    count(i.max()),
                    100 * i.cv(),
                    bytes(s.bandwidth().median()),
                    latency(s.latency()),
                    s.cpuPercent().median()));
            if (i.spreadTooHigh()) {
                sb.append(String.format(
                        Locale.ROOT,
                        "WARNING: %s IOPS spread is CV %.1f%% (range %.1f%% of the median), above %.0f%%: "
                                + "differences smaller than that are noise on this machine%n",
                        s.variant().label(),
                        100 * i.cv(),
                        100 * i.range(),
                        100 * Stats.SPREAD_WARNING));
            }
        }
        for (Ratio r : ratios) {
            Stats st = r.stats();
            sb.append(String.format(
                    Locale.ROOT,
                    "ratio %s: median %.3f (per-round min %.3f, max %.3f; %d pairs)%n",
                    r.label(),
                    st.median(),
                    st.min(),
                    st.max(),
                    st.n()));
        }
        return sb.toString();
    }

    public String toText() {
        StringBuilder sb = new StringBuilder(headerText());
        for (RunResult r : runs) {
            sb.append(runText(r, config.repeat())).append('\n');
        }
        return sb.append(summaryText()).toString();
    }

    static String count(double v) {
        // by the rounded figure: 999.6k is 1.00M, where %.3g of 999.6 would print 1.00e+03
        if (v >= 999.5e3) {
            return threeDigits(v / 1e6) + "M";
        }
        if (v >= 1e4) {
            return threeDigits(v / 1e3) + "k";
        }
        return String.format(Locale.ROOT, "%.0f", v);
    }

    private static String threeDigits(double v) {
        return v >= 999.5 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.3g", v);
    }

    static String bytes(double perSecond) {
        double mib = perSecond / (1 << 20);
        return mib >= 1024
                ? String.format(Locale.ROOT, "%.2fGiB/s", mib / 1024)
                : String.format(Locale.ROOT, "%.1fMiB/s", mib);
    }

    static String latency(Latency.Percentiles p) {
        return String.format(
                Locale.ROOT,
                "(usec) p50=%s p99=%s p99.9=%s max=%s",
                us(p.p50()),
                us(p.p99()),
                us(p.p999()),
                us(p.max()));
    }

    private static String us(long nanos) {
        double u = nanos / 1000.0;
        return u < 10
                ? String.format(Locale.ROOT, "%.2f", u)
                : u < 1000 ? String.format(Locale.ROOT, "%.1f", u) : String.format(Locale.ROOT, "%.0f", u);
    }

    // ------------------------------------------------------------------ JSON

    /** The whole report as one line of JSON (a line of a .jsonl file). */
    public String toJson() {
        Map<String, Object> c = Json.object();
        c.put("describe", config.describe());
        c.put("rw", config.rw().fioName());
        c.put("rwmixread", config.readPercent());
        c.put("bs", config.bs());
        c.put("iodepth", config.iodepth());
        c.put("numjobs", config.numjobs());
        c.put("size", config.size());
        c.put("size_is", "I/O region of the target");
        c.put("runtime_s", config.runtime().toMillis() / 1000.0);
        c.put("ramp_s", config.ramp().toMillis() / 1000.0);
        c.put("backend", config.backend().toString());
        c.put("direct", config.direct());
        c.put("disks", config.disks());
        c.put("chunk", config.chunk());
        c.put("layout", config.layout().mdadmName());
        c.put("counters", config.counters().toString());
        c.put("degraded", config.degraded());
        c.put("repeat", config.repeat());
        c.put("workers", config.workers());
        c.put("targets", config.targets().stream().map(Object::toString).toList());
        Map<String, Object> m = Json.object();
        m.put("cpu", machine.cpuModel());
        m.put("cores", machine.cores());
        m.put("memory_bytes", machine.memoryBytes());
        m.put("jdk", machine.jdk());
        m.put("loadavg", machine.loadAverage());
        List<Object> runList = new ArrayList<>();
        for (RunResult r : runs) {
            Map<String, Object> o = Json.object();
            o.put("variant", r.variant().label());
            o.put("round", r.round());
            o.put("iops", r.iops());
            o.put("read_iops", r.readIops());
            o.put("write_iops", r.writeIops());
            o.put("bw_bytes", r.bandwidth());
            o.put("ops", r.ops());
            o.put("measured_s", r.measuredNanos() / 1e9);
            o.put("cpu_pct", r.cpuPercent());
            o.put("clat_ns", percentiles(Latency.Percentiles.of(r.latency())));
            runList.add(o);
        }
        List<Object> summaryList = new ArrayList<>();
        for (Summary s : summaries) {
            Map<String, Object> o = Json.object();
            o.put("variant", s.variant().label());
            o.put("iops", stats(s.iops()));
            o.put("bw_bytes", stats(s.bandwidth()));
            o.put("cpu_pct", stats(s.cpuPercent()));
            o.put("clat_ns", percentiles(s.latency()));
            if (s.readLatency().count() > 0 && s.writeLatency().count() > 0) {
                o.put("read_clat_ns", percentiles(s.readLatency()));
                o.put("write_clat_ns", percentiles(s.writeLatency()));
            }
            o.put("spread_warning", s.iops().spreadTooHigh());
            summaryList.add(o);
        }
        List<Object> ratioList = new ArrayList<>();
        for (Ratio r : ratios) {
            Map<String, Object> o = Json.object();
            o.put("numerator", r.numerator().label());
            o.put("denominator", r.denominator().label());
            o.put("ratio", stats(r.stats()));
            ratioList.add(o);
        }
        Map<String, Object> report = Json.object();
        report.put("config", c);
        report.put("machine", m);
        report.put("runs", runList);
        report.put("summaries", summaryList);
        report.put("ratios", ratioList);
        return Json.line(report).strip();
    }

    private static Map<String, Object> stats(Stats s) {
        Map<String, Object> o = Json.object();
        o.put("n", s.n());
        o.put("min", s.min());
        o.put("median", s.median());
        o.put("max", s.max());
        o.put("mean", s.mean());
        o.put("cv", s.cv());
        return o;
    }

    private static Map<String, Object> percentiles(Latency.Percentiles p) {
        Map<String, Object> o = Json.object();
        o.put("count", p.count());
        o.put("mean", p.mean());
        o.put("p50", p.p50());
        o.put("p99", p.p99());
        o.put("p99_9", p.p999());
        o.put("max", p.max());
        return o;
    }
}
