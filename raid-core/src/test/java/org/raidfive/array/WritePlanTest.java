package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.raidfive.disk.DirectAccessDisk;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * Which members a small write touches, when read-modify-write and reconstruct-write need as many
 * reads (a one-page write to four members: two each). On members in memory the tie goes to
 * read-modify-write (md's {@code rmw_level} 2): the two data members the write leaves alone are not
 * touched at all. On members without direct access it goes to reconstruct-write, md's default: those
 * two are read. Counted per member, then every byte checked against a flat image and the parity
 * recomputed from the members.
 */
class WritePlanTest {
    private static final long MEMBER = 4L << 20;
    private static final int CHUNK = 64 * 1024;

    /** Counts every access to one member: reads, writes and in-place access. */
    static class Counted extends ForwardingDisk {
        final AtomicInteger accesses = new AtomicInteger();

        Counted(MemberDisk inner) {
            super(inner);
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            accesses.incrementAndGet();
            inner.read(position, dst, dstOffset, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            accesses.incrementAndGet();
            inner.write(position, src, srcOffset, length);
        }
    }

    /** {@link Counted} over a memory member, keeping its direct access (so counting that too). */
    static final class CountedInMemory extends Counted implements DirectAccessDisk {
        private final MemoryDisk memory;

        CountedInMemory(MemoryDisk memory) {
            super(memory);
            this.memory = memory;
        }

        @Override
        public ByteBuffer directBuffer(long position, int length) throws IOException {
            accesses.incrementAndGet();
            return memory.directBuffer(position, length);
        }

        @Override
        public int directIndex(long position) {
            return memory.directIndex(position);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "PPL"})
    void aTiedSmallWriteOnMemoryMembersLeavesTheOtherDataMembersAlone(ConsistencyPolicy policy) throws Exception {
        int[] touched = smallWriteTouches(true, policy);
        // Left-symmetric stripe 0: data index 0 on slot 0, 1 and 2 on slots 1 and 2, parity on slot 3.
        assertEquals(0, touched[1], "data member 1 (not written) was touched: " + describe(touched));
        assertEquals(0, touched[2], "data member 2 (not written) was touched: " + describe(touched));
        assertTrue(
                touched[0] > 0 && touched[3] > 0,
                "read-modify-write reads and writes data 0 and parity: " + describe(touched));
    }

    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "PPL"})
    void aTiedSmallWriteOnOtherMembersReadsTheDataItLeavesAlone(ConsistencyPolicy policy) throws Exception {
        int[] touched = smallWriteTouches(false, policy);
        assertEquals(1, touched[1], "reconstruct-write reads data member 1 once: " + describe(touched));
        assertEquals(1, touched[2], "reconstruct-write reads data member 2 once: " + describe(touched));
    }

    /** Accesses to each of four members (in memory, or without direct access) by one 4 KiB write at array offset 8 KiB; the array then holds the image, parity whole. */
    private static int[] smallWriteTouches(boolean inMemory, ConsistencyPolicy policy) throws Exception {
        List<Counted> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            MemoryDisk memory = new MemoryDisk(MEMBER);
            disks.add(inMemory ? new CountedInMemory(memory) : new Counted(memory));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .consistencyPolicy(policy)
                        .build(),
                disks)) {
            byte[] image = LoadGenerator.fillRandom(array, 7);
            for (Counted d : disks) {
                d.accesses.set(0);
            }
            byte[] block = new byte[4096];
            new Random(8).nextBytes(block);
            array.write(8192, ByteBuffer.wrap(block), 0, block.length);
            int[] touched = new int[disks.size()];
            for (int i = 0; i < touched.length; i++) {
                touched[i] = disks.get(i).accesses.get();
            }
            System.arraycopy(block, 0, image, 8192, block.length);
            ArrayOracle.assertArrayHolds(array, image);
            ArrayOracle.assertParityConsistent(
                    disks,
                    array.core.table.slots[0].dataOffsetBytes,
                    array.layout().memberBytesUsed());
            return touched;
        }
    }

    private static String describe(int[] touched) {
        return "accesses per member " + java.util.Arrays.toString(touched);
    }
}
