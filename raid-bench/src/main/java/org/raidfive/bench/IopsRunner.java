package org.raidfive.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.raidfive.disk.AsyncIo;
import org.raidfive.disk.MemberDisk;

/**
 * Runs a {@link BenchConfig}: {@code repeat} rounds, each round running every {@link Variant} once
 * in the same order (A B A B ...: with {@code --counters both} or several targets the variants are
 * interleaved, so slow drift of the machine hits them alike and per-round ratios stay honest).
 *
 * <p>Before the first round every variant runs once for {@code warmup}, unmeasured (JIT). A run:
 * jobs start together, run {@code ramp} unmeasured, then {@code runtime} measured; an
 * I/O counts when it completes inside the measured window. CPU is the process's CPU time over the
 * window.
 */
public final class IopsRunner {
    private static final long START_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private IopsRunner() {}

    public static BenchReport run(BenchConfig config) throws IOException, InterruptedException {
        return run(config, r -> {});
    }

    /** As {@link #run(BenchConfig)}, telling {@code progress} about each run as it finishes. */
    public static BenchReport run(BenchConfig config, Consumer<RunResult> progress)
            throws IOException, InterruptedException {
        Machine machine = Machine.here();
        List<Variant> variants = Variant.of(config);
        List<RunResult> results = new ArrayList<>();
        try (TargetSet targets = new TargetSet(config)) {
            if (!config.warmup().isZero()) {
                // The JIT compiles the paths while these run; a short run on a busy machine otherwise
                // measures the interpreter in the first round.
                BenchConfig warm = config.toBuilder()
                        .runtime(config.warmup())
                        .ramp(Duration.ZERO)
                        .build();
                for (Variant v : variants) {
                    try (TargetSet.Opened target = targets.open(v)) {
                        runOnce(warm, v, -1, target.disk());
                    }
                }
            }
            for (int round = 0; round < config.repeat(); round++) {
                for (Variant v : variants) {
                    RunResult r;
                    try (TargetSet.Opened target = targets.open(v)) {
                        r = runOnce(config, v, round, target.disk());
                    }
                    results.add(r);
                    progress.accept(r);
                }
            }
        }
        return BenchReport.of(config, machine, variants, results);
    }

    static RunResult runOnce(BenchConfig c, Variant v, int round, MemberDisk disk)
            throws IOException, InterruptedException {
        long seed = c.seed() + 1_000_003L * round;
        List<JobStats> stats = new ArrayList<>();
        double cpu;
        if (c.iodepth() == 1) {
            List<Engines.SyncJob> jobs = new ArrayList<>();
            for (int j = 0; j < c.numjobs(); j++) {
                jobs.add(new Engines.SyncJob(j, c, disk, seed + j));
            }
            Window w = window(c);
            jobs.forEach(job -> job.start(w));
            cpu = measureCpu(w);
            for (Engines.SyncJob job : jobs) {
                job.join(TimeUnit.SECONDS.toMillis(120));
                if (job.isAlive()) {
                    throw new IOException(job.getName() + " did not stop within 120 s of the end of its run");
                }
                stats.add(job.stats);
            }
        } else {
            try (AsyncIo io = new AsyncIo(disk, c.workers(), c.numjobs() * c.iodepth())) {
                List<Engines.AsyncJob> jobs = new ArrayList<>();
                for (int j = 0; j < c.numjobs(); j++) {
                    jobs.add(new Engines.AsyncJob(j, c, io, seed + j));
                }
                Window w = window(c);
                sleepUntil(w.begin());
                for (Engines.AsyncJob job : jobs) {
                    job.start(w);
                }
                cpu = measureCpu(w);
                for (Engines.AsyncJob job : jobs) {
                    if (!job.awaitStopped(120, TimeUnit.SECONDS)) {
                        throw new IOException("async job did not stop within 120 s of the end of its run");
                    }
                    stats.addAll(job.stats());
                }
            }
        }
        for (JobStats s : stats) {
            if (s.error != null) {
                throw new IOException(v.label() + ": I/O failed during the run: " + s.error, s.error);
            }
        }
        return RunResult.of(v, round, c, c.runtime().toNanos(), stats, cpu);
    }

    private static Window window(BenchConfig c) {
        return Window.after(START_DELAY_NANOS, c.ramp().toNanos(), c.runtime().toNanos());
    }

    /** Sleeps through the window, reading process CPU time at its start and end. */
    private static double measureCpu(Window w) throws InterruptedException {
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        sleepUntil(w.start());
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        sleepUntil(w.end());
        long cpu1 = os.getProcessCpuTime();
        long t1 = System.nanoTime();
        int cores = Runtime.getRuntime().availableProcessors();
        return cpu0 < 0 || t1 <= t0 ? Double.NaN : 100.0 * (cpu1 - cpu0) / ((double) (t1 - t0) * cores);
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted during a benchmark run");
            }
        }
    }
}
