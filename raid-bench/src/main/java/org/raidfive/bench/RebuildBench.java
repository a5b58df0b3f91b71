package org.raidfive.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncLimits;
import org.raidfive.array.SyncProgress;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

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
    private RebuildBench() {
    }

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
        for (int round = 0; round <= repeat; round++) {
            double read = sequentialRead(memberSize);
            double rebuild = rebuild(disks, memberSize, chunk);
            if (round == 0) {
                continue; // warm-up round for the JIT, not reported
            }
            reads.add(read);
            rebuilds.add(rebuild);
            ratios.add(rebuild / read);
            out.printf("round %d: member sequential read %.2f GiB/s, rebuild %.2f GiB/s, ratio %.3f%n", round,
                    read / (1 << 30), rebuild / (1 << 30), rebuild / read);
        }
        Stats r = Stats.of(reads.stream().mapToDouble(Double::doubleValue).toArray());
        Stats b = Stats.of(rebuilds.stream().mapToDouble(Double::doubleValue).toArray());
        Stats q = Stats.of(ratios.stream().mapToDouble(Double::doubleValue).toArray());
        out.printf("summary (%d rounds): read median %.2f GiB/s (%.2f-%.2f), rebuild median %.2f GiB/s (%.2f-%.2f), "
                        + "ratio median %.3f (%.3f-%.3f)%n", repeat, r.median() / (1 << 30), r.min() / (1 << 30),
                r.max() / (1 << 30), b.median() / (1 << 30), b.min() / (1 << 30), b.max() / (1 << 30), q.median(),
                q.min(), q.max());
        if (json != null) {
            Files.writeString(json, String.format(java.util.Locale.ROOT,
                    "{\"disks\":%d,\"member_bytes\":%d,\"chunk\":%d,\"read_bytes_per_s\":%s,"
                            + "\"rebuild_bytes_per_s\":%s,\"ratio\":%s}%n",
                    disks, memberSize, chunk, reads, rebuilds, ratios));
        }
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

    /** Member bytes per second rebuilt onto a fresh spare of a filled array with one member failed. */
    static double rebuild(int disks, long memberSize, int chunk) throws Exception {
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < disks; i++) {
            members.add(new MemoryDisk(memberSize));
        }
        try (Raid5Array array = Raid5Array.create(ArraySpec.builder().chunkSize(chunk).assumeClean(true)
                .syncLimits(SyncLimits.UNLIMITED).build(), members)) {
            fill(array, 0, array.size());
            array.fail(members.get(1));
            array.remove(members.get(1));
            // Fresh memory costs a page fault per 4 KiB on first touch: allocate (and so zero) the spare
            // before the clock starts; that is the price of the memory, not of the rebuild.
            MemoryDisk spare = new MemoryDisk(memberSize);
            long start = System.nanoTime();
            array.addSpare(spare);
            if (!array.awaitSync(Duration.ofMinutes(10))) {
                throw new IllegalStateException("rebuild did not finish in 10 minutes");
            }
            long elapsed = System.nanoTime() - start;
            SyncProgress p = array.syncProgress();
            if (p == null || !p.complete()) {
                throw new IllegalStateException("rebuild did not complete: " + p);
            }
            return p.totalBytes() * 1e9 / elapsed;
        }
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
