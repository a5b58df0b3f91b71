package org.raidfive.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.array.Raid5Array;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.DataOffset;

/**
 * The storage behind every target of one configuration, made once and kept for all rounds: array
 * members, the raw disk, the raw-members disks. Each run opens its target afresh ({@link #open}):
 * an array is created anew on the same members with the run's counter mode (members read as zeros
 * or hold what earlier runs wrote, parity consistent either way, so {@code assumeClean} is true).
 * File members are filled once through their target so that reads find allocated blocks.
 */
final class TargetSet implements AutoCloseable {
    private final BenchConfig config;
    private final Map<BenchConfig.Target, List<MemberDisk>> disks = new EnumMap<>(BenchConfig.Target.class);
    private final List<Path> files = new ArrayList<>();
    private final long memberDataBytes;

    TargetSet(BenchConfig config) throws IOException {
        this.config = config;
        long chunk = config.chunk();
        int data = config.disks() - 1;
        memberDataBytes = ceilDiv(ceilDiv(config.size(), data), chunk) * chunk;
        try {
            for (BenchConfig.Target t : config.targets()) {
                switch (t) {
                    case ARRAY:
                        disks.put(t, make("member", config.disks(), arrayMemberBytes(memberDataBytes)));
                        break;
                    case RAW:
                        disks.put(t, make("raw", 1, config.size()));
                        break;
                    default:
                        disks.put(
                                t,
                                make(
                                        "stripe",
                                        config.disks(),
                                        ceilDiv(ceilDiv(config.size(), config.disks()), chunk) * chunk));
                        break;
                }
            }
            if (config.backend() == BenchConfig.Backend.FILE) {
                for (BenchConfig.Target t : config.targets()) {
                    try (Opened o = open(
                            new Variant(
                                    t,
                                    t == BenchConfig.Target.ARRAY ? CounterMode.PERCPU : null,
                                    t == BenchConfig.Target.ARRAY ? ConsistencyPolicy.RESYNC : null),
                            false)) {
                        fill(o.disk());
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Member size whose data area (after md's data offset) holds {@code dataBytes}. */
    private long arrayMemberBytes(long dataBytes) {
        long member = dataBytes + (1 << 20);
        while (true) {
            // Room for the larger data offset of the policies run (a partial parity log's area).
            boolean ppl = config.policies().policies().contains(ConsistencyPolicy.PPL);
            long offset = DataOffset.forNewMember(member / 512, config.chunk() / 512, ppl) * 512;
            if (member - offset >= dataBytes) {
                return member;
            }
            member = dataBytes + offset;
        }
    }

    private List<MemberDisk> make(String kind, int count, long bytes) throws IOException {
        List<MemberDisk> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (config.backend() == BenchConfig.Backend.MEMORY) {
                list.add(new MemoryDisk(bytes, "bench-" + kind + "#" + i));
            } else {
                Path p = config.dir()
                        .resolve("raidfive-bench-" + ProcessHandle.current().pid() + "-" + kind + i + ".img");
                Files.deleteIfExists(p);
                files.add(p);
                list.add(FileDisk.createOrExtend(p, bytes, config.direct()));
            }
        }
        return list;
    }

    /** A target ready for one run; closing it closes the array (not the members). */
    record Opened(MemberDisk disk, Raid5Array array) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            if (array != null) {
                array.close();
            }
        }
    }

    Opened open(Variant v) throws IOException {
        return open(v, config.degraded());
    }

    private Opened open(Variant v, boolean degraded) throws IOException {
        List<MemberDisk> base = disks.get(v.target());
        switch (v.target()) {
            case RAW:
                return new Opened(KeepOpenDisk.of(base.get(0)), null);
            case RAW_MEMBERS:
                return new Opened(new StripedDisks(keepOpen(base), config.chunk()), null);
            default:
                List<MemberDisk> members = keepOpen(base);
                ArraySpec spec = ArraySpec.builder()
                        .chunkSize(config.chunk())
                        .algorithm(config.layout())
                        .counterMode(v.counterMode())
                        .consistencyPolicy(v.policy())
                        .assumeClean(true)
                        .memberDataBytes(memberDataBytes)
                        .name("raidfive:bench")
                        .build();
                Raid5Array array = Raid5Array.create(spec, members);
                if (v.live()) {
                    // Published as raid serve would; the file goes when the run closes the array.
                    Path file = Files.createTempFile("raid-bench-", ".counters");
                    array.publishCounters(file);
                }
                if (degraded) {
                    array.fail(members.get(0));
                }
                return new Opened(array, array);
        }
    }

    private static List<MemberDisk> keepOpen(List<MemberDisk> base) {
        List<MemberDisk> list = new ArrayList<>(base.size());
        for (MemberDisk d : base) {
            list.add(KeepOpenDisk.of(d));
        }
        return list;
    }

    private void fill(MemberDisk disk) throws IOException {
        int step = 1 << 20;
        ByteBuffer buf =
                ByteBuffer.allocateDirect(step + FileDisk.DIRECT_ALIGNMENT).alignedSlice(FileDisk.DIRECT_ALIGNMENT);
        for (int i = 0; i < step; i += 8) {
            buf.putLong(i, 0x9E3779B97F4A7C15L * (i + 1));
        }
        long region = config.size();
        for (long at = 0; at < region; at += step) {
            disk.write(at, buf, 0, (int) Math.min(step, region - at));
        }
        disk.flush();
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    @Override
    public void close() throws IOException {
        IOException failure = null;
        for (List<MemberDisk> list : disks.values()) {
            for (MemberDisk d : list) {
                try {
                    d.close();
                } catch (IOException e) {
                    failure = failure == null ? e : failure;
                }
            }
        }
        disks.clear();
        for (Path p : files) {
            Files.deleteIfExists(p);
        }
        files.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
