package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Layout;

/**
 * The RAID-5 write hole across real process deaths: a degraded array of member files (its last
 * member gone, kept aside as it was), a writer process ({@link WriteHoleWriter}) writing only to
 * chunks of the members that are present, killed with SIGKILL at a random point, {@value #ROUNDS}
 * times. After each kill the array is opened again and checked against independent oracles: the
 * missing member's data, which no write touched, must read back (reconstructed from the others) as
 * the copy kept aside, which is the same as every stripe's parity being consistent with it; and
 * every flushed write must be intact (a block holds its last flushed generation or a later one,
 * whole).
 *
 * <p>With the partial parity log every round must pass (and the dirty, degraded array starts
 * without force). With the resync policy the same rounds must show the corruption in at least one
 * round: that is the proof this test can fail.
 */
@Timeout(value = 600, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WriteHoleTest {
    static final int ROUNDS = 20;
    private static final int MEMBERS = 4;
    private static final int CHUNK = 16 * 1024;
    private static final long MEMBER_SIZE = (4L << 20);

    @TempDir
    Path dir;

    /** The 4 KiB blocks of the array whose chunk is on one of the first {@code present} members. */
    static int[] blocksOnPresentMembers(Raid5Layout layout, int present) {
        int perChunk = layout.chunkSize() / CrashWriter.BLOCK;
        long chunks = layout.arrayBytes() / layout.chunkSize();
        List<Integer> out = new ArrayList<>();
        for (long c = 0; c < chunks; c++) {
            int slot = ArrayOracle.linuxSlots(layout.algorithm().mdNumber(), layout.disks(), c)[1];
            if (slot < present) {
                for (int b = 0; b < perChunk; b++) {
                    out.add((int) (c * perChunk + b));
                }
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "PPL"})
    void killedWritersOfADegradedArrayTearStripesWhichOnlyTheLogRepairs(ConsistencyPolicy policy) throws Exception {
        long seed = System.nanoTime();
        System.out.println("write hole (" + policy + ") seed " + seed);
        Random random = new Random(seed);
        // A healthy array, filled, then its last member failed and kept aside, untouched from then on.
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < MEMBERS; i++) {
            disks.add(FileDisk.createOrExtend(dir.resolve("c" + i + ".img"), MEMBER_SIZE, false));
        }
        byte[] missingData;
        long dataOffset;
        Raid5Layout layout;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .consistencyPolicy(policy)
                        .build(),
                disks)) {
            LoadGenerator.fillRandom(array, seed);
            layout = array.layout();
            dataOffset = array.core.table.slots[0].dataOffsetBytes;
            array.fail(disks.get(MEMBERS - 1));
        }
        missingData = new byte[(int) layout.memberBytesUsed()];
        try (MemberDisk kept = FileDisk.open(dir.resolve("c" + (MEMBERS - 1) + ".img"))) {
            kept.read(dataOffset, ByteBuffer.wrap(missingData), 0, missingData.length);
        }
        int[] blocks = blocksOnPresentMembers(layout, MEMBERS - 1);
        long[] flushedGen = new long[(int) (layout.arrayBytes() / CrashWriter.BLOCK)];
        Arrays.fill(flushedGen, -1);
        long nextGen = 0;
        int corruptRounds = 0;
        long tornAtKill = 0;
        List<String> findings = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            Process child = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-Xmx256m",
                            "-XX:TieredStopAtLevel=1",
                            "-cp",
                            System.getProperty("java.class.path"),
                            WriteHoleWriter.class.getName(),
                            dir.toString(),
                            Integer.toString(MEMBERS),
                            Long.toString(nextGen),
                            "4",
                            Boolean.toString(policy == ConsistencyPolicy.RESYNC))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            int killAfter = 2 + random.nextInt(12);
            long lastFlushed = -1;
            long[] last = {lastFlushed};
            // SIGKILL somewhere in the next generation's writes (reads, then data and parity landing on
            // members at different moments)
            CrashWriter.killAfterFlushes(child, killAfter, random.nextInt(8_000_000), line -> {
                if (line.startsWith("FLUSHED ")) {
                    long gen = Long.parseLong(line.substring(8));
                    for (int b : CrashWriter.blocksOf(gen, blocks.length)) {
                        flushedGen[blocks[b]] = Math.max(flushedGen[blocks[b]], gen);
                    }
                    last[0] = gen;
                }
            });
            lastFlushed = last[0];
            assertTrue(lastFlushed >= 0, "the writer flushed at least once in round " + round);
            nextGen = lastFlushed + 1000;
            tornAtKill += tornStripes(layout, dataOffset, missingData);
            String found = check(layout, dataOffset, missingData, flushedGen, nextGen, policy);
            if (found != null) {
                corruptRounds++;
                findings.add("round " + round + ": " + found);
            }
        }
        System.out.println("write hole (" + policy + "): " + tornAtKill + " torn stripes found in the files after the "
                + "kills; " + corruptRounds + " of " + ROUNDS + " rounds corrupt " + findings);
        if (policy == ConsistencyPolicy.PPL) {
            assertEquals(0, corruptRounds, "with the partial parity log no round may lose data: " + findings);
            assertTrue(
                    tornAtKill > 0, "the kills tore stripes, which the log then repaired (else this proves nothing)");
        } else {
            assertTrue(
                    corruptRounds > 0,
                    "without a log some torn stripe should have corrupted the missing member's " + "data in " + ROUNDS
                            + " rounds (the proof that this test can fail)");
        }
    }

    /**
     * Stripes whose data and parity disagree in the member files as the kill left them, read straight
     * from the files (no engine): the XOR of the present members and the kept copy of the missing one
     * is not zero. Only stripes where the missing member holds data count (elsewhere its parity is gone).
     */
    private long tornStripes(Raid5Layout layout, long dataOffset, byte[] missingData) throws Exception {
        long torn = 0;
        long stripes = layout.memberBytesUsed() / layout.chunkSize();
        int chunk = layout.chunkSize();
        byte[][] m = new byte[MEMBERS - 1][chunk];
        List<MemberDisk> files = new ArrayList<>();
        try {
            for (int i = 0; i < MEMBERS - 1; i++) {
                files.add(FileDisk.open(dir.resolve("c" + i + ".img")));
            }
            for (long st = 0; st < stripes; st++) {
                if (ArrayOracle.linuxSlots(layout.algorithm().mdNumber(), MEMBERS, st * (MEMBERS - 1))[0]
                        == MEMBERS - 1) {
                    continue;
                }
                for (int i = 0; i < MEMBERS - 1; i++) {
                    files.get(i).read(dataOffset + st * chunk, ByteBuffer.wrap(m[i]), 0, chunk);
                }
                int at = (int) (st * chunk);
                for (int b = 0; b < chunk; b++) {
                    if ((m[0][b] ^ m[1][b] ^ m[2][b] ^ missingData[at + b]) != 0) {
                        torn++;
                        break;
                    }
                }
            }
        } finally {
            for (MemberDisk f : files) {
                f.close();
            }
        }
        return torn;
    }

    /** Opens the array as a restart does and returns what is wrong, or null. */
    private String check(
            Raid5Layout layout,
            long dataOffset,
            byte[] missingData,
            long[] flushedGen,
            long genLimit,
            ConsistencyPolicy policy)
            throws Exception {
        List<MemberDisk> present = new ArrayList<>();
        for (int i = 0; i < MEMBERS - 1; i++) {
            present.add(FileDisk.open(dir.resolve("c" + i + ".img")));
        }
        // Without a log a dirty degraded array starts only when forced; with it, it must start as it is.
        AssembleOptions options = AssembleOptions.DEFAULT.withForce(policy == ConsistencyPolicy.RESYNC);
        try (Raid5Array array = Raid5Array.assemble(present, options)) {
            ByteBuffer chunk = ByteBuffer.allocate(layout.chunkSize());
            long chunks = layout.arrayBytes() / layout.chunkSize();
            int algorithm = layout.algorithm().mdNumber();
            long bad = 0;
            long firstBad = -1;
            for (long c = 0; c < chunks; c++) {
                if (ArrayOracle.linuxSlots(algorithm, MEMBERS, c)[1] != MEMBERS - 1) {
                    continue;
                }
                array.read(c * layout.chunkSize(), chunk, 0, layout.chunkSize());
                long stripe = c / (MEMBERS - 1);
                int at = (int) (stripe * layout.chunkSize());
                if (!Arrays.equals(chunk.array(), 0, layout.chunkSize(), missingData, at, at + layout.chunkSize())) {
                    bad++;
                    if (firstBad < 0) {
                        firstBad = c;
                    }
                }
            }
            ByteBuffer block = ByteBuffer.allocate(CrashWriter.BLOCK);
            for (int b = 0; b < flushedGen.length; b++) {
                if (flushedGen[b] < 0) {
                    continue;
                }
                array.read((long) b * CrashWriter.BLOCK, block, 0, CrashWriter.BLOCK);
                long gen = CrashWriter.generationOf(block, b);
                assertTrue(
                        gen >= flushedGen[b],
                        "block " + b + " lost a flushed write: holds gen " + gen + ", flushed gen " + flushedGen[b]);
                assertTrue(gen < genLimit, "block " + b + " holds a generation never written: " + gen);
            }
            return bad == 0
                    ? null
                    : bad + " chunks of the missing member read back wrong (first: array chunk " + firstBad + ")";
        }
    }
}
