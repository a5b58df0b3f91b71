package org.raidfive.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncLimits;
import org.raidfive.array.SyncProgress;
import org.raidfive.bench.Sizes;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code raid demo}: the whole story on an in-memory array, for a newcomer: create, write random
 * data, fail a member, read it back degraded, add a spare, rebuild, verify every byte and the
 * parity, then measure 4 KiB random-read IOPS with atomic and with per-CPU counters.
 */
@Command(
        header = "Walk through the whole story on an in-memory array.",
        name = "demo",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Walk through an in-memory RAID-5 array: create, write random data, fail a member, read it "
                    + "back degraded, add a spare, rebuild, verify every byte and the parity, then compare 4 KiB "
                    + "random-read IOPS with atomic and per-CPU counters.",
            "Exit 0 only if everything verified."
        })
final class DemoCommand extends Verb {
    private static final int CHUNK = 512 * 1024;
    private static final int MEMBERS = 4;

    @Option(
            names = "--member-size",
            paramLabel = "SIZE",
            defaultValue = "256M",
            converter = SizeConverter.class,
            description = "Size of each in-memory member (default: ${DEFAULT-VALUE}).")
    long memberSize;

    @Option(
            names = "--seconds",
            paramLabel = "S",
            defaultValue = "2",
            description =
                    "Length of each IOPS run; two runs per counter mode, interleaved (default: ${DEFAULT-VALUE}).")
    double seconds;

    @Option(
            names = "--threads",
            paramLabel = "N",
            defaultValue = "2",
            description = "Reader threads for the IOPS runs (default: ${DEFAULT-VALUE}).")
    int threads;

    private PrintWriter out;
    private boolean allGood = true;

    @Override
    public Integer call() throws Exception {
        if (seconds <= 0 || threads < 1) {
            throw CliException.usage("--seconds must be positive and --threads at least 1");
        }
        out = out();
        long started = System.nanoTime();
        out.println("raid demo: a RAID-5 array of " + MEMBERS + " in-memory members, start to finish");
        out.println();
        story();
        iops();
        out.println();
        out.printf(
                Locale.ROOT,
                "raid demo: %s (%.1f s)%n",
                allGood ? "everything verified" : "VERIFICATION FAILED",
                (System.nanoTime() - started) / 1e9);
        out.flush();
        return allGood ? ExitCode.OK : ExitCode.PROBLEM;
    }

    private void story() throws Exception {
        long t = System.nanoTime();
        List<MemoryDisk> allocated = allocate(MEMBERS + 1, memberSize, "memory#");
        List<MemberDisk> disks = new ArrayList<>(allocated.subList(0, MEMBERS));
        MemberDisk spare = allocated.get(MEMBERS);
        ArraySpec spec = ArraySpec.builder()
                .chunkSize(CHUNK)
                .name("demo:0")
                .assumeClean(true)
                .syncLimits(SyncLimits.UNLIMITED)
                .build();
        try (Raid5Array array = Raid5Array.create(spec, disks)) {
            ArrayStatus s = array.status();
            long size = array.size();
            step(
                    "create",
                    String.format(
                            Locale.ROOT,
                            "%d members of %s, chunk %s, %s: %s array (UUID %s) in %s",
                            MEMBERS,
                            Sizes.human(memberSize),
                            Sizes.chunk(s.chunkSize()),
                            s.layout(),
                            Sizes.human(size),
                            s.uuid(),
                            elapsed(t)));
            detail("memory starts zeroed, so parity already holds: no initial resync");

            t = System.nanoTime();
            String written = writeRandom(array, size);
            step(
                    "write",
                    String.format(
                            Locale.ROOT,
                            "%s of random data in %s, sha256 %s",
                            Sizes.human(size),
                            elapsed(t),
                            shortHash(written)));

            MemberDisk victim = disks.get(2);
            array.fail(victim);
            step(
                    "fail",
                    "marked " + victim.name() + " (slot 2) faulty: the array is "
                            + array.status().state());

            t = System.nanoTime();
            String degraded = readAll(array, size);
            check(
                    "read",
                    "degraded read in " + elapsed(t) + ", slot 2 reconstructed from parity: sha256 "
                            + shortHash(degraded),
                    written.equals(degraded));

            array.addSpare(spare);
            step("add", "added " + spare.name() + " as a spare: the array takes it into slot 2 and rebuilds");
            t = System.nanoTime();
            SyncProgress p = new Progress(out, System.console() != null, Duration.ofSeconds(1), "           ")
                    .follow(array, () -> false);
            check(
                    "rebuild",
                    p == null
                            ? "no rebuild ran"
                            : String.format(
                                    Locale.ROOT,
                                    "%s of each member rebuilt in %s",
                                    Sizes.human(p.totalBytes()),
                                    elapsed(t)),
                    p != null && p.complete() && !array.isDegraded());

            t = System.nanoTime();
            String after = readAll(array, size);
            check(
                    "verify",
                    "every byte read back in " + elapsed(t) + ": sha256 " + shortHash(after),
                    written.equals(after));
            t = System.nanoTime();
            array.startCheck(false);
            array.awaitSync(Duration.ofMinutes(10));
            long mismatches = array.mismatchSectors();
            check(
                    "parity",
                    "check pass over every stripe in " + elapsed(t) + ": " + mismatches + " mismatched sectors",
                    mismatches == 0);
        }
    }

    /** Interleaved runs (atomic, per-CPU, atomic, per-CPU) after a short warm-up of each. */
    private void iops() throws Exception {
        out.println();
        step(
                "iops",
                String.format(
                        Locale.ROOT, "4 KiB random reads, %d threads, %.1f s per run, interleaved:", threads, seconds));
        long size = Math.min(memberSize, 32L << 20);
        try (Raid5Array atomic = memoryArray(CounterMode.ATOMIC, size);
                Raid5Array percpu = memoryArray(CounterMode.PERCPU, size)) {
            Raid5Array[] arrays = {atomic, percpu};
            double warm = Math.min(0.5, seconds);
            for (Raid5Array a : arrays) {
                measure(a, warm);
            }
            double[][] runs = new double[2][2];
            for (int run = 0; run < 2; run++) {
                for (int m = 0; m < 2; m++) {
                    runs[m][run] = measure(arrays[m], seconds);
                }
            }
            String[] names = {"atomic counters", "percpu counters"};
            for (int m = 0; m < 2; m++) {
                detail(String.format(
                        Locale.ROOT,
                        "%-16s %,12.0f IOPS  (runs: %,.0f, %,.0f)",
                        names[m],
                        (runs[m][0] + runs[m][1]) / 2,
                        runs[m][0],
                        runs[m][1]));
            }
            double ratio = (runs[1][0] + runs[1][1]) / (runs[0][0] + runs[0][1]);
            detail(String.format(
                    Locale.ROOT,
                    "percpu / atomic = %.2fx  (one machine, one run: a ratio, not a " + "benchmark; see raid-bench)",
                    ratio));
        }
    }

    private static Raid5Array memoryArray(CounterMode mode, long memberBytes) throws IOException {
        List<MemberDisk> disks = new ArrayList<>(
                allocate(MEMBERS, memberBytes, "memory-" + mode.name().toLowerCase(Locale.ROOT) + "#"));
        return Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .counterMode(mode)
                        .name("demo-" + mode.name().toLowerCase(Locale.ROOT))
                        .build(),
                disks);
    }

    /**
     * Allocates memory disks on as many threads as there are CPUs: zeroing fresh off-heap memory is
     * page-fault bound, and a 1 GiB array is most of the demo's start-up time.
     */
    private static List<MemoryDisk> allocate(int count, long size, String prefix) {
        MemoryDisk[] disks = new MemoryDisk[count];
        IntStream.range(0, count)
                .parallel()
                .forEach(i -> disks[i] = new MemoryDisk(size, prefix + (i < MEMBERS ? Integer.toString(i) : "spare")));
        return List.of(disks);
    }

    /** IOPS of {@code threads} threads reading random 4 KiB blocks for {@code secs} seconds. */
    private double measure(Raid5Array array, double secs) throws InterruptedException {
        long blocks = array.size() / 4096;
        long[] counts = new long[threads];
        Throwable[] errors = new Throwable[threads];
        long deadline = System.nanoTime() + (long) (secs * 1e9);
        Thread[] workers = new Thread[threads];
        long begin = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            int id = i;
            workers[i] = new Thread(
                    () -> {
                        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
                        SplittableRandom random = new SplittableRandom(id * 7919L + 17);
                        long n = 0;
                        try {
                            while ((n & 255) != 0 || System.nanoTime() < deadline) {
                                array.read(random.nextLong(blocks) * 4096, buf, 0, 4096);
                                n++;
                            }
                        } catch (Throwable e) {
                            errors[id] = e;
                        }
                        counts[id] = n;
                    },
                    "demo-reader-" + i);
            workers[i].start();
        }
        long total = 0;
        for (int i = 0; i < threads; i++) {
            workers[i].join();
            total += counts[i];
            if (errors[i] != null) {
                allGood = false;
                detail("reader " + i + " failed: " + errors[i]);
            }
        }
        return total / ((System.nanoTime() - begin) / 1e9);
    }

    /** Fills the array with seeded random bytes, a stripe-aligned block at a time; returns their sha256. */
    private static String writeRandom(Raid5Array array, long size) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        int block = (int) Math.min(size, array.layout().stripeDataBytes() * 4);
        ByteBuffer buf = ByteBuffer.allocateDirect(block).order(ByteOrder.LITTLE_ENDIAN);
        SplittableRandom random = new SplittableRandom(20240229L);
        for (long at = 0; at < size; at += block) {
            int n = (int) Math.min(block, size - at);
            LongBuffer longs = buf.clear().asLongBuffer();
            while (longs.hasRemaining()) {
                longs.put(random.nextLong());
            }
            array.write(at, buf, 0, n);
            buf.position(0).limit(n);
            sha.update(buf);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static String readAll(Raid5Array array, long size) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        int block = 8 << 20;
        ByteBuffer buf = ByteBuffer.allocateDirect(block);
        for (long at = 0; at < size; at += block) {
            int n = (int) Math.min(block, size - at);
            array.read(at, buf, 0, n);
            buf.position(0).limit(n);
            sha.update(buf);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private void step(String what, String text) {
        out.printf(Locale.ROOT, "  %-8s %s%n", what, text);
        out.flush();
    }

    private void detail(String text) {
        out.printf(Locale.ROOT, "  %-8s %s%n", "", text);
        out.flush();
    }

    private void check(String what, String text, boolean ok) {
        step(what, text + (ok ? "  [ok]" : "  [FAILED]"));
        allGood &= ok;
    }

    private static String shortHash(String hex) {
        return hex.substring(0, 16) + "...";
    }

    private static String elapsed(long startNanos) {
        return String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - startNanos) / 1e9);
    }
}
