package org.raidfive.bench.jmh;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
                        throw new IllegalStateException(
                                "no owned cells in this JVM (membarrier unavailable; see the log)");
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

    private static final VarHandle WORD = MethodHandles.arrayElementVarHandle(long[].class);

    /** One benchmark thread's own words: a mode word and, 128 bytes on, one owned cell (the floors). */
    @State(Scope.Thread)
    public static class OwnCell {
        static final int MODE = 0;
        static final int UP = 16;
        static final int DOWN = 17;
        final long[] w = new long[48];
    }

    /**
     * The floor of owned cells: PercpuRef's section for a get and a put (read the mode, add to the
     * up or down word with one release store, read the mode again) at a fixed cell of the thread's
     * own, with nothing else: no slot lookup, constant indices. No owned-cell counter runs faster
     * here.
     */
    @Benchmark
    public boolean floorSection(OwnCell s) {
        long[] w = s.w;
        return section(w, OwnCell.UP) & section(w, OwnCell.DOWN);
    }

    private static boolean section(long[] w, int word) {
        if ((long) WORD.getOpaque(w, OwnCell.MODE) != 0L) {
            return false;
        }
        WORD.setRelease(w, word, (long) WORD.get(w, word) + 1);
        return (long) WORD.getOpaque(w, OwnCell.MODE) == 0L;
    }

    /**
     * The floor of counting in memory at all: the up word and the down word each loaded,
     * incremented and stored (opaque, so each pair really reaches memory), nothing else. Each
     * load waits for the previous pair's store (store-to-load forwarding): the chain that bounds
     * any counter kept in memory.
     */
    @Benchmark
    public long floorCount(OwnCell s) {
        long[] w = s.w;
        WORD.setOpaque(w, OwnCell.UP, (long) WORD.get(w, OwnCell.UP) + 1);
        WORD.setOpaque(w, OwnCell.DOWN, (long) WORD.get(w, OwnCell.DOWN) + 1);
        return 0;
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
    public static class LoadedSwitchState extends SwitchState {}

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
