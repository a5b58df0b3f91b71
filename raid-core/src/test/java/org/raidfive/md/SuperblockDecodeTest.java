package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Each rule of decode, one at a time: the exception type and a message that names the member and the problem. */
class SuperblockDecodeTest {
    private static final String MEMBER = "/dev/fake2";

    @Test
    void decodesWhatItEncodedAndAdvancesPastTheSpan() throws SuperblockException {
        final Superblock sb = Samples.member(1);
        final ByteBuffer block = ByteBuffer.wrap(Samples.block(sb));
        final Superblock back = Superblock.decode(block, MEMBER);
        assertEquals(sb, back);
        assertEquals(256 + 2 * 128, block.position());
        assertEquals(128, back.maxDev());
        assertEquals(1, back.role());
        assertTrue(back.isClean());
        assertEquals("rf-testhost:r5", back.name());
        assertEquals(Samples.ARRAY_UUID, MdUuid.format(back.setUuid()));
    }

    @Test
    void zerosAreNotAnMdMember() {
        final SuperblockException ex =
                assertThrows(SuperblockException.class, () -> Superblock.decode(ByteBuffer.allocate(4096), MEMBER));
        assertFalse(ex instanceof CorruptSuperblockException);
        assertEquals(MEMBER + ": not an md member (magic 0x00000000, expected 0xa92b4efc)", ex.getMessage());
        assertEquals(MEMBER, ex.memberName());
    }

    @Test
    void shortBufferIsNotAnMdMember() {
        final SuperblockException ex =
                assertThrows(SuperblockException.class, () -> Superblock.decode(ByteBuffer.allocate(100), MEMBER));
        assertTrue(ex.getMessage().contains("only 100 bytes"), ex.getMessage());
    }

    @Test
    void otherMajorVersionIsUnsupported() {
        final SuperblockException ex = rejectRaw(b -> b.putInt(4, 2));
        assertFalse(ex instanceof CorruptSuperblockException);
        assertEquals(MEMBER + ": unsupported superblock major version 2 (only 1 is supported)", ex.getMessage());
    }

    @Test
    void badChecksumSaysExpectedAndFound() {
        final byte[] block = Samples.block(Samples.member(0));
        final int stored = ChecksumOracleTest.le32(block, 216);
        block[300] ^= 1; // a role byte
        final int expected = Superblock.checksum(ByteBuffer.wrap(block));
        final SuperblockException ex =
                assertThrows(CorruptSuperblockException.class, () -> Superblock.decode(ByteBuffer.wrap(block), MEMBER));
        assertEquals(
                String.format("%s: bad superblock checksum: expected 0x%08x, found 0x%08x", MEMBER, expected, stored),
                ex.getMessage());
    }

    @Test
    void maxDevBeyondKernelLimitIsRejected() {
        assertProblem("max_dev 1921 out of range (0..1920)", b -> b.putInt(220, 1921));
    }

    @Test
    void maxDevPastTheBytesReadIsTruncation() {
        final byte[] exact = Samples.encode(Samples.member(0));
        final ByteBuffer b = ByteBuffer.wrap(exact).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(220, 200);
        final SuperblockException ex =
                assertThrows(CorruptSuperblockException.class, () -> Superblock.decode(ByteBuffer.wrap(exact), MEMBER));
        assertEquals(MEMBER + ": truncated superblock: max_dev 200 needs 656 bytes, only 512 read", ex.getMessage());
    }

    @Test
    void nonZeroPaddingIsRejected() {
        assertProblem("reserved field pad0 is 0x00000001, must be zero", b -> b.putInt(12, 1));
        assertProblem("reserved field pad3[5] is 0x80, must be zero", b -> b.put(224 + 5, (byte) 0x80));
    }

    @Test
    void superOffsetMustBeWhereItWasRead() {
        assertProblem("super_offset says sector 0, but the superblock was read at sector 8", b -> b.putLong(144, 0));
    }

    @Test
    void levelOtherThanFiveIsUnsupported() {
        final SuperblockException ex = rejectRaw(b -> b.putInt(72, 6));
        assertFalse(ex instanceof CorruptSuperblockException);
        assertEquals(MEMBER + ": raid level 6 is not supported (only raid5)", ex.getMessage());
        assertEquals(
                MEMBER + ": raid level -1 is not supported (only raid5)",
                rejectRaw(b -> b.putInt(72, -1)).getMessage());
    }

    @Test
    void unknownLayoutIsUnsupported() {
        final SuperblockException ex = rejectRaw(b -> b.putInt(76, 17));
        assertTrue(ex.getMessage().startsWith(MEMBER + ": layout 17 is not a raid5 layout"), ex.getMessage());
        assertTrue(ex.getMessage().contains("left-symmetric (ls)"), ex.getMessage());
    }

    @Test
    void chunkMustBeAPowerOfTwoOfAtLeastFourKiB() {
        assertProblem("chunk size 1000 sectors is not a power of two", b -> b.putInt(88, 1000));
        assertProblem("chunk size 0 sectors is not a power of two", b -> b.putInt(88, 0));
        assertProblem("chunk size 4 sectors is smaller than raid5's minimum of 8 (4 KiB)", b -> b.putInt(88, 4));
    }

    @Test
    void raidDisksOutOfRange() {
        assertProblem("raid_disks 1 out of range (2..1920)", b -> b.putInt(92, 1));
        assertProblem("raid_disks 4294967295 out of range (2..1920)", b -> b.putInt(92, -1));
    }

    @Test
    void dataOffsetInsideTheSuperblockIsRejected() {
        assertProblem("data_offset 8 overlaps the superblock (sectors 8..8)", b -> b.putLong(128, 8));
    }

    @Test
    void dataSizeAndSizeMustAgree() {
        assertProblem("data_size 9 sectors is too small (the kernel needs at least 10)", b -> b.putLong(136, 9));
        assertProblem("size 130000 sectors exceeds data_size 126976", b -> {
            b.putLong(136, 126976);
            b.putLong(80, 130000);
        });
        assertProblem("size (sectors used per member) is 0", b -> b.putLong(80, 0));
        assertProblem("data_offset 4096 + data_size 18446744073709551615 overflows 64 bits", b -> b.putLong(136, -1L));
    }

    @Test
    void devNumberBeyondKernelLimit() {
        assertProblem("dev_number 5000 out of range (0..1919)", b -> b.putInt(160, 5000));
    }

    @Test
    void rolesMustBeSlotsOrSpareFaultyJournal() {
        assertProblem("dev_roles[2] is slot 4, beyond raid_disks 4", b -> b.putShort(256 + 4, (short) 4));
        assertProblem(
                "dev_roles[9] is 0xff00, neither a slot nor spare/faulty/journal",
                b -> b.putShort(256 + 18, (short) 0xff00));
        assertProblem(
                "this device's role is journal but feature_map lacks MD_FEATURE_JOURNAL",
                b -> b.putShort(256 + 2 * 2, (short) Superblock.ROLE_JOURNAL));
    }

    @Test
    void unknownFeatureBitsAreUnsupported() {
        final SuperblockException ex = rejectRaw(b -> b.putInt(8, 0x4000));
        assertFalse(ex instanceof CorruptSuperblockException);
        assertEquals(MEMBER + ": unsupported feature bits 0x4000 (feature_map 0x4000)", ex.getMessage());
    }

    @Test
    void contradictoryFeaturesAreRejected() {
        assertProblem(
                "PPL cannot be combined with a bitmap or a journal (feature_map 0x401)",
                b -> b.putInt(8, Superblock.MD_FEATURE_PPL | Superblock.MD_FEATURE_BITMAP_OFFSET));
        assertProblem(
                "MD_FEATURE_RAID0_LAYOUT is set on a raid5 member",
                b -> b.putInt(8, Superblock.MD_FEATURE_RAID0_LAYOUT));
        assertProblem(
                "MD_FEATURE_BAD_BLOCKS is set but bblog_offset is 0",
                b -> b.putInt(8, Superblock.MD_FEATURE_BAD_BLOCKS));
    }

    @Test
    void bytesBeyondTheChecksummedSpanAreNotPartOfTheSuperblock() throws SuperblockException {
        final Superblock sb = Samples.member(3);
        final byte[] block = Samples.block(sb);
        for (int i = sb.encodedLength(); i < block.length; i++) {
            block[i] = (byte) 0xa5;
        }
        assertEquals(sb, Superblock.decode(ByteBuffer.wrap(block), MEMBER));
    }

    @Test
    void decodeWorksAtAnyPositionAndByteOrder() throws SuperblockException {
        final Superblock sb = Samples.member(2);
        final ByteBuffer direct = ByteBuffer.allocateDirect(5000).order(ByteOrder.BIG_ENDIAN);
        direct.position(333);
        sb.encode(direct);
        assertEquals(333 + sb.encodedLength(), direct.position());
        direct.position(333);
        assertEquals(sb, Superblock.decode(direct.slice(), MEMBER));
    }

    @Test
    void encodeRefusesWhatDecodeWouldRefuse() {
        final IllegalStateException ex = assertThrows(
                IllegalStateException.class,
                () -> Samples.member(0).chunkSectors(96).encode(ByteBuffer.allocate(4096)));
        assertEquals(
                "refusing to encode an invalid superblock: chunk size 96 sectors is not a power of two",
                ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Samples.member(0).encode(ByteBuffer.allocate(511)));
    }

    @Test
    void encodeGrowsMaxDevToCoverDevNumberAsTheKernelDoes() throws SuperblockException {
        final Superblock sb = Samples.member(0).maxDev(4);
        sb.devNumber(6); // a new spare
        assertEquals(7, sb.maxDev());
        sb.maxDev(4); // shrink again behind its back: encode must still cover dev 6
        final byte[] bytes = Samples.encode(sb);
        assertEquals(256 + 2 * 7, bytes.length);
        final Superblock back = Superblock.decode(ByteBuffer.wrap(bytes), MEMBER);
        assertEquals(7, back.maxDev());
        assertEquals(Superblock.ROLE_SPARE, back.role());
        assertEquals(2, back.devRole(2));
    }

    @Test
    void settingARoleBeyondMaxDevGrowsItWithSpares() {
        final Superblock sb = Samples.member(0);
        sb.devRole(200, Superblock.ROLE_FAULTY);
        assertEquals(201, sb.maxDev());
        assertEquals(Superblock.ROLE_SPARE, sb.devRole(150));
        assertEquals(Superblock.ROLE_FAULTY, sb.devRole(200));
        assertEquals(Superblock.ROLE_SPARE, sb.devRole(5000), "beyond max_dev reads as spare, like role_from_sb");
        assertThrows(IllegalArgumentException.class, () -> sb.devRole(1920, 0));
    }

    @Test
    void mdadmMaxDevRoundsToWholeSectors() {
        assertEquals(128, Superblock.mdadmMaxDev(4));
        assertEquals(128, Superblock.mdadmMaxDev(128));
        assertEquals(384, Superblock.mdadmMaxDev(129));
        assertEquals(1920, Superblock.mdadmMaxDev(1920));
    }

    @Test
    void mdTimeSplitsSecondsAndMicros() {
        final long t = MdTime.of(1_700_000_123L, 456_789);
        assertEquals(1_700_000_123L, MdTime.seconds(t));
        assertEquals(456_789, MdTime.micros(t));
        assertEquals(1_700_000_123L | (456_789L << 40), t);
        assertEquals(java.time.Instant.ofEpochSecond(1_700_000_123L, 456_789_000L), MdTime.toInstant(t));
        assertEquals(t, MdTime.of(MdTime.toInstant(t)));
        assertThrows(IllegalArgumentException.class, () -> MdTime.of(1L << 40, 0));
        assertThrows(IllegalArgumentException.class, () -> MdTime.of(0, 1_000_000));
    }

    @Test
    void toStringListsFieldsByMdName() {
        final Superblock sb = Samples.member(1).devRole(3, Superblock.ROLE_FAULTY);
        Samples.encode(sb);
        final String text = sb.toString();
        for (final String field : new String[] {
            "magic=0xa92b4efc",
            "major_version=1",
            "feature_map=0x0",
            "set_uuid=" + Samples.ARRAY_UUID,
            "set_name='rf-testhost:r5'",
            "level=5",
            "layout=2 (left-symmetric)",
            "chunksize=1024",
            "raid_disks=4",
            "data_offset=4096",
            "super_offset=8",
            "dev_number=1",
            "events=42",
            "resync_offset=clean(all ones)",
            "max_dev=128",
            "dev_roles=[0:0, 1:1, 2:2, 3:faulty; 124 spare]",
            "sb_csum=0x" + Integer.toHexString(sb.sbCsum()),
            "ctime=",
            "utime=",
            "bblog_offset=",
            "new_offset="
        }) {
            assertTrue(text.contains(field), () -> field + " missing from " + text);
        }
    }

    @Test
    void nameIsLimitedToThirtyTwoBytes() {
        final Superblock sb = new Superblock().name("x".repeat(32));
        assertEquals("x".repeat(32), sb.name());
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> sb.name("y".repeat(33)));
        assertTrue(ex.getMessage().contains("33 bytes"), ex.getMessage());
    }

    /** Patches a valid block, re-seals its checksum, and expects a CorruptSuperblockException with this problem. */
    private static void assertProblem(final String problem, final Consumer<ByteBuffer> patch) {
        final SuperblockException ex = rejectRaw(patch);
        assertInstanceOf(CorruptSuperblockException.class, ex, ex.getMessage());
        assertEquals(MEMBER + ": " + problem, ex.getMessage());
        assertEquals(problem, ex.problem());
    }

    private static SuperblockException rejectRaw(final Consumer<ByteBuffer> patch) {
        final byte[] block = Samples.block(Samples.member(2));
        final ByteBuffer le = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);
        patch.accept(le);
        reseal(block);
        return assertThrows(SuperblockException.class, () -> Superblock.decode(ByteBuffer.wrap(block), MEMBER));
    }

    /** Recomputes sb_csum after a deliberate edit (if max_dev still fits). */
    static void reseal(final byte[] block) {
        final ByteBuffer le = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);
        final int maxDev = le.getInt(220);
        if (Integer.compareUnsigned(maxDev, 1920) <= 0 && 256 + 2 * maxDev <= block.length) {
            le.putInt(216, Superblock.checksum(ByteBuffer.wrap(block)));
        }
    }
}
