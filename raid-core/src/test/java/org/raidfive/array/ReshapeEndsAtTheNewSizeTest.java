package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.raidfive.array.RoomyArrays.added;
import static org.raidfive.array.RoomyArrays.make;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.RoomyArrays.Made;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;

/**
 * The array a served reshape exports ({@link OfflineReshape#reader}) has md's size at every moment:
 * the old size while a grow runs, the new size from its end on (md sets it in {@code
 * raid5_finish_reshape}), with the new space read as md leaves it (zeros) and writable there; the
 * array assembled afterwards has that size and holds what was written, its parity consistent.
 */
@Timeout(60)
class ReshapeEndsAtTheNewSizeTest {
    @Test
    void aGrownArrayIsServedAtItsNewSizeOnceTheReshapeEnds() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeEndsAtTheNewSizeTest seed " + seed);
        Made m = make(3, seed);
        List<MemberDisk> newMember = added("grow");
        List<MemberDisk> all = new ArrayList<>(m.members());
        all.addAll(newMember);
        byte[] tail = new byte[256 << 10];
        new Random(seed).nextBytes(tail);
        long newSize;
        byte[] expected;
        try (OfflineReshape r = OfflineReshape.grow(m.members(), newMember)) {
            MemberDisk served = r.reader();
            long oldSize = r.reshapingArrayBytes();
            newSize = r.newArrayBytes();
            assertTrue(newSize > oldSize, newSize + " > " + oldSize);
            assertEquals(oldSize, served.size(), "the size while the grow runs");
            assertThrows(
                    IllegalArgumentException.class,
                    () -> served.read(oldSize, ByteBuffer.allocate(4096), 0, 4096),
                    "a read past the old size while the grow runs");
            assertTrue(r.run(() -> false, p -> {}));
            assertEquals(newSize, served.size(), "the size once the grow has ended");
            assertEquals(newSize, r.arrayBytes());
            byte[] back = new byte[(int) newSize];
            served.read(0, ByteBuffer.wrap(back), 0, back.length);
            expected = Arrays.copyOf(m.image(), (int) newSize); // md zeroes the new space
            assertArrayEquals(expected, back, "the grown array read through the served disk");
            served.write(newSize - tail.length, ByteBuffer.wrap(tail), 0, tail.length);
            System.arraycopy(tail, 0, expected, (int) (newSize - tail.length), tail.length);
            served.read(0, ByteBuffer.wrap(back), 0, back.length);
            assertArrayEquals(expected, back, "after a write into the new space");
            r.markClean();
        }
        Superblock sb = SuperblockIo.read(all.get(0));
        assertEquals(4, sb.raidDisks());
        assertTrue(sb.isClean(), "clean after markClean");
        ArrayOracle.assertParityConsistent(all, sb.dataOffset() * 512, sb.size() * 512);
        try (Raid5Array array = Raid5Array.assemble(all)) {
            assertEquals(newSize, array.size(), "the assembled array's size");
            ArrayOracle.assertArrayHolds(array, expected);
        }
    }
}
