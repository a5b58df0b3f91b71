package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * A check cannot miss a mismatch: one byte flipped at a random place of a random member (data or
 * parity, first or last stripe, any lane of the parallel pass) is counted exactly, as md counts
 * it (8 sectors: one 4 KiB page), both in the pass's outcome and in the array's mismatch_cnt, and
 * read only after the pass ended. Random positions; the seed is printed.
 */
@Timeout(300)
class CheckCountsEveryMismatchTest {
    private static final int CHUNK = 64 * 1024;
    private static final long MEMBER = 4L << 20;

    @TempDir
    Path dir;

    @Test
    void everyFlippedByteIsCountedOnce() throws Exception {
        long seed = Long.getLong("raid.test.seed", System.nanoTime());
        System.out.println("CheckCountsEveryMismatchTest seed " + seed + " (rerun with -Draid.test.seed=" + seed + ")");
        Random random = new Random(seed);
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(FileDisk.createOrExtend(dir.resolve("m" + i + ".img"), MEMBER, false));
        }
        ArraySpec spec = ArraySpec.builder()
                .chunkSize(CHUNK)
                .assumeClean(true)
                .name("test:check")
                .build();
        try (Raid5Array array = Raid5Array.create(spec, disks)) {
            byte[] data = new byte[(int) array.size()];
            random.nextBytes(data);
            array.write(0, ByteBuffer.wrap(data), 0, data.length);
            array.flush();
            long dataOffset = array.status().members().get(0).dataOffset();
            long used = array.layout().memberBytesUsed();
            for (int round = 0; round < 25; round++) {
                int member = random.nextInt(4);
                long at = dataOffset + (round == 0 ? 0 : round == 1 ? used - 1 : (long) (random.nextDouble() * used));
                ByteBuffer one = ByteBuffer.allocate(1);
                disks.get(member).read(at, one, 0, 1);
                byte was = one.get(0);
                disks.get(member).write(at, ByteBuffer.wrap(new byte[] {(byte) ~was}), 0, 1);
                array.startCheck(false);
                SyncOutcome outcome = array.awaitSync(Duration.ofSeconds(60));
                assertTrue(outcome.ended() && outcome.pass().complete(), "round " + round + ": " + outcome);
                assertEquals(8, outcome.mismatchSectors(), "round " + round + ": member " + member + " byte " + at);
                assertEquals(8, array.mismatchSectors(), "round " + round + ": mismatch_cnt");
                disks.get(member).write(at, ByteBuffer.wrap(new byte[] {was}), 0, 1);
            }
            array.startCheck(false);
            SyncOutcome clean = array.awaitSync(Duration.ofSeconds(60));
            assertEquals(0, clean.mismatchSectors(), "every byte put back");
        }
    }
}
