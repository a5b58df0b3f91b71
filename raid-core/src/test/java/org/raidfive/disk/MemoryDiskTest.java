package org.raidfive.disk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class MemoryDiskTest extends MemberDiskContract {
    @Override
    protected MemberDisk create(long size) {
        return new MemoryDisk(size);
    }

    @Test
    void holdsMoreThanTwoGibibytesAcrossSegments() throws IOException {
        long size = (2L << 30) + (64L << 20);
        MemberDisk d = disk(size);
        assertEquals(size, d.size());
        byte[] data = new byte[1 << 20];
        new java.util.Random(3).nextBytes(data);
        long across = (1L << 30) - 4096; // straddles the first segment boundary
        d.write(across, ByteBuffer.wrap(data), 0, data.length);
        d.write(size - data.length, ByteBuffer.wrap(data), 0, data.length);
        byte[] got = new byte[data.length];
        d.read(across, ByteBuffer.wrap(got), 0, got.length);
        assertArrayEquals(data, got);
        d.read(size - data.length, ByteBuffer.wrap(got), 0, got.length);
        assertArrayEquals(data, got);
    }
}
