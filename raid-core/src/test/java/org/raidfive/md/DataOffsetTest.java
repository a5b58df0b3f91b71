package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * DataOffset against Debian's mdadm 4.2 itself. The resource
 * {@code md/mdadm-4.2-size-set.csv} was recorded on loop devices over sparse
 * files with {@code mdadm --create -v --level=5 --raid-devices=4 --metadata=1.2
 * --chunk=C} (Debian mdadm 4.2-5): mdadm prints "size set to NK" (its per-member
 * size: free space after data_offset, rounded down to a chunk) before it needs
 * the md driver, or refuses the member as too small / with no free space.
 */
class DataOffsetTest {
    @Test
    void matchesWhatMdadm42ChoseForEveryRecordedMemberSizeAndChunk() throws IOException {
        final List<String> rows = rows();
        assertTrue(rows.size() > 200, "resource has " + rows.size() + " rows");
        for (final String row : rows) {
            final String[] f = row.split(",");
            final long memberSectors = Long.parseLong(f[0]) / 512;
            final int chunkSectors = Integer.parseInt(f[1]) * 2;
            if (f[2].equals("too-small") || f[2].equals("no-free-space")) {
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DataOffset.usableSectors(memberSectors, chunkSectors),
                        row);
                if (f[2].equals("too-small")) {
                    assertTrue(DataOffset.forNewMember(memberSectors, chunkSectors) > memberSectors, row);
                }
            } else {
                assertEquals(Long.parseLong(f[2]) * 2, DataOffset.usableSectors(memberSectors, chunkSectors), row);
            }
        }
    }

    @Test
    void knownOffsets() {
        final long mib = 2048;
        assertEquals(2048, DataOffset.forNewMember(64 * mib, 128), "64 MiB, 64 KiB chunk");
        assertEquals(
                4096, DataOffset.forNewMember(64 * mib, 1024), "64 MiB, default 512 KiB chunk: headroom >= 2 chunks");
        assertEquals(6144, DataOffset.forNewMember(64 * mib, 2048), "64 MiB, 1 MiB chunk");
        assertEquals(2048, DataOffset.forNewMember(1023 * mib, 128));
        assertEquals(4096, DataOffset.forNewMember(1024 * mib, 128), "1 GiB: headroom 1 MiB");
        assertEquals(18432, DataOffset.forNewMember(8192 * mib, 1024), "8 GiB: headroom 8 MiB");
        assertEquals(133120, DataOffset.forNewMember(127 * 1024 * mib, 1024));
        assertEquals(264192, DataOffset.forNewMember(128 * 1024 * mib, 1024), "128 GiB and up: 128 MiB + 1 MiB");
        assertEquals(264192, DataOffset.forNewMember(3_000_000_000_000L / 512, 1024), "3 TB disk");
    }

    @Test
    void bitmapSpaceFollowsChooseBmSpace() {
        assertEquals(0, DataOffset.bitmapSpace(127));
        assertEquals(8, DataOffset.bitmapSpace(128));
        assertEquals(8, DataOffset.bitmapSpace(8L * 1024 * 1024 * 2 + 8));
        assertEquals(128, DataOffset.bitmapSpace(8L * 1024 * 1024 * 2 + 9));
        assertEquals(128, DataOffset.bitmapSpace(200L * 1024 * 1024 * 2 + 127));
        assertEquals(256, DataOffset.bitmapSpace(200L * 1024 * 1024 * 2 + 128));
    }

    @Test
    void badBlockLogGoesAfterTheBitmapSpace() {
        // the examine output of a 200 GB raid4 member ("Used Dev Size" 419166208) shows offset 136
        assertEquals(136, DataOffset.badBlockLogOffset(419_166_208L));
        assertEquals(16, DataOffset.badBlockLogOffset(126_976L));
    }

    @Test
    void rejectsBadChunkAndTinyMembersWithClearMessages() {
        final IllegalArgumentException chunk =
                assertThrows(IllegalArgumentException.class, () -> DataOffset.forNewMember(1 << 20, 96));
        assertEquals("chunk size 96 sectors must be a power of two of at least 8 (4 KiB)", chunk.getMessage());
        final IllegalArgumentException small =
                assertThrows(IllegalArgumentException.class, () -> DataOffset.usableSectors(2048, 8));
        assertTrue(small.getMessage().contains("2048 sectors is too small"), small.getMessage());
    }

    private static List<String> rows() throws IOException {
        final List<String> rows = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                DataOffsetTest.class.getResourceAsStream("/md/mdadm-4.2-size-set.csv"), StandardCharsets.US_ASCII))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    rows.add(line.trim());
                }
            }
        }
        return rows;
    }
}
