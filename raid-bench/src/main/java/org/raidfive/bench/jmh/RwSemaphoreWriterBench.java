package org.raidfive.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.raidfive.counter.PercpuRwSemaphore;

/**
 * A rare writer of the configuration semaphore (a reconfiguration) while other threads poll it with
 * {@code tryReadLock} (as recursion-safe code does): the writer's lock-and-unlock latency with no,
 * one and four pollers, sampled. The first implementation let pollers starve the writer (each
 * failed poll put +1 and -1 in a cell the writer sums): p50 32 us with one poller, 8 ms with four.
 *
 * <pre>
 * java -jar raid-bench/target/benchmarks.jar RwSemaphoreWriterBench -f 1 -wi 2 -i 3 -r 2s
 * </pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class RwSemaphoreWriterBench {

    /** One semaphore per group: its writer and its pollers share it. */
    @State(Scope.Group)
    public static class Sem {
        final PercpuRwSemaphore sem = new PercpuRwSemaphore();
    }

    private static boolean poll(PercpuRwSemaphore s) {
        if (s.tryReadLock()) {
            s.readUnlock();
            return true;
        }
        return false;
    }

    /** The writer alone: the floor. */
    @Benchmark
    @Group("pollers0")
    @GroupThreads(1)
    public void writerAlone(Sem s) {
        s.sem.writeLock();
        s.sem.writeUnlock();
    }

    /** The writer beside one poller. */
    @Benchmark
    @Group("pollers1")
    @GroupThreads(1)
    public void writerBesideOne(Sem s) {
        s.sem.writeLock();
        s.sem.writeUnlock();
    }

    /** The one poller. */
    @Benchmark
    @Group("pollers1")
    @GroupThreads(1)
    public boolean pollerOfOne(Sem s) {
        return poll(s.sem);
    }

    /** The writer beside four pollers (more threads than this machine's two cores). */
    @Benchmark
    @Group("pollers4")
    @GroupThreads(1)
    public void writerBesideFour(Sem s) {
        s.sem.writeLock();
        s.sem.writeUnlock();
    }

    /** The four pollers. */
    @Benchmark
    @Group("pollers4")
    @GroupThreads(4)
    public boolean pollersOfFour(Sem s) {
        return poll(s.sem);
    }
}
