package org.raidfive.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.raidfive.bench.BenchConfig;
import org.raidfive.bench.BenchReport;
import org.raidfive.bench.Chart;
import org.raidfive.bench.IopsRunner;
import org.raidfive.bench.Machine;
import org.raidfive.bench.RwMode;
import org.raidfive.bench.Sizes;
import org.raidfive.layout.Raid5Algorithm;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code raid bench}: fio-style IOPS runs against a RAID-5 array (or the raw references), with
 * repeats and their spread. A thin front-end: the options fill a {@link BenchConfig}, which
 * validates them; {@link IopsRunner} does the work.
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Measure IOPS, bandwidth, completion latency and CPU in fio's terms, with repeats and spread.",
            "Every run of a round runs each target/counter variant once (A B A B ...), so ratios are per round."
        },
        footer = {
            "",
            "Examples:",
            "  raid bench --rw randread --bs 4k --numjobs 2 --target raw,array --repeat 3",
            "  raid bench --rw randwrite --counters both --repeat 5 --json out.json --chart out.png",
            "  raid bench --rw write --bs 1536k --chunk 512k --target raw-members,array"
        })
public final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--rw",
            paramLabel = "PATTERN",
            description = "read, write, randread, randwrite or randrw (default: ${DEFAULT-VALUE})",
            defaultValue = "randread")
    String rw;

    @Option(
            names = "--rwmixread",
            paramLabel = "PCT",
            description = "percentage of reads for randrw (default: ${DEFAULT-VALUE})",
            defaultValue = "50")
    int rwmixread;

    @Option(
            names = "--bs",
            paramLabel = "SIZE",
            description = "block size of each I/O, e.g. 4k (default: ${DEFAULT-VALUE})",
            defaultValue = "4k")
    String bs;

    @Option(
            names = "--iodepth",
            paramLabel = "N",
            description = "I/Os in flight per job; above 1 through AsyncIo (default: ${DEFAULT-VALUE})",
            defaultValue = "1")
    int iodepth;

    @Option(
            names = "--numjobs",
            paramLabel = "N",
            description = "jobs (threads) issuing I/O (default: ${DEFAULT-VALUE})",
            defaultValue = "1")
    int numjobs;

    @Option(
            names = "--size",
            paramLabel = "SIZE",
            description = "I/O region of the target, shared by all jobs (fio's --size); array members are sized "
                    + "to hold it: size/(disks-1) each plus md's data offset (default: ${DEFAULT-VALUE})",
            defaultValue = "1g")
    String size;

    @Option(
            names = "--runtime",
            paramLabel = "TIME",
            description = "measured time per run: 5, 5s, 500ms, 1m (default: ${DEFAULT-VALUE})",
            defaultValue = "5s")
    String runtime;

    @Option(
            names = "--ramp",
            paramLabel = "TIME",
            description = "unmeasured warm-up before each run (default: ${DEFAULT-VALUE})",
            defaultValue = "1s")
    String ramp;

    @Option(
            names = "--warmup",
            paramLabel = "TIME",
            description =
                    "one unmeasured run of every variant before the first round, for the JIT (default: ${DEFAULT-VALUE})",
            defaultValue = "2s")
    String warmup;

    @Option(
            names = "--backend",
            paramLabel = "KIND",
            description = "memory or file (default: ${DEFAULT-VALUE})",
            defaultValue = "memory")
    String backend;

    @Option(names = "--dir", paramLabel = "DIR", description = "directory for the member files of --backend file")
    Path dir;

    @Option(names = "--direct", description = "open member files with O_DIRECT")
    boolean direct;

    @Option(
            names = "--disks",
            paramLabel = "N",
            description = "array members (default: ${DEFAULT-VALUE})",
            defaultValue = "4")
    int disks;

    @Option(
            names = "--chunk",
            paramLabel = "SIZE",
            description = "chunk size (default: ${DEFAULT-VALUE})",
            defaultValue = "512k")
    String chunk;

    @Option(
            names = "--layout",
            paramLabel = "NAME",
            description = "md layout, e.g. left-symmetric, ra (default: ${DEFAULT-VALUE})",
            defaultValue = "left-symmetric")
    String layout;

    @Option(
            names = "--counters",
            paramLabel = "MODE",
            description =
                    "array hot-path counters: atomic, percpu, percpu-shared (cells with atomic adds, the fallback "
                            + "without membarrier), both (atomic vs percpu) or fastpath (percpu-shared vs percpu), interleaved "
                            + "A B A B with the ratio (default: ${DEFAULT-VALUE})",
            defaultValue = "percpu")
    String counters;

    @Option(
            names = "--live-counters",
            paramLabel = "off|on|both",
            description = "array publishes live counters (raid stat) while measured; both interleaves off and on, "
                    + "with the ratio (default: ${DEFAULT-VALUE})",
            defaultValue = "off")
    String liveCounters;

    @Option(
            names = "--consistency-policy",
            paramLabel = "POLICY",
            description =
                    "array consistency policies, interleaved per round: a list of resync, bitmap (md's write-intent "
                            + "bitmap), ppl (md's partial parity log), e.g. resync,bitmap; both is resync,ppl "
                            + "(default: ${DEFAULT-VALUE})",
            defaultValue = "resync")
    String policy;

    @Option(names = "--degraded", description = "fail one member before each run")
    boolean degraded;

    @Option(
            names = "--repeat",
            paramLabel = "R",
            description = "rounds; spread is reported over them (default: ${DEFAULT-VALUE})",
            defaultValue = "1")
    int repeat;

    @Option(
            names = "--target",
            paramLabel = "LIST",
            split = ",",
            description = "array, raw (one disk: the reference), raw-members (RAID-0 over the members); several "
                    + "run interleaved and ratios are taken against the first (default: ${DEFAULT-VALUE})",
            defaultValue = "array")
    List<String> targets = new ArrayList<>();

    @Option(
            names = "--workers",
            paramLabel = "N",
            description = "AsyncIo worker threads for iodepth > 1 (default: min(numjobs x iodepth, cores))",
            defaultValue = "0")
    int workers;

    @Option(names = "--seed", paramLabel = "N", description = "seed of the random offsets")
    Long seed;

    @Option(names = "--json", paramLabel = "FILE", description = "write the results as JSON")
    Path json;

    @Option(names = "--chart", paramLabel = "FILE", description = "draw IOPS bars with min-max whiskers (.svg or .png)")
    Path chart;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        BenchConfig config;
        try {
            config = config();
            if (chart != null) {
                String n = chart.getFileName().toString().toLowerCase(Locale.ROOT);
                if (!n.endsWith(".svg") && !n.endsWith(".png")) {
                    throw new IllegalArgumentException("--chart " + chart + " must end in .svg or .png");
                }
            }
        } catch (IllegalArgumentException e) {
            err.println("raid bench: " + e.getMessage());
            return 2;
        }
        try {
            out.print(BenchReport.headerText(config, Machine.here()));
            out.flush();
            BenchReport report = IopsRunner.run(config, r -> {
                out.println(BenchReport.runText(r, config.repeat()));
                out.flush();
            });
            out.print(report.summaryText());
            if (json != null) {
                Files.writeString(json, report.toJson() + "\n", StandardCharsets.UTF_8);
                out.println("json: " + json);
            }
            if (chart != null) {
                Chart.ofIops(report).write(chart);
                out.println("chart: " + chart);
            }
            out.flush();
            return 0;
        } catch (IOException e) {
            err.println("raid bench: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("raid bench: interrupted");
            return 1;
        }
    }

    BenchConfig config() {
        List<BenchConfig.Target> t = new ArrayList<>();
        for (String s : targets) {
            t.add(BenchConfig.Target.parse(s));
        }
        BenchConfig.Builder b = BenchConfig.builder()
                .rw(RwMode.parse(rw))
                .rwmixread(rwmixread)
                .bs(Sizes.parse(bs))
                .iodepth(iodepth)
                .numjobs(numjobs)
                .size(Sizes.parse(size))
                .runtime(duration("--runtime", runtime))
                .ramp(duration("--ramp", ramp))
                .warmup(duration("--warmup", warmup))
                .backend(BenchConfig.Backend.parse(backend))
                .dir(dir)
                .direct(direct)
                .disks(disks)
                .chunk(Sizes.parse(chunk))
                .layout(Raid5Algorithm.parse(layout))
                .counters(BenchConfig.Counters.parse(counters))
                .policies(BenchConfig.Policies.parse(policy))
                .liveCounters(BenchConfig.LiveCounters.parse(liveCounters))
                .degraded(degraded)
                .repeat(repeat)
                .targets(t)
                .workers(workers);
        if (seed != null) {
            b.seed(seed);
        }
        return b.build();
    }

    /** "5" and "5s" are seconds; "ms" and "m" suffixes are milliseconds and minutes. */
    static Duration duration(String option, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            }
            if (t.endsWith("s")) {
                return Duration.ofMillis(Math.round(Double.parseDouble(t.substring(0, t.length() - 1)) * 1000));
            }
            if (t.endsWith("m")) {
                return Duration.ofMillis(Math.round(Double.parseDouble(t.substring(0, t.length() - 1)) * 60_000));
            }
            return Duration.ofMillis(Math.round(Double.parseDouble(t) * 1000));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " '" + text + "' is not a time (examples: 5, 5s, 500ms, 1m)");
        }
    }

    /** Runs {@code bench} on its own (until the top-level {@code raid} command lists it). */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(new CommandLine(new BenchCommand()).execute(args));
    }
}
