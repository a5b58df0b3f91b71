package org.raidfive.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.OfflineReshape;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncLimits;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * Reshape rate beside raidfive's own rebuild on the same members, back to back in each round (the
 * reshape issue's target: at least 0.8x).
 *
 * <pre>java -cp raid-cli/target/raid.jar org.raidfive.bench.ReshapeBench [--backend memory|file]
 *     [--dir DIR] [--direct] [--disks 4] [--member-size 512m] [--chunk 512k] [--to-chunk SIZE | --shrink] [--repeat 3] [--json FILE]</pre>
 *
 * Each round: a filled array of {@code disks} members grows by one ({@link OfflineReshape}, timed
 * from its start to its end), or with {@code --to-chunk SIZE} changes its chunk on the same members,
 * or with {@code --shrink} loses one (made with 16 MiB of room after the data, shrunk to the size
 * one member fewer holds);
 * then, on the same members, one is failed and a fresh spare is rebuilt
 * (timed as {@link RebuildBench} times it). Both rates are member bytes per second: the bytes of one
 * member's data area each pass goes through, per second (a reshape reads {@code disks} and writes
 * {@code disks + 1} member streams, a rebuild reads {@code disks} and writes one). Fresh memory is
 * allocated (zeroed) before each clock starts; with {@code --direct} the member files are opened
 * with O_DIRECT (no page cache). Round 0 warms the JIT and is not reported.
 */
public final class ReshapeBench {
    private ReshapeBench() {}

    public static void main(String[] args) throws Exception {
        String backend = "memory";
        boolean direct = false;
        Path dir = null;
        int disks = 4;
        long memberSize = 512L << 20;
        int chunk = 512 * 1024;
        int repeat = 3;
        int toChunk = 0;
        boolean shrink = false;
        Path json = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--backend" -> backend = args[++i];
                case "--direct" -> direct = true;
                case "--dir" -> dir = Path.of(args[++i]);
                case "--disks" -> disks = Integer.parseInt(args[++i]);
                case "--member-size" -> memberSize = Sizes.parse(args[++i]);
                case "--chunk" -> chunk = (int) Sizes.parse(args[++i]);
                case "--to-chunk" -> toChunk = (int) Sizes.parse(args[++i]);
                case "--shrink" -> shrink = true;
                case "--repeat" -> repeat = Integer.parseInt(args[++i]);
                case "--json" -> json = Path.of(args[++i]);
                default -> {
                    System.err.println("reshape-bench: unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (backend.equals("file") && dir == null) {
            System.err.println("reshape-bench: --backend file needs --dir DIR");
            System.exit(2);
        }
        PrintStream out = System.out;
        List<Double> reshapes = new ArrayList<>();
        List<Double> rebuilds = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        for (int round = 0; round <= repeat; round++) {
            double[] r = round(backend, direct, dir, disks, memberSize, chunk, toChunk, shrink);
            if (round == 0) {
                continue;
            }
            reshapes.add(r[0]);
            rebuilds.add(r[1]);
            ratios.add(r[0] / r[1]);
            out.printf(
                    Locale.ROOT,
                    "round %d: %s members, reshape %s %.1f MiB/s per member, rebuild on the %d members "
                            + "%.1f MiB/s, ratio %.3f%n",
                    round,
                    backend,
                    shrink
                            ? disks + " -> " + (disks - 1)
                            : toChunk == 0
                                    ? disks + " -> " + (disks + 1)
                                    : Sizes.chunk(chunk) + " -> " + Sizes.chunk(toChunk),
                    r[0] / (1 << 20),
                    shrink ? disks - 1 : toChunk == 0 ? disks + 1 : disks,
                    r[1] / (1 << 20),
                    r[0] / r[1]);
        }
        Stats a = Stats.of(reshapes.stream().mapToDouble(Double::doubleValue).toArray());
        Stats b = Stats.of(rebuilds.stream().mapToDouble(Double::doubleValue).toArray());
        Stats q = Stats.of(ratios.stream().mapToDouble(Double::doubleValue).toArray());
        out.printf(
                Locale.ROOT,
                "summary (%d rounds, %s): reshape median %.1f MiB/s (%.1f-%.1f), rebuild median %.1f MiB/s "
                        + "(%.1f-%.1f), ratio median %.3f (%.3f-%.3f)%n",
                repeat,
                backend,
                a.median() / (1 << 20),
                a.min() / (1 << 20),
                a.max() / (1 << 20),
                b.median() / (1 << 20),
                b.min() / (1 << 20),
                b.max() / (1 << 20),
                q.median(),
                q.min(),
                q.max());
        if (json != null) {
            Files.writeString(
                    json,
                    String.format(
                            Locale.ROOT,
                            "{\"backend\":\"%s\",\"disks\":%d,\"member_bytes\":%d,\"chunk\":%d,\"to_chunk\":%d,"
                                    + "\"shrink\":%s,"
                                    + "\"reshape_member_bytes_per_s\":%s,\"rebuild_member_bytes_per_s\":%s,"
                                    + "\"ratio\":%s}%n",
                            backend,
                            disks,
                            memberSize,
                            chunk,
                            toChunk,
                            shrink,
                            reshapes,
                            rebuilds,
                            ratios));
        }
    }

    /**
     * {reshape, rebuild} member bytes per second on one set of members: a grow by one member, or with
     * {@code toChunk} a chunk change of the same members, or with {@code shrink} one member fewer (the
     * array made with room after its data, as a shrink needs).
     */
    private static double[] round(
            String backend,
            boolean direct,
            Path dir,
            int disks,
            long memberSize,
            int chunk,
            int toChunk,
            boolean shrink)
            throws Exception {
        List<MemberDisk> members = new ArrayList<>();
        List<MemberDisk> real = new ArrayList<>();
        try {
            for (int i = 0; i <= disks + 1; i++) {
                MemberDisk d = backend.equals("memory")
                        ? new MemoryDisk(memberSize)
                        : FileDisk.createOrExtend(dir.resolve("reshape-bench-" + i + ".img"), memberSize, direct);
                real.add(d);
                members.add(KeepOpenDisk.of(d));
            }
            List<MemberDisk> old = members.subList(0, disks);
            MemberDisk added = members.get(disks);
            MemberDisk spare = members.get(disks + 1);
            if (backend.equals("file")) {
                for (MemberDisk d : List.of(added, spare)) {
                    fill(d, 0, memberSize, 0); // the page cache's pages, as memory's are allocated first
                }
            }
            ArraySpec.Builder spec =
                    ArraySpec.builder().chunkSize(chunk).assumeClean(true).syncLimits(SyncLimits.UNLIMITED);
            if (shrink) {
                spec.memberDataBytes(memberSize - (16L << 20)); // room after the data for the offset's move up
            }
            long shrunk;
            try (Raid5Array array = Raid5Array.create(spec.build(), old)) {
                fill(array, 0, array.size(), 1);
                shrunk = array.size() / (disks - 1) * (disks - 2);
            }
            if (backend.equals("file")) {
                zeroHead(added);
                zeroHead(spare);
            }
            long perMember;
            long start = System.nanoTime();
            try (OfflineReshape r = shrink
                    ? OfflineReshape.shrink(old, disks - 1, shrunk)
                    : toChunk == 0
                            ? OfflineReshape.grow(old, List.of(added))
                            : OfflineReshape.change(old, toChunk, null)) {
                if (!r.run(() -> false, p -> {})) {
                    throw new IllegalStateException("reshape stopped");
                }
                perMember = r.sectorsTotal() * 512 / (r.newDisks() - 1);
            }
            double reshape = perMember * 1e9 / (System.nanoTime() - start);
            List<MemberDisk> all =
                    new ArrayList<>(members.subList(0, shrink ? disks - 1 : toChunk == 0 ? disks + 1 : disks));
            double rebuild;
            try (Raid5Array array =
                    Raid5Array.assemble(all, AssembleOptions.DEFAULT.withSyncLimits(SyncLimits.UNLIMITED))) {
                array.fail(all.get(1));
                array.remove(all.get(1));
                rebuild = RebuildBench.timeRebuild(array, spare);
            }
            return new double[] {reshape, rebuild};
        } finally {
            for (MemberDisk d : real) {
                d.close();
            }
            if (dir != null) {
                for (int i = 0; i <= disks + 1; i++) {
                    Files.deleteIfExists(dir.resolve("reshape-bench-" + i + ".img"));
                }
            }
            System.gc();
            Thread.sleep(300);
        }
    }

    /** The first 64 KiB zeroed: a disk to add must not look like it holds data. */
    private static void zeroHead(MemberDisk d) throws IOException {
        d.write(0, ByteBuffer.allocateDirect(64 * 1024), 0, 64 * 1024);
    }

    private static void fill(MemberDisk disk, long from, long to, long seed) throws IOException {
        ByteBuffer pattern = ByteBuffer.allocateDirect(1 << 20);
        if (seed != 0) {
            byte[] random = new byte[pattern.capacity()];
            new Random(seed).nextBytes(random);
            pattern.put(0, random);
        }
        for (long pos = from; pos < to; pos += pattern.capacity()) {
            disk.write(pos, pattern, 0, (int) Math.min(pattern.capacity(), to - pos));
        }
    }
}
