package org.raidfive.bench.jmh;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;

/**
 * Address maths per I/O: array chunk to (stripe, data slot, parity slot, member offset), as the
 * read and write paths compute it, over random chunks. Reported as time per mapping.
 *
 * <pre>java -jar raid-bench/target/benchmarks.jar LayoutBench -prof gc</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class LayoutBench {
    private static final int N = 4096;

    @Param({"left-symmetric", "left-asymmetric", "right-symmetric", "parity-last"})
    public String algorithm;

    @Param({"4", "8"})
    public int members;

    private Raid5Layout layout;
    private final long[] chunks = new long[N];

    @Setup
    public void setup() {
        layout = new Raid5Layout(Raid5Algorithm.parse(algorithm), members, 512 * 1024, 1L << 40);
        SplittableRandom r = new SplittableRandom(42);
        long total = layout.stripes() * layout.dataDisks();
        for (int i = 0; i < N; i++) {
            chunks[i] = r.nextLong(total);
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long mapChunk() {
        long acc = 0;
        for (long c : chunks) {
            long stripe = layout.stripeOfChunk(c);
            int slot = layout.dataSlot(stripe, layout.dataIndexOfChunk(c));
            acc += slot + 31L * layout.paritySlot(stripe) + layout.memberOffset(stripe);
        }
        return acc;
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long inverse() {
        long acc = 0;
        for (long c : chunks) {
            acc += layout.dataIndexOfSlot(c, (int) (c % members));
        }
        return acc;
    }
}
