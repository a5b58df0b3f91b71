package org.raidfive.bench.jmh;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.raidfive.counter.CounterMode;
import org.raidfive.counter.PercpuRef;

/**
 * The in-flight counter's hot path, as the engine calls it around every
 * member I/O: one get and one put, from 1 or 2 threads ({@code -t}), for
 * each implementation ({@code PercpuRefOwned}: owned cells, plain stores,
 * what {@link CounterMode#PERCPU} is where membarrier(2) works;
 * {@code PercpuRefShared}: the hashed cells with one atomic add each, the
 * fallback; {@code Empty}: the same call with no counter, the harness's
 * ceiling); the cost of a quiesce switch round trip; and that round trip's
 * latency while two other threads run get/put pairs on the same counter
 * ({@code switchUnderLoad}, sampled).
 *
 * <pre>
 * java -jar raid-bench/target/benchmarks.jar 'CounterBench.getPut' \
 *      -f 3 -wi 3 -i 5 -w 1s -r 1s -t 2 -prof gc
 * java -jar raid-bench/target/benchmarks.jar 'CounterBench.switchUnderLoad' -f 3 -wi 3 -i 5 -w 1s -r 1s
 * </pre>
 *
 * <p>Compare implementations only within one run (shared machines drift);
 * the ratios are the result, not the absolute numbers.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class CounterBench {

    /** One get/put pair; returns something so that nothing is dead code. */
    interface Counter {
        long getPut();
    }

    /** The counter under test, shared by all benchmark threads (they contend on it as the engine's do). */
    @State(Scope.Benchmark)
    public static class Counters {
        @Param({"AtomicLong", "LongAdder", "PercpuRefOwned", "PercpuRefShared", "PercpuRefAtomic", "Empty"})
        public String impl;

        Counter counter;

        @Setup(Level.Trial)
        public void setUp() {
            switch (impl) {
                case "AtomicLong" -> {
                    AtomicLong a = new AtomicLong();
                    counter = () -> {
                        a.incrementAndGet();
                        return a.decrementAndGet(); // as atomic_dec_and_test: the result is used
                    };
                }
                case "LongAdder" -> {
                    LongAdder a = new LongAdder();
                    counter = () -> {
                        a.increment();
                        a.decrement();
                        return 0;
                    };
                }
                case "PercpuRefOwned" -> {
                    PercpuRef ref = PercpuRef.inflightCounter(CounterMode.PERCPU);
                    if (!ref.toString().contains("owned")) {
                        throw new IllegalStateException("no owned cells in this JVM (membarrier unavailable; see the log)");
                    }
                    counter = pair(ref);
                }
                case "Empty" -> counter = () -> 0; // the harness alone: the ceiling of any counter here
                case "PercpuRefShared" -> counter = pair(PercpuRef.inflightCounter(CounterMode.PERCPU_SHARED));
                case "PercpuRefAtomic" -> counter = pair(PercpuRef.inflightCounter(CounterMode.ATOMIC));
                default -> throw new IllegalArgumentException("unknown impl " + impl);
            }
        }

        private static Counter pair(PercpuRef ref) {
            return () -> {
                ref.get();
                ref.put();
                return 0;
            };
        }
    }

    /** A striped in-flight counter for the switch round trip (owned cells where membarrier works). */
    @State(Scope.Benchmark)
    public static class SwitchState {
        @Param({"PERCPU"})
        public CounterMode mode;

        PercpuRef ref;

        @Setup(Level.Trial)
        public void setUp() {
            ref = PercpuRef.inflightCounter(mode);
        }

        @TearDown(Level.Trial)
        public void check() {
            ref.switchToAtomicSync();
            if (!ref.isZero()) {
                throw new IllegalStateException("count drifted: " + ref);
            }
        }
    }

    @Benchmark
    public long getPut(Counters s) {
        return s.counter.getPut();
    }

    /**
     * switchToAtomicSync + switchToPercpu: the quiesce cost without waiting
     * (with -t 2 the two threads serialise on the switch lock).
     */
    @Benchmark
    public boolean switchRoundTrip(SwitchState s) {
        return roundTrip(s.ref);
    }

    private static boolean roundTrip(PercpuRef ref) {
        ref.switchToAtomicSync();
        boolean atomic = ref.isAtomic();
        ref.switchToPercpu();
        return atomic;
    }

    /** {@link SwitchState} shared by the threads of one {@code switchUnderLoad} group. */
    @State(Scope.Group)
    public static class LoadedSwitchState extends SwitchState {
    }

    /** The switcher of {@code switchUnderLoad}: one round trip per call, its latency sampled. */
    @Benchmark
    @Group("switchUnderLoad")
    @GroupThreads(1)
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public boolean switcher(LoadedSwitchState s) {
        return roundTrip(s.ref);
    }

    /** The load of {@code switchUnderLoad}: two threads of get/put pairs on the switched counter. */
    @Benchmark
    @Group("switchUnderLoad")
    @GroupThreads(2)
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long load(LoadedSwitchState s) {
        s.ref.get();
        s.ref.put();
        return 0;
    }
}
