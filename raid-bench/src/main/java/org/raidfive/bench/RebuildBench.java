package org.raidfive.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncLimits;
import org.raidfive.array.SyncProgress;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.parity.Xor;

/**
 * Rebuild rate against the sequential read rate of one member, measured back to back in each round
 * (the target: rebuild at least 0.7x one member's sequential read rate, memory members).
 *
 * <pre>java -cp raid-cli/target/raid.jar org.raidfive.bench.RebuildBench [--disks 4] [--member-size 1g]
 *     [--chunk 512k] [--repeat 3] [--json FILE]</pre>
 *
 * Each round: read one member end to end in 1 MiB requests on one thread (the reference), then fail
 * a member of a filled array, add a fresh memory spare and time the recovery (no speed limit) over
 * the same number of member bytes. Prints one line per round and a summary; writes JSON if asked.
 */
public final class RebuildBench {
    private RebuildBench() {}

    public static void main(String[] args) throws Exception {
        int disks = 4;
        long memberSize = 1L << 30;
        int chunk = 512 * 1024;
        int repeat = 3;
        Path json = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--disks":
                    disks = Integer.parseInt(args[++i]);
                    break;
                case "--member-size":
                    memberSize = Sizes.parse(args[++i]);
                    break;
                case "--chunk":
                    chunk = (int) Sizes.parse(args[++i]);
                    break;
                case "--repeat":
                    repeat = Integer.parseInt(args[++i]);
                    break;
                case "--json":
                    json = Path.of(args[++i]);
                    break;
                default:
                    System.err.println("rebuild-bench: unknown option " + args[i]);
                    System.exit(2);
            }
        }
        PrintStream out = System.out;
        List<Double> reads = new ArrayList<>();
        List<Double> rebuilds = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        List<Double> bounds1 = new ArrayList<>();
        List<Double> bounds2 = new ArrayList<>();
        int piece = Math.min(chunk, 256 * 1024); // the engine's sync piece (ArrayCore.MAX_PIECE)
        for (int round = 0; round <= repeat; round++) {
            settle();
            double read = sequentialRead(memberSize);
            settle();
            double rebuild = rebuild(disks, memberSize, chunk);
            settle();
            double bound1 = bareXor(disks, memberSize, piece, 1);
            settle();
            double bound2 = bareXor(disks, memberSize, piece, 2);
            if (round == 0) {
                continue; // warm-up round for the JIT, not reported
            }
            reads.add(read);
            rebuilds.add(rebuild);
            ratios.add(rebuild / read);
            bounds1.add(bound1);
            bounds2.add(bound2);
            out.printf(
                    "round %d: member sequential read %.2f GiB/s, rebuild %.2f GiB/s, ratio %.3f; bare XOR of %d "
                            + "members into one: 1 thread %.2f GiB/s, 2 threads %.2f GiB/s%n",
                    round,
                    read / (1 << 30),
                    rebuild / (1 << 30),
                    rebuild / read,
                    disks - 1,
                    bound1 / (1 << 30),
                    bound2 / (1 << 30));
        }
        Stats r = Stats.of(reads.stream().mapToDouble(Double::doubleValue).toArray());
        Stats b = Stats.of(rebuilds.stream().mapToDouble(Double::doubleValue).toArray());
        Stats q = Stats.of(ratios.stream().mapToDouble(Double::doubleValue).toArray());
        Stats x1 = Stats.of(bounds1.stream().mapToDouble(Double::doubleValue).toArray());
        Stats x2 = Stats.of(bounds2.stream().mapToDouble(Double::doubleValue).toArray());
        out.printf(
                "summary (%d rounds): read median %.2f GiB/s (%.2f-%.2f), rebuild median %.2f GiB/s (%.2f-%.2f), "
                        + "ratio median %.3f (%.3f-%.3f); bare XOR 1 thread %.2f GiB/s (%.2f-%.2f), "
                        + "2 threads %.2f GiB/s (%.2f-%.2f)%n",
                repeat,
                r.median() / (1 << 30),
                r.min() / (1 << 30),
                r.max() / (1 << 30),
                b.median() / (1 << 30),
                b.min() / (1 << 30),
                b.max() / (1 << 30),
                q.median(),
                q.min(),
                q.max(),
                x1.median() / (1 << 30),
                x1.min() / (1 << 30),
                x1.max() / (1 << 30),
                x2.median() / (1 << 30),
                x2.min() / (1 << 30),
                x2.max() / (1 << 30));
        if (json != null) {
            Files.writeString(
                    json,
                    String.format(
                            Locale.ROOT,
                            "{\"disks\":%d,\"member_bytes\":%d,\"chunk\":%d,\"read_bytes_per_s\":%s,"
                                    + "\"rebuild_bytes_per_s\":%s,\"ratio\":%s,\"bare_xor_1thread_bytes_per_s\":%s,"
                                    + "\"bare_xor_2threads_bytes_per_s\":%s}%n",
                            disks,
                            memberSize,
                            chunk,
                            reads,
                            rebuilds,
                            ratios,
                            bounds1,
                            bounds2));
        }
    }

    /**
     * Lets the previous phase's gigabytes of memory members go before the next is measured: closed
     * {@link MemoryDisk}s are freed by their cleaners after a collection, and freeing is not the
     * next phase's cost.
     */
    private static void settle() throws InterruptedException {
        System.gc();
        Thread.sleep(300);
    }

    /** One thread reading a whole filled member in 1 MiB requests: bytes per second. */
    static double sequentialRead(long memberSize) throws IOException {
        try (MemoryDisk disk = new MemoryDisk(memberSize)) {
            fill(disk, 0, memberSize);
            ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
            long start = System.nanoTime();
            for (long pos = 0; pos + buf.capacity() <= memberSize; pos += buf.capacity()) {
                disk.read(pos, buf, 0, buf.capacity());
            }
            return memberSize * 1e9 / (System.nanoTime() - start);
        }
    }

    /**
     * The rebuild's arithmetic with nothing around it: {@code disks - 1} filled memory members XORed
     * in place into another, {@code piece} bytes per call, the member range split between
     * {@code threads} threads. One thread is the ceiling of a one-thread rebuild on this memory: it
     * moves the same bytes (three member streams in, one out) through the same kernel.
     */
    static double bareXor(int disks, long memberSize, int piece, int threads) throws Exception {
        List<MemoryDisk> sources = new ArrayList<>();
        for (int i = 0; i < disks - 1; i++) {
            MemoryDisk d = new MemoryDisk(memberSize);
            sources.add(d);
            fill(d, 0, memberSize);
        }
        // Allocated last, as the rebuild's spare is: fresh, zeroed memory.
        try (MemoryDisk target = new MemoryDisk(memberSize)) {
            long share = memberSize / threads / piece * piece;
            Thread[] workers = new Thread[threads];
            Exception[] failure = new Exception[1];
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                long from = t * share;
                long to = t == threads - 1 ? memberSize : from + share;
                workers[t] = new Thread(() -> {
                    ByteBuffer[] srcs = new ByteBuffer[disks - 1];
                    int[] offs = new int[disks - 1];
                    try {
                        for (long pos = from; pos + piece <= to; pos += piece) {
                            for (int s = 0; s < srcs.length; s++) {
                                srcs[s] = sources.get(s).directBuffer(pos, piece);
                                offs[s] = sources.get(s).directIndex(pos);
                            }
                            Xor.parity(
                                    target.directBuffer(pos, piece),
                                    target.directIndex(pos),
                                    srcs,
                                    offs,
                                    srcs.length,
                                    piece);
                        }
                    } catch (IOException e) {
                        synchronized (failure) {
                            failure[0] = e;
                        }
                    }
                });
                workers[t].start();
            }
            for (Thread w : workers) {
                w.join();
            }
            long elapsed = System.nanoTime() - start;
            if (failure[0] != null) {
                throw failure[0];
            }
            return memberSize * 1e9 / elapsed;
        } finally {
            for (MemoryDisk d : sources) {
                d.close();
            }
        }
    }

    /** Member bytes per second rebuilt onto a fresh spare of a filled array with one member failed. */
    static double rebuild(int disks, long memberSize, int chunk) throws Exception {
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < disks; i++) {
            members.add(new MemoryDisk(memberSize));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(chunk)
                        .assumeClean(true)
                        .syncLimits(SyncLimits.UNLIMITED)
                        .build(),
                members)) {
            fill(array, 0, array.size());
            array.fail(members.get(1));
            array.remove(members.get(1));
            // Fresh memory costs a page fault per 4 KiB on first touch: allocate (and so zero) the spare
            // before the clock starts; that is the price of the memory, not of the rebuild.
            MemoryDisk spare = new MemoryDisk(memberSize);
            return timeRebuild(array, spare);
        }
    }

    /** Member bytes per second of the recovery onto {@code spare}, added to a degraded {@code array} (no speed limit). */
    static double timeRebuild(Raid5Array array, MemberDisk spare) throws Exception {
        long start = System.nanoTime();
        array.addSpare(spare);
        if (!array.awaitSync(Duration.ofMinutes(10)).ended()) {
            throw new IllegalStateException("rebuild did not finish in 10 minutes");
        }
        long elapsed = System.nanoTime() - start;
        SyncProgress p = array.syncProgress();
        if (p == null || !p.complete()) {
            throw new IllegalStateException("rebuild did not complete: " + p);
        }
        return p.totalBytes() * 1e9 / elapsed;
    }

    private static void fill(MemberDisk disk, long from, long to) throws IOException {
        ByteBuffer pattern = ByteBuffer.allocateDirect(1 << 20);
        byte[] random = new byte[pattern.capacity()];
        new Random(1).nextBytes(random);
        pattern.put(0, random);
        for (long pos = from; pos < to; pos += pattern.capacity()) {
            disk.write(pos, pattern, 0, (int) Math.min(pattern.capacity(), to - pos));
        }
    }
}
