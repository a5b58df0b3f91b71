package org.raidfive.bench.jmh;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.annotations.Warmup;
import org.raidfive.parity.Xor;

/**
 * The XOR kernel on the shapes RAID-5 uses: parity of {@code members - 1} data chunks (what a
 * full-stripe write computes, and what ISA-L's {@code xor_gen} over {@code members} buffers
 * computes), and {@code xorInto} of one chunk (a read-modify-write step).
 *
 * <p>Throughput is reported twice: ops/s, and the {@code bytes} counter, which is bytes of sources
 * per second (divide by 1e9 for GB/s, the unit of the ISA-L peer's {@code data_GBps}). Buffers are
 * direct and 4 KiB aligned, as the engine's scratch buffers are.
 *
 * <pre>java -jar raid-bench/target/benchmarks.jar XorBench -prof gc</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class XorBench {
    @Param({"4096", "16384", "65536", "262144", "1048576"})
    public int chunk;

    @Param({"3", "4", "5", "6", "7", "8"})
    public int members;

    private ByteBuffer dst;
    private ByteBuffer[] sources;
    private int[] offsets;

    /** Bytes of sources processed, as a rate. */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Bytes {
        public long bytes;
    }

    @Setup(Level.Trial)
    public void setup() {
        sources = new ByteBuffer[members - 1];
        offsets = new int[members - 1];
        for (int i = 0; i < sources.length; i++) {
            sources[i] = aligned(chunk);
            for (int j = 0; j < chunk; j += 8) {
                sources[i].putLong(j, 0x9E3779B97F4A7C15L * (j + 31L * i + 1));
            }
        }
        dst = aligned(chunk);
    }

    static ByteBuffer aligned(int size) {
        return ByteBuffer.allocateDirect(size + 4096).alignedSlice(4096).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Benchmark
    public ByteBuffer parity(Bytes b) {
        Xor.parity(dst, 0, sources, offsets, sources.length, chunk);
        b.bytes += (long) sources.length * chunk;
        return dst;
    }

    @Benchmark
    public ByteBuffer xorInto(Bytes b) {
        Xor.xorInto(dst, 0, sources[0], 0, chunk);
        b.bytes += chunk;
        return dst;
    }
}
