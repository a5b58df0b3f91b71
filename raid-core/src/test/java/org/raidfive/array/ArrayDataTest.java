package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.layout.Raid5Algorithm;

/**
 * Random reads and writes against a flat reference image, for every layout and several chunk sizes
 * and member counts; afterwards parity is recomputed from scratch and data is found where Linux md
 * would look for it.
 */
class ArrayDataTest {

    static List<MemberDisk> memoryMembers(int count, long size) {
        List<MemberDisk> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            list.add(new MemoryDisk(size));
        }
        return list;
    }

    @Property(tries = 72)
    void randomIoMatchesReferenceAndParityIsConsistent(
            @ForAll @IntRange(min = 0, max = 5) int algorithm,
            @ForAll @IntRange(min = 3, max = 6) int disks,
            @ForAll @IntRange(min = 0, max = 2) int chunkChoice,
            @ForAll @LongRange long seed)
            throws IOException {
        int chunk = new int[] {4096, 16384, 65536}[chunkChoice];
        int stripes = 12;
        long memberSize = (1 << 20) + (long) stripes * chunk;
        List<MemberDisk> members = memoryMembers(disks, memberSize);
        ArraySpec spec = ArraySpec.builder()
                .algorithm(Raid5Algorithm.fromMdNumber(algorithm))
                .chunkSize(chunk)
                .assumeClean(true)
                .build();
        Random random = new Random(seed);
        try (Raid5Array array = Raid5Array.create(spec, members)) {
            int size = (int) array.size();
            assertEquals((long) stripes * chunk * (disks - 1), size);
            byte[] image = new byte[size];
            for (int op = 0; op < 60; op++) {
                int sectors = 1 + random.nextInt(Math.min(size / 512, 3 * (disks - 1) * chunk / 512));
                if (random.nextInt(4) == 0) {
                    sectors = 1 + random.nextInt(16);
                }
                int len = sectors * 512;
                int off = 512 * random.nextInt((size - len) / 512 + 1);
                int bufferOffset = random.nextInt(3) * 512;
                ByteBuffer buf =
                        random.nextBoolean() ? ByteBuffer.allocate(len + 1024) : ByteBuffer.allocateDirect(len + 1024);
                if (random.nextInt(3) > 0) {
                    byte[] data = new byte[len];
                    random.nextBytes(data);
                    buf.put(bufferOffset, data);
                    array.write(off, buf, bufferOffset, len);
                    System.arraycopy(data, 0, image, off, len);
                } else {
                    array.read(off, buf, bufferOffset, len);
                    byte[] got = new byte[len];
                    buf.get(bufferOffset, got);
                    byte[] want = java.util.Arrays.copyOfRange(image, off, off + len);
                    assertArrayEquals(want, got, "read " + off + "+" + len + " (seed " + seed + ")");
                }
            }
            ArrayOracle.assertArrayHolds(array, image);
            long dataOffset = array.status().members().get(0).dataOffset();
            ArrayOracle.assertParityConsistent(
                    members, dataOffset, array.layout().memberBytesUsed());
            ArrayOracle.assertDataPlacement(members, algorithm, chunk, dataOffset, image);
        }
    }
}
