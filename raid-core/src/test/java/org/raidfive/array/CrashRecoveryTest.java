package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.raidfive.disk.MemberDisk;

/**
 * A separate JVM writes and flushes in a loop and is killed with SIGKILL, again and again. After each
 * kill the array is reassembled (found dirty, so resynced): every write acknowledged by a completed
 * flush must be there, no block may be torn, and every stripe's parity must match.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CrashRecoveryTest {
    private static final int MEMBERS = 4;
    private static final long MEMBER_SIZE = (1 << 20) + 64L * 16 * 1024;

    @TempDir
    Path dir;

    /**
     * With a write-intent bitmap the restart resyncs only the chunks with bits set: the same checks
     * must hold (parity everywhere, every flushed write), over more rounds.
     */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP"})
    void flushedWritesSurviveSigkillAndParityIsConsistentAfterResync(ConsistencyPolicy policy) throws Exception {
        long seed = System.nanoTime();
        System.out.println("crash seed " + seed);
        Random random = new Random(seed);
        long nextGen = 0;
        long[] flushedGen = null;
        int blockCount = -1;
        int rounds = policy == ConsistencyPolicy.BITMAP ? 10 : 4;
        for (int round = 0; round < rounds; round++) {
            Process child = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-Xmx256m",
                            "-cp",
                            System.getProperty("java.class.path"),
                            CrashWriter.class.getName(),
                            dir.toString(),
                            Integer.toString(MEMBERS),
                            Long.toString(MEMBER_SIZE),
                            Long.toString(nextGen),
                            policy.mdadmName())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            int killAfter = 3 + random.nextInt(25);
            long lastFlushed = -1;
            long[][] gens = {flushedGen};
            int[] blocks = {blockCount};
            long[] last = {lastFlushed};
            CrashWriter.killAfterFlushes(child, killAfter, 0, line -> {
                if (line.startsWith("READY ")) {
                    blocks[0] = Integer.parseInt(line.substring(6));
                    if (gens[0] == null) {
                        gens[0] = new long[blocks[0]];
                        Arrays.fill(gens[0], -1);
                    }
                } else if (line.startsWith("FLUSHED ")) {
                    long gen = Long.parseLong(line.substring(8));
                    for (int b : CrashWriter.blocksOf(gen, blocks[0])) {
                        gens[0][b] = Math.max(gens[0][b], gen);
                    }
                    last[0] = gen;
                }
            });
            flushedGen = gens[0];
            blockCount = blocks[0];
            lastFlushed = last[0];
            assertTrue(lastFlushed >= 0, "the child flushed at least once in round " + round);
            // Unflushed generations after the last acknowledged one may have reached the disk too;
            // the next round starts numbering well past them.
            nextGen = lastFlushed + 1000;
            verify(flushedGen, blockCount, nextGen);
        }
    }

    private void verify(long[] flushedGen, int blockCount, long genLimit) throws Exception {
        List<MemberDisk> disks = CrashWriter.open(dir, MEMBERS, MEMBER_SIZE, false);
        try (Raid5Array array =
                Raid5Array.assemble(disks, AssembleOptions.DEFAULT.withSyncLimits(SyncLimits.UNLIMITED))) {
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            ByteBuffer buf = ByteBuffer.allocate(CrashWriter.BLOCK);
            for (int b = 0; b < blockCount; b++) {
                array.read((long) b * CrashWriter.BLOCK, buf, 0, CrashWriter.BLOCK);
                long gen = CrashWriter.generationOf(buf, b);
                assertTrue(
                        gen >= flushedGen[b],
                        "block " + b + " lost a flushed write: holds gen " + gen + ", flushed gen " + flushedGen[b]);
                assertTrue(gen < genLimit, "block " + b + " holds a generation never written: " + gen);
            }
            ArrayOracle.assertParityConsistent(
                    disks,
                    array.core.table.slots[0].dataOffsetBytes,
                    array.layout().memberBytesUsed());
        }
    }
}
