package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * A member file truncated under an open array: its data is rebuilt from parity, never returned as
 * zeros, and the file is not grown back by later writes.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MemberShrinksTest {
    @TempDir
    Path dir;

    @Test
    void truncatedMemberIsFailedAndItsDataRebuiltNeverZeros() throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(FileDisk.createOrExtend(dir.resolve("t" + i + ".img"), 4L << 20, false));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(64 * 1024).assumeClean(true).build(), disks)) {
            byte[] image = new byte[(int) array.size()];
            new Random(7).nextBytes(image);
            array.write(0, ByteBuffer.wrap(image), 0, image.length);
            long keep = array.status().members().get(2).dataOffset() + 256 * 1024;
            try (FileChannel c = FileChannel.open(dir.resolve("t2.img"), StandardOpenOption.WRITE)) {
                c.truncate(keep);
            }
            byte[] more = new byte[64 * 1024];
            new Random(8).nextBytes(more);
            for (int off = 0; off < image.length; off += 512 * 1024) {
                array.write(off, ByteBuffer.wrap(more), 0, more.length); // writes that would grow it back
                System.arraycopy(more, 0, image, off, more.length);
            }
            ArrayOracle.assertArrayHolds(array, image);
            assertTrue(array.isDegraded(), "the shrunk member is failed");
            assertEquals(MemberState.FAULTY, array.core.table.slots[2].state);
            assertEquals(keep, Files.size(dir.resolve("t2.img")), "never grown back");
        }
    }
}
