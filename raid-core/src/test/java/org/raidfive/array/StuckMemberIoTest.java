package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * A member I/O that never completes (a hung remote disk) holds the array's I/O path. Reconfiguring
 * and closing wait for it only as long as the drain timeout, then fail with an error that names the
 * member, having written nothing; once the member answers again everything goes on. The first
 * implementation waited uninterruptibly for ever (quiesce took the configuration write side with no
 * bound): this class then hits its own timeout.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class StuckMemberIoTest {
    private static final int CHUNK = 16384;
    private static final long MEMBER_SIZE = (1 << 20) + 64L * CHUNK;

    @Test
    void reconfigurationAndCloseGiveUpOnAHungMemberNamingItAndWriteNothing() throws Exception {
        List<MemberDisk> members = new ArrayList<>(ArrayDataTest.memoryMembers(4, MEMBER_SIZE));
        FaultyDisk hung = new FaultyDisk(new MemoryDisk(MEMBER_SIZE, "hung-member"));
        members.set(1, hung);
        MemoryDisk spare = new MemoryDisk(MEMBER_SIZE, "spare");
        Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), members);
        byte[] image = LoadGenerator.fillRandom(array, 7);
        array.setDrainTimeout(Duration.ofMillis(500));

        hung.hang();
        AtomicReference<Object> readResult = new AtomicReference<>();
        Thread reader = new Thread(
                () -> {
                    ByteBuffer buf = ByteBuffer.allocateDirect(3 * CHUNK);
                    try {
                        array.read(0, buf, 0, 3 * CHUNK); // the first stripe's data: member 1 holds its second chunk
                        byte[] got = new byte[3 * CHUNK];
                        buf.get(0, got);
                        readResult.set(got);
                    } catch (Throwable t) {
                        readResult.set(t);
                    }
                },
                "stuck-reader");
        reader.start();
        while (hung.hungCalls() == 0) {
            Thread.sleep(1);
        }

        byte[] spareBefore = snapshot(spare);
        IOException add = assertThrows(IOException.class, () -> array.addSpare(spare));
        assertTrue(add.getMessage().contains("hung-member (1 I/O)"), add.getMessage());
        assertTrue(add.getMessage().contains("did not finish within 500 ms"), add.getMessage());
        assertArrayEquals(spareBefore, snapshot(spare), "a refused addSpare wrote to the spare");
        assertEquals(4, array.status().members().size(), "the refused spare joined anyway");

        IOException close = assertThrows(IOException.class, array::close);
        assertTrue(
                close.getMessage().contains("cannot close")
                        && close.getMessage().contains("hung-member"),
                close.getMessage());
        assertTrue(reader.isAlive(), "the stuck read should still be waiting on its member");

        hung.heal();
        reader.join(10_000);
        assertFalse(reader.isAlive());
        Object result = readResult.get();
        if (result instanceof Throwable t) {
            throw new AssertionError("the held-up read failed", t);
        }
        byte[] expected = java.util.Arrays.copyOfRange(image, 0, 3 * CHUNK);
        assertArrayEquals(expected, (byte[]) result);

        array.addSpare(spare, false);
        assertEquals(5, array.status().members().size());
        ArrayOracle.assertArrayHolds(array, image);
        ArrayOracle.assertParityConsistent(
                members,
                array.core.table.slots[0].dataOffsetBytes,
                array.layout().memberBytesUsed());
        array.close();
    }

    private static byte[] snapshot(MemoryDisk disk) throws IOException {
        byte[] copy = new byte[(int) disk.size()];
        disk.read(0, ByteBuffer.wrap(copy), 0, copy.length);
        return copy;
    }
}
