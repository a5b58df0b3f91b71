package org.raidfive.bench.jmh;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.Raid5Array;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * Whole-array 4 KiB random I/O on 4 memory members from 2 threads, next to the same reads straight
 * to one {@link MemoryDisk}: the per-I/O cost of the engine (config lock, layout, counters, stripe
 * locks, parity) with no scheduling around it. {@code -prof gc} shows the allocation per I/O.
 *
 * <pre>java -jar raid-bench/target/benchmarks.jar ArrayIoBench -prof gc</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-XX:MaxDirectMemorySize=4g")
@Threads(2)
public class ArrayIoBench {
    static final int BS = 4096;
    static final long REGION = 256L << 20;

    @State(Scope.Benchmark)
    public static class Target {
        @Param({"PERCPU", "ATOMIC"})
        public CounterMode counters;

        Raid5Array array;
        MemoryDisk raw;

        @Setup(Level.Trial)
        public void setup() throws IOException {
            List<MemberDisk> members = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                members.add(new MemoryDisk(REGION / 3 + (8L << 20)));
            }
            array = Raid5Array.create(
                    ArraySpec.builder()
                            .chunkSize(512 * 1024)
                            .assumeClean(true)
                            .counterMode(counters)
                            .build(),
                    members);
            raw = new MemoryDisk(REGION);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            array.close();
            raw.close();
        }
    }

    @State(Scope.Thread)
    public static class Issuer {
        final ByteBuffer buf = ByteBuffer.allocateDirect(BS + 4096).alignedSlice(4096);
        long x = System.nanoTime() | 1;

        long nextOffset() {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            return Math.floorMod(x, REGION / BS) * BS;
        }
    }

    @Benchmark
    public ByteBuffer arrayRandRead(Target t, Issuer i) throws IOException {
        t.array.read(i.nextOffset(), i.buf, 0, BS);
        return i.buf;
    }

    @Benchmark
    public ByteBuffer arrayRandWrite(Target t, Issuer i) throws IOException {
        t.array.write(i.nextOffset(), i.buf, 0, BS);
        return i.buf;
    }

    @Benchmark
    public ByteBuffer rawRandRead(Target t, Issuer i) throws IOException {
        t.raw.read(i.nextOffset(), i.buf, 0, BS);
        return i.buf;
    }

    @Benchmark
    public ByteBuffer rawRandWrite(Target t, Issuer i) throws IOException {
        t.raw.write(i.nextOffset(), i.buf, 0, BS);
        return i.buf;
    }
}
