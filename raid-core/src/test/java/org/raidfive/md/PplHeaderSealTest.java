package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * The log's fast header path against the plain one: {@link PplHeader#sealZeroTail} gives the header
 * the checksum a CRC-32C over all 4 KiB gives (computed here with {@link CRC32C} directly), for every
 * entry count, and a header reused through {@link PplHeader#clearEntries} is byte for byte a header
 * begun anew with the same entries.
 */
class PplHeaderSealTest {
    private static final long SEED = Long.getLong("raidfive.test.seed", System.nanoTime());

    static {
        System.out.println("PplHeaderSealTest seed " + SEED);
    }

    @Test
    void theChecksumOverTheWrittenEntriesAndTheZerosIsTheWholeHeadersForEveryEntryCount() {
        Random random = new Random(SEED);
        CRC32C crc = new CRC32C();
        ByteBuffer reused = header();
        PplHeader.begin(reused, 0x1234abcd, 0);
        int previous = 0;
        for (int n = 0; n <= PplHeader.MAX_ENTRIES; n++) {
            int count = n % 2 == 0 ? n : random.nextInt(PplHeader.MAX_ENTRIES + 1);
            long generation = random.nextLong();
            ByteBuffer fresh = header();
            PplHeader.begin(fresh, 0x1234abcd, generation);
            PplHeader.clearEntries(reused, previous);
            reused.putLong(PplHeader.RESERVED + 8, generation);
            for (int i = 0; i < count; i++) {
                long sector = random.nextLong();
                int pp = random.nextInt();
                int data = random.nextInt();
                int disk = random.nextInt(64);
                int sum = random.nextInt();
                PplHeader.entry(fresh, i, sector, pp, data, disk, sum);
                PplHeader.entry(reused, i, sector, pp, data, disk, sum);
            }
            PplHeader.seal(fresh, count, crc);
            PplHeader.sealZeroTail(reused, count, crc);
            assertEquals(
                    fresh, reused.duplicate().clear(), count + " entries, after " + previous + " (seed " + SEED + ")");
            ByteBuffer zeroed = fresh.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            int stored = zeroed.getInt(PplHeader.RESERVED + 20);
            byte[] bytes = new byte[PplHeader.SIZE];
            zeroed.get(0, bytes);
            for (int i = 0; i < 4; i++) {
                bytes[PplHeader.RESERVED + 20 + i] = 0;
            }
            CRC32C whole = new CRC32C();
            whole.update(bytes);
            assertEquals((int) whole.getValue(), stored, count + " entries (seed " + SEED + ")");
            previous = count;
        }
    }

    private static ByteBuffer header() {
        return ByteBuffer.allocate(PplHeader.SIZE).order(ByteOrder.LITTLE_ENDIAN);
    }
}
