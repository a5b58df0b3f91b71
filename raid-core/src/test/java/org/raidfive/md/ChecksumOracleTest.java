package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * An independent oracle for the byte layout and the checksum: the superblock
 * written field by field into a byte[] with hand-rolled little-endian stores
 * at md_p.h's offsets, and md's checksum recomputed by a plain loop over that
 * array. The codec must produce exactly these bytes.
 */
class ChecksumOracleTest {
    @Test
    void encodeMatchesHandBuiltBytesIncludingChecksum() {
        final Superblock sb = Samples.member(2)
                .featureMap(Superblock.MD_FEATURE_RECOVERY_OFFSET)
                .recoveryOffset(0x1234_5678_9aL)
                .bblogSize(8)
                .bblogOffset(16)
                .bblogShift(0)
                .cntCorrectedRead(7)
                .devflags(Superblock.DEVFLAG_WRITE_MOSTLY)
                .devRole(3, Superblock.ROLE_FAULTY)
                .devRole(4, Superblock.ROLE_SPARE);

        final byte[] expected = handBuilt(sb);
        assertArrayEquals(expected, Samples.encode(sb));
        assertEquals(le32(expected, 216), sb.sbCsum());
    }

    @Test
    void oddMaxDevAddsTrailingSixteenBitWord() {
        final Superblock sb = Samples.member(0).maxDev(129).devRole(128, 1);
        sb.devRole(1, Superblock.ROLE_FAULTY); // keep slot 1 unique
        final byte[] expected = handBuilt(sb);
        assertEquals(256 + 2 * 129, expected.length);
        assertArrayEquals(expected, Samples.encode(sb));
        assertEquals(le32(expected, 216), Superblock.checksum(ByteBuffer.wrap(expected)));
    }

    @Test
    void checksumIgnoresStoredChecksumAndBufferOrderAndPosition() {
        final byte[] block = Samples.block(Samples.member(1));
        final int csum = le32(block, 216);
        block[216] ^= 0x5a; // the stored value is taken as zero
        final ByteBuffer big = ByteBuffer.allocate(block.length + 100).order(ByteOrder.BIG_ENDIAN);
        big.position(100);
        big.put(block).position(100);
        assertEquals(csum, Superblock.checksum(big));
        assertEquals(100, big.position());
    }

    @Test
    void foldAddsCarryOfSixtyFourBitSum() {
        // all-ones roles and large fields make the 64-bit sum exceed 32 bits, so the fold matters
        final Superblock sb = Samples.member(0)
                .maxDev(1920)
                .events(0xffff_ffff_ffff_fff0L)
                .ctime(-1L)
                .utime(-1L);
        final byte[] bytes = Samples.encode(sb);
        long sum = 0;
        for (int i = 0; i + 4 <= bytes.length; i += 4) {
            sum += i == 216 ? 0 : Integer.toUnsignedLong(le32(bytes, i));
        }
        assertTrue(sum >>> 32 != 0, "test needs a sum that overflows 32 bits");
        assertEquals((int) ((sum & 0xffff_ffffL) + (sum >>> 32)), le32(bytes, 216));
    }

    /** struct mdp_superblock_1, one field at a time, then md's checksum by a direct loop. */
    static byte[] handBuilt(final Superblock sb) {
        final int maxDev = sb.maxDev();
        final byte[] b = new byte[256 + 2 * maxDev];
        put32(b, 0, 0xa92b4efc);
        put32(b, 4, 1);
        put32(b, 8, sb.featureMap());
        put32(b, 12, 0);
        System.arraycopy(sb.setUuid(), 0, b, 16, 16);
        final byte[] name = sb.name().getBytes(StandardCharsets.UTF_8);
        System.arraycopy(name, 0, b, 32, name.length);
        put64(b, 64, sb.ctime());
        put32(b, 72, sb.level());
        put32(b, 76, sb.layout());
        put64(b, 80, sb.size());
        put32(b, 88, sb.chunkSectors());
        put32(b, 92, sb.raidDisks());
        put32(b, 96, sb.bitmapOffset());
        put32(b, 100, sb.newLevel());
        put64(b, 104, sb.reshapePosition());
        put32(b, 112, sb.deltaDisks());
        put32(b, 116, sb.newLayout());
        put32(b, 120, sb.newChunk());
        put32(b, 124, sb.newOffset());
        put64(b, 128, sb.dataOffset());
        put64(b, 136, sb.dataSize());
        put64(b, 144, sb.superOffset());
        put64(b, 152, sb.recoveryOffset());
        put32(b, 160, sb.devNumber());
        put32(b, 164, sb.cntCorrectedRead());
        System.arraycopy(sb.deviceUuid(), 0, b, 168, 16);
        b[184] = (byte) sb.devflags();
        b[185] = (byte) sb.bblogShift();
        b[186] = (byte) sb.bblogSize();
        b[187] = (byte) (sb.bblogSize() >> 8);
        put32(b, 188, sb.bblogOffset());
        put64(b, 192, sb.utime());
        put64(b, 200, sb.events());
        put64(b, 208, sb.resyncOffset());
        put32(b, 216, 0); // sb_csum, zero while summing
        put32(b, 220, maxDev);
        // pad3[32] at 224: zeros
        for (int i = 0; i < maxDev; i++) {
            b[256 + 2 * i] = (byte) sb.devRole(i);
            b[257 + 2 * i] = (byte) (sb.devRole(i) >> 8);
        }

        long sum = 0;
        int i = 0;
        for (; i + 4 <= b.length; i += 4) {
            sum += (b[i] & 0xffL) | (b[i + 1] & 0xffL) << 8 | (b[i + 2] & 0xffL) << 16 | (b[i + 3] & 0xffL) << 24;
        }
        if (i + 2 == b.length) {
            sum += (b[i] & 0xffL) | (b[i + 1] & 0xffL) << 8;
        }
        final long folded = (sum & 0xffffffffL) + (sum >>> 32);
        put32(b, 216, (int) folded);
        return b;
    }

    static int le32(final byte[] b, final int at) {
        return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | (b[at + 3] & 0xff) << 24;
    }

    private static void put32(final byte[] b, final int at, final int v) {
        for (int k = 0; k < 4; k++) {
            b[at + k] = (byte) (v >>> (8 * k));
        }
    }

    private static void put64(final byte[] b, final int at, final long v) {
        for (int k = 0; k < 8; k++) {
            b[at + k] = (byte) (v >>> (8 * k));
        }
    }
}
