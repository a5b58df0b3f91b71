package org.raidfive.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.FileDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;

/**
 * One benchmark job description in fio's vocabulary, validated once by {@link Builder#build()}: a
 * bad value is refused with a message naming the option, the value and the rule.
 *
 * <p>{@code size} is the I/O region, as fio's {@code --size} for one file: the bytes of the target
 * that the jobs address, shared by all jobs (whole {@code bs} blocks of it; a tail is not used). An array target gets members just large enough for an
 * array of that size ({@code size / (disks - 1)} of data each, rounded up to a chunk, plus md's data
 * offset); {@code raw} is one disk of {@code size}; {@code raw-members} stripes {@code size} over
 * {@code disks} disks without parity.
 */
public final class BenchConfig {
    /** Where the I/O goes. */
    public enum Target {
        /** A RAID-5 array over {@code disks} members. */
        ARRAY("array"),
        /** The same I/O straight to one member-type disk: the reference the array is held against. */
        RAW("raw"),
        /** The same I/O striped (RAID-0, no parity) over {@code disks} members: their aggregate. */
        RAW_MEMBERS("raw-members");

        private final String cliName;

        Target(String cliName) {
            this.cliName = cliName;
        }

        public static Target parse(String s) {
            return parseEnum(values(), s, "--target");
        }

        @Override
        public String toString() {
            return cliName;
        }
    }

    /** Member storage. */
    public enum Backend {
        MEMORY("memory"),
        FILE("file");

        private final String cliName;

        Backend(String cliName) {
            this.cliName = cliName;
        }

        public static Backend parse(String s) {
            return parseEnum(values(), s, "--backend");
        }

        @Override
        public String toString() {
            return cliName;
        }
    }

    /**
     * Which counter implementations to run; {@code BOTH} interleaves atomic and percpu runs,
     * {@code FASTPATH} percpu with shared cells (atomic adds) and percpu with owned cells.
     */
    public enum Counters {
        ATOMIC("atomic", List.of(CounterMode.ATOMIC)),
        PERCPU("percpu", List.of(CounterMode.PERCPU)),
        PERCPU_SHARED("percpu-shared", List.of(CounterMode.PERCPU_SHARED)),
        BOTH("both", List.of(CounterMode.ATOMIC, CounterMode.PERCPU)),
        FASTPATH("fastpath", List.of(CounterMode.PERCPU_SHARED, CounterMode.PERCPU));

        private final String cliName;
        private final List<CounterMode> modes;

        Counters(String cliName, List<CounterMode> modes) {
            this.cliName = cliName;
            this.modes = modes;
        }

        /** The modes in the order each round runs them (A B for both). */
        public List<CounterMode> modes() {
            return modes;
        }

        public static Counters parse(String s) {
            return parseEnum(values(), s, "--counters");
        }

        @Override
        public String toString() {
            return cliName;
        }
    }

    /** Whether the array publishes live counters (Raid5Array.publishCounters); BOTH interleaves off and on. */
    public enum LiveCounters {
        OFF("off", List.of(false)),
        ON("on", List.of(true)),
        BOTH("both", List.of(false, true));

        private final String cliName;
        private final List<Boolean> values;

        LiveCounters(String cliName, List<Boolean> values) {
            this.cliName = cliName;
            this.values = values;
        }

        /** Off then on, as each round runs them. */
        public List<Boolean> settings() {
            return values;
        }

        public static LiveCounters parse(String s) {
            return parseEnum(values(), s, "--live-counters");
        }

        @Override
        public String toString() {
            return cliName;
        }
    }

    /**
     * Which consistency policies to run the array with, interleaved in each round: a comma-separated
     * list of mdadm's names (resync, bitmap, ppl); "both" is resync,ppl.
     */
    public record Policies(List<ConsistencyPolicy> policies) {
        public static final Policies RESYNC = new Policies(List.of(ConsistencyPolicy.RESYNC));

        public Policies {
            policies = List.copyOf(policies);
        }

        public static Policies parse(String s) {
            if (s.equals("both")) {
                return new Policies(List.of(ConsistencyPolicy.RESYNC, ConsistencyPolicy.PPL));
            }
            List<ConsistencyPolicy> list = new ArrayList<>();
            for (String name : s.split(",")) {
                try {
                    list.add(ConsistencyPolicy.parse(name.trim()));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--consistency-policy: " + e.getMessage());
                }
            }
            return new Policies(list);
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            for (ConsistencyPolicy p : policies) {
                b.append(b.length() == 0 ? "" : ",").append(p.mdadmName());
            }
            return b.toString();
        }
    }

    private final RwMode rw;
    private final int rwmixread;
    private final int bs;
    private final int iodepth;
    private final int numjobs;
    private final long size;
    private final Duration runtime;
    private final Duration ramp;
    private final Duration warmup;
    private final Backend backend;
    private final Path dir;
    private final boolean direct;
    private final int disks;
    private final int chunk;
    private final Raid5Algorithm layout;
    private final Counters counters;
    private final Policies policies;
    private final LiveCounters liveCounters;
    private final boolean degraded;
    private final int repeat;
    private final List<Target> targets;
    private final int workers;
    private final long seed;

    private BenchConfig(Builder b) {
        rw = b.rw;
        rwmixread = b.rwmixread;
        bs = (int) b.bs;
        iodepth = b.iodepth;
        numjobs = b.numjobs;
        size = b.size;
        runtime = b.runtime;
        ramp = b.ramp;
        warmup = b.warmup;
        backend = b.backend;
        dir = b.dir;
        direct = b.direct;
        disks = b.disks;
        chunk = (int) b.chunk;
        layout = b.layout;
        counters = b.counters;
        policies = b.policies;
        liveCounters = b.liveCounters;
        degraded = b.degraded;
        repeat = b.repeat;
        targets = List.copyOf(b.targets);
        workers = b.workers > 0
                ? b.workers
                : Math.max(1, Math.min(numjobs * iodepth, Runtime.getRuntime().availableProcessors()));
        seed = b.seed;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this configuration's values, to derive a variant. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.rw = rw;
        b.rwmixread = rwmixread;
        b.bs = bs;
        b.iodepth = iodepth;
        b.numjobs = numjobs;
        b.size = size;
        b.runtime = runtime;
        b.ramp = ramp;
        b.warmup = warmup;
        b.backend = backend;
        b.dir = dir;
        b.direct = direct;
        b.disks = disks;
        b.chunk = chunk;
        b.layout = layout;
        b.counters = counters;
        b.policies = policies;
        b.liveCounters = liveCounters;
        b.degraded = degraded;
        b.repeat = repeat;
        b.targets = targets;
        b.workers = workers;
        b.seed = seed;
        return b;
    }

    public RwMode rw() {
        return rw;
    }

    public int rwmixread() {
        return rwmixread;
    }
    /** Percentage of I/Os that are reads. */
    public int readPercent() {
        return rw.readPercent(rwmixread);
    }

    public int bs() {
        return bs;
    }

    public int iodepth() {
        return iodepth;
    }

    public int numjobs() {
        return numjobs;
    }

    public long size() {
        return size;
    }

    public Duration runtime() {
        return runtime;
    }

    public Duration ramp() {
        return ramp;
    }
    /** One unmeasured run of every variant before the first round (JIT warm-up; not in fio). */
    public Duration warmup() {
        return warmup;
    }

    public Backend backend() {
        return backend;
    }

    public Path dir() {
        return dir;
    }

    public boolean direct() {
        return direct;
    }

    public int disks() {
        return disks;
    }

    public int chunk() {
        return chunk;
    }

    public Raid5Algorithm layout() {
        return layout;
    }

    public Counters counters() {
        return counters;
    }

    /** The consistency policies the array runs with. */
    public Policies policies() {
        return policies;
    }

    /** Whether the array publishes live counters. */
    public LiveCounters liveCounters() {
        return liveCounters;
    }

    public boolean degraded() {
        return degraded;
    }

    public int repeat() {
        return repeat;
    }
    /** The targets each round runs, in order; ratios are taken against the first. */
    public List<Target> targets() {
        return targets;
    }

    public boolean hasTarget(Target t) {
        return targets.contains(t);
    }
    /** AsyncIo worker threads when iodepth > 1. */
    public int workers() {
        return workers;
    }

    public long seed() {
        return seed;
    }

    /** One line naming everything that shapes the numbers, in fio's words. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append("rw=").append(rw);
        if (rw == RwMode.RANDRW) {
            sb.append(" rwmixread=").append(rwmixread);
        }
        sb.append(" bs=")
                .append(Sizes.format(bs))
                .append(" iodepth=")
                .append(iodepth)
                .append(" numjobs=")
                .append(numjobs)
                .append(" size=")
                .append(Sizes.format(size))
                .append(" runtime=")
                .append(seconds(runtime))
                .append(" ramp=")
                .append(seconds(ramp))
                .append(" warmup=")
                .append(seconds(warmup))
                .append(" target=")
                .append(joined(targets))
                .append(" backend=")
                .append(backend);
        if (backend == Backend.FILE) {
            sb.append(" dir=").append(dir).append(direct ? " direct=1" : "");
        }
        if (!targets.equals(List.of(Target.RAW))) {
            sb.append(" disks=").append(disks).append(" chunk=").append(Sizes.format(chunk));
        }
        if (targets.contains(Target.ARRAY)) {
            sb.append(" layout=")
                    .append(layout.mdadmName())
                    .append(" counters=")
                    .append(counters);
            if (counters.modes().contains(CounterMode.PERCPU)) {
                sb.append(" (percpu: ").append(CounterMode.PERCPU.cells()).append(')'); // decided once per JVM
            }
            if (!policies.equals(Policies.RESYNC)) {
                sb.append(" consistency-policy=").append(policies);
            }
            if (liveCounters != LiveCounters.OFF) {
                sb.append(" live-counters=").append(liveCounters);
            }
            if (degraded) {
                sb.append(" degraded");
            }
        }
        if (iodepth > 1) {
            sb.append(" workers=").append(workers);
        }
        return sb.toString();
    }

    static String joined(List<Target> targets) {
        StringBuilder sb = new StringBuilder();
        for (Target t : targets) {
            sb.append(sb.length() == 0 ? "" : ",").append(t);
        }
        return sb.toString();
    }

    static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }

    private static <E extends Enum<E>> E parseEnum(E[] values, String text, String option) {
        String n = text.trim().toLowerCase(Locale.ROOT);
        StringBuilder valid = new StringBuilder();
        for (E e : values) {
            if (e.toString().equals(n)) {
                return e;
            }
            valid.append(valid.length() == 0 ? "" : ", ").append(e);
        }
        throw new IllegalArgumentException("unknown " + option + " '" + text + "'; valid: " + valid);
    }

    public static final class Builder {
        private RwMode rw = RwMode.RANDREAD;
        private int rwmixread = 50;
        private long bs = 4096;
        private int iodepth = 1;
        private int numjobs = 1;
        private long size = 1L << 30;
        private Duration runtime = Duration.ofSeconds(5);
        private Duration ramp = Duration.ofSeconds(1);
        private Duration warmup = Duration.ofSeconds(2);
        private Backend backend = Backend.MEMORY;
        private Path dir;
        private boolean direct;
        private int disks = 4;
        private long chunk = 512 * 1024;
        private Raid5Algorithm layout = Raid5Algorithm.DEFAULT;
        private Counters counters = Counters.PERCPU;
        private Policies policies = Policies.RESYNC;
        private LiveCounters liveCounters = LiveCounters.OFF;
        private boolean degraded;
        private int repeat = 1;
        private List<Target> targets = List.of(Target.ARRAY);
        private int workers;
        private long seed = 0x5eed_4a1d5L;

        public Builder rw(RwMode v) {
            rw = Objects.requireNonNull(v, "rw");
            return this;
        }

        public Builder rwmixread(int v) {
            rwmixread = v;
            return this;
        }

        public Builder bs(long v) {
            bs = v;
            return this;
        }

        public Builder iodepth(int v) {
            iodepth = v;
            return this;
        }

        public Builder numjobs(int v) {
            numjobs = v;
            return this;
        }

        public Builder size(long v) {
            size = v;
            return this;
        }

        public Builder runtime(Duration v) {
            runtime = Objects.requireNonNull(v, "runtime");
            return this;
        }

        public Builder ramp(Duration v) {
            ramp = Objects.requireNonNull(v, "ramp");
            return this;
        }

        public Builder warmup(Duration v) {
            warmup = Objects.requireNonNull(v, "warmup");
            return this;
        }

        public Builder backend(Backend v) {
            backend = Objects.requireNonNull(v, "backend");
            return this;
        }

        public Builder dir(Path v) {
            dir = v;
            return this;
        }

        public Builder direct(boolean v) {
            direct = v;
            return this;
        }

        public Builder disks(int v) {
            disks = v;
            return this;
        }

        public Builder chunk(long v) {
            chunk = v;
            return this;
        }

        public Builder layout(Raid5Algorithm v) {
            layout = Objects.requireNonNull(v, "layout");
            return this;
        }

        public Builder counters(Counters v) {
            counters = Objects.requireNonNull(v, "counters");
            return this;
        }

        public Builder policies(Policies v) {
            policies = Objects.requireNonNull(v, "policies");
            return this;
        }

        public Builder liveCounters(LiveCounters v) {
            liveCounters = Objects.requireNonNull(v, "liveCounters");
            return this;
        }

        public Builder degraded(boolean v) {
            degraded = v;
            return this;
        }

        public Builder repeat(int v) {
            repeat = v;
            return this;
        }

        public Builder target(Target... v) {
            return targets(List.of(v));
        }

        public Builder targets(List<Target> v) {
            targets = List.copyOf(v);
            return this;
        }
        /** AsyncIo worker threads for iodepth > 1; 0 picks min(numjobs x iodepth, cores). */
        public Builder workers(int v) {
            workers = v;
            return this;
        }

        public Builder seed(long v) {
            seed = v;
            return this;
        }

        public BenchConfig build() {
            require(rwmixread >= 0 && rwmixread <= 100, "--rwmixread " + rwmixread + " must be 0..100");
            require(
                    bs >= 512 && bs % 512 == 0 && bs <= (1L << 30),
                    "--bs " + bs + " must be a multiple of 512 bytes, at most 1g");
            require(iodepth >= 1 && iodepth <= 4096, "--iodepth " + iodepth + " must be 1..4096");
            require(numjobs >= 1 && numjobs <= 1024, "--numjobs " + numjobs + " must be 1..1024");
            require(
                    size % 512 == 0 && size / bs >= numjobs,
                    "--size " + size + " must be a multiple of 512 holding " + "at least one --bs block (" + bs
                            + " bytes) per job (" + numjobs + " jobs)");
            require(!runtime.isNegative() && !runtime.isZero(), "--runtime " + runtime + " must be positive");
            require(!ramp.isNegative(), "--ramp " + ramp + " must not be negative");
            require(!warmup.isNegative(), "--warmup " + warmup + " must not be negative");
            require(disks >= Raid5Layout.MIN_DISKS && disks <= 64, "--disks " + disks + " must be 3..64");
            require(repeat >= 1 && repeat <= 1000, "--repeat " + repeat + " must be 1..1000");
            require(workers >= 0 && workers <= 1024, "--workers " + workers + " must be 0 (auto) to 1024");
            Raid5Layout.checkChunk(chunk);
            if (direct) {
                require(backend == Backend.FILE, "--direct needs --backend file");
                require(
                        bs % FileDisk.DIRECT_ALIGNMENT == 0,
                        "--direct needs --bs a multiple of " + FileDisk.DIRECT_ALIGNMENT + ", got " + bs);
            }
            if (backend == Backend.FILE) {
                require(dir != null, "--backend file needs --dir (a directory for the member files)");
                require(Files.isDirectory(dir), "--dir " + dir + " is not a directory");
            }
            require(!targets.isEmpty(), "--target needs at least one of array, raw, raw-members");
            require(
                    targets.size() == new HashSet<>(targets).size(),
                    "--target " + joined(targets) + " names a target twice");
            if (!targets.contains(Target.ARRAY)) {
                require(!degraded, "--degraded applies to --target array only");
                require(counters != Counters.BOTH, "--counters both applies to --target array only");
                require(policies.equals(Policies.RESYNC), "--consistency-policy applies to --target array only");
                require(liveCounters == LiveCounters.OFF, "--live-counters applies to --target array only");
            }
            return new BenchConfig(this);
        }

        private static void require(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
