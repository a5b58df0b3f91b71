package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/**
 * Random and boundary values for the fields md validates (superblock areas, the bitmap superblock,
 * PPL entries, bad block entries), each judged by a model of md's rules written here from the
 * kernel's code (independent of {@code MemberAreas} and the decoders), against the invariant: when
 * the model says the field set is invalid, assembly is refused and not one byte of any member
 * changes; when it says valid, assembly succeeds and no byte outside the metadata areas changes
 * (a PPL entry md would apply may rewrite its stripes' parity, and is the one exception).
 *
 * <p>Two clean arrays of 4 memory members (8 MiB, chunk 64 KiB) are made once, one with a bitmap
 * (chunk 4 KiB) and one with a partial parity log; each try copies them and edits one field.
 * jqwik prints the seed of a failing run.
 */
class MetadataFieldProperties {
    private static final long MEMBER = 8L << 20;
    private static final int CHUNK = 64 * 1024;
    private static final AssembleOptions QUIET = AssembleOptions.DEFAULT.withStartSync(false);
    private static byte[][] bitmapArray;
    private static byte[][] pplArray;

    @BeforeContainer
    static void makeArrays() throws IOException {
        bitmapArray = make(ConsistencyPolicy.BITMAP);
        pplArray = make(ConsistencyPolicy.PPL);
    }

    private static byte[][] make(ConsistencyPolicy policy) throws IOException {
        List<MemberDisk> disks = disks(new byte[][] {
            new byte[(int) MEMBER], new byte[(int) MEMBER], new byte[(int) MEMBER], new byte[(int) MEMBER]
        });
        ArraySpec.Builder spec =
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).consistencyPolicy(policy);
        if (policy == ConsistencyPolicy.BITMAP) {
            spec.bitmapChunk(4096);
        }
        try (Raid5Array array = Raid5Array.create(spec.build(), disks)) {
            byte[] data = new byte[2 << 20];
            new Random(1).nextBytes(data);
            array.write(0, ByteBuffer.wrap(data), 0, data.length);
        }
        byte[][] out = new byte[4][];
        for (int i = 0; i < 4; i++) {
            out[i] = bytes(disks.get(i));
        }
        return out;
    }

    /** The bytes of a disk, read through its buffer even after the array closed it. */
    private static byte[] bytes(MemberDisk d) {
        return ((Image) d).bytes;
    }

    /** A member in a heap array the test keeps: closing it (the array does) leaves the bytes to look at. */
    private static final class Image implements MemberDisk {
        final byte[] bytes;
        final String name;

        Image(byte[] bytes, String name) {
            this.bytes = bytes;
            this.name = name;
        }

        @Override
        public long size() {
            return bytes.length;
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) {
            dst.put(dstOffset, bytes, (int) position, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) {
            src.get(srcOffset, bytes, (int) position, length);
        }

        @Override
        public void flush() {}

        @Override
        public String name() {
            return name;
        }

        @Override
        public void close() {}
    }

    // ---------------------------------------------------------------- the model: md's rules, from the kernel

    /** A superblock field of a member image, read little-endian as md lays it out (md_p.h offsets). */
    private static long u64(byte[] m, int at) {
        return ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).getLong(4096 + at);
    }

    private static int s32(byte[] m, int at) {
        return ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).getInt(4096 + at);
    }

    private static int u16(byte[] m, int at) {
        return ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).getShort(4096 + at) & 0xffff;
    }

    // struct mdp_superblock_1 (md_p.h): size 80, bitmap_offset (or ppl.offset s16, ppl.size u16) 96,
    // data_offset 128, data_size 136, bblog_size 186, bblog_offset 188
    private static final int SIZE = 80;
    private static final int PPL_OFFSET = 96;
    private static final int DATA_OFFSET = 128;
    private static final int DATA_SIZE = 136;
    private static final int BBLOG_SIZE = 186;
    private static final int BBLOG_OFFSET = 188;

    /** md's bitmap area in sectors for the array: 256 bytes and one bit per chunk of {@code size}, rounded to sectors. */
    private static long bitmapSectors(long sizeSectors, long chunkBytes) {
        long chunkSectors = chunkBytes / 512;
        long bits = sizeSectors / chunkSectors + (sizeSectors % chunkSectors != 0 ? 1 : 0);
        return (256 + (bits + 7) / 8 + 511) / 512;
    }

    /** One area, absolute sectors [start, end). */
    private record Area(long start, long end) {
        boolean overlaps(Area o) {
            return start < o.end && o.start < end;
        }
    }

    /**
     * md's rules for where a v1.2 member's metadata lies (super_1_load, __write_sb_page,
     * ppl_validate_rdev), plus "no two areas overlap": true when valid.
     */
    private static boolean areasValid(
            long deviceSectors,
            long dataOffset,
            long dataSize,
            long size,
            Long bitmapOffset,
            long bitmapSectors,
            int bblogOffset,
            int bblogSize,
            boolean badBlocksFeature) {
        if (dataOffset < 9
                || dataOffset > deviceSectors
                || Long.compareUnsigned(dataSize, deviceSectors - dataOffset) > 0
                || Long.compareUnsigned(size, dataSize) > 0
                || dataSize < 10) {
            return false;
        }
        Area superblock = new Area(8, 9);
        List<Area> areas = new ArrayList<>();
        if (bitmapOffset != null) {
            Area b = new Area(8 + bitmapOffset, 8 + bitmapOffset + bitmapSectors);
            if (bitmapOffset < 1 || b.end > dataOffset) {
                return false;
            }
            areas.add(b);
        }
        if (badBlocksFeature && (bblogSize > 8 || bblogOffset == 0)) {
            return false;
        }
        if (bblogOffset != 0 && bblogSize != 0) {
            Area l = new Area(8L + bblogOffset, 8L + bblogOffset + bblogSize);
            if (l.start < 0 || l.end > dataOffset) {
                return false;
            }
            areas.add(l);
        }
        for (int i = 0; i < areas.size(); i++) {
            if (areas.get(i).overlaps(superblock)) {
                return false;
            }
            for (int j = 0; j < i; j++) {
                if (areas.get(i).overlaps(areas.get(j))) {
                    return false;
                }
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- running one try

    /** Copies of the images as members. */
    private static List<MemberDisk> disks(byte[][] images) {
        List<MemberDisk> out = new ArrayList<>();
        for (int i = 0; i < images.length; i++) {
            out.add(new Image(images[i].clone(), "m" + i));
        }
        return out;
    }

    /** Re-encodes one member's superblock after {@code edit}, with its checksum right. */
    private static void editSuperblock(byte[] image, java.util.function.Consumer<Superblock> edit) {
        try {
            Superblock sb = Superblock.decode(ByteBuffer.wrap(image, 4096, 4096).slice(), "m", 8);
            edit.accept(sb);
            ByteBuffer out = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
            sb.encode(out);
            System.arraycopy(out.array(), 0, image, 4096, 4096);
        } catch (SuperblockException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Assembles the edited images: refused with nothing changed when {@code valid} is false;
     * otherwise assembled, and every byte in {@code dataFrom[i]..} of member i unchanged.
     */
    private static void check(byte[][] edited, boolean valid, String what) throws IOException {
        List<MemberDisk> disks = disks(edited);
        Raid5Array array = null;
        IOException refused = null;
        try {
            array = Raid5Array.assemble(disks, QUIET);
        } catch (IOException e) {
            refused = e;
        } catch (RuntimeException e) {
            fail(what + ": not a clean refusal: " + e, e);
        }
        // A device too small for its data area md's kernel will not import, and mdadm assembles the rest:
        // leaving that one member out (reported, never written) is md's answer as much as a refusal.
        MemberDisk leftOutTooSmall = null;
        if (array != null) {
            List<AssemblyReport.LeftOut> out = array.assemblyReport().leftOut();
            if (!valid && out.size() == 1 && out.get(0).reason().contains("too small")) {
                leftOutTooSmall = out.get(0).disk();
            }
            array.close();
        }
        for (int i = 0; i < 4; i++) {
            byte[] after = bytes(disks.get(i));
            if (leftOutTooSmall != null) {
                if (disks.get(i) == leftOutTooSmall) {
                    assertArrayEquals(edited[i], after, what + ": m" + i + " was left out, yet written to");
                } else {
                    int from = (int) (u64(edited[i], DATA_OFFSET) * 512);
                    assertArrayEquals(
                            java.util.Arrays.copyOfRange(edited[i], from, after.length),
                            java.util.Arrays.copyOfRange(after, from, after.length),
                            what + ": data of m" + i + " changed");
                }
            } else if (!valid) {
                assertTrue(refused != null, what + ": md's rules refuse this, raidfive assembled it");
                assertArrayEquals(edited[i], after, what + ": a refused assembly wrote to m" + i);
            } else {
                assertTrue(refused == null, what + ": md's rules accept this, raidfive refused: " + refused);
                int from = (int) (u64(edited[i], DATA_OFFSET) * 512);
                assertArrayEquals(
                        java.util.Arrays.copyOfRange(edited[i], from, after.length),
                        java.util.Arrays.copyOfRange(after, from, after.length),
                        what + ": data of m" + i + " changed");
            }
            disks.get(i).close();
        }
    }

    /** md's calc_sb_1_csum over 256 + 2 * max_dev bytes, its own field counted as zero. */
    private static void fixChecksum(byte[] m) {
        ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN);
        int len = 256 + 2 * b.getInt(4096 + 220);
        b.putInt(4096 + 216, 0);
        long sum = 0;
        int i = 0;
        for (; i + 4 <= len; i += 4) {
            sum += Integer.toUnsignedLong(b.getInt(4096 + i));
        }
        if (i < len) {
            sum += b.getShort(4096 + i) & 0xffff;
        }
        b.putInt(4096 + 216, (int) ((sum & 0xffffffffL) + (sum >>> 32)));
    }

    private static byte[][] copy(byte[][] images) {
        byte[][] out = new byte[images.length][];
        for (int i = 0; i < images.length; i++) {
            out[i] = images[i].clone();
        }
        return out;
    }

    // ---------------------------------------------------------------- superblock areas

    @Provide
    Arbitrary<Integer> smallOffsets() {
        return Arbitraries.oneOf(
                Arbitraries.integers().between(-64, 4200),
                Arbitraries.of(Integer.MIN_VALUE, Integer.MAX_VALUE, -1, 0, 1, 7, 8, 9, 2040, 2047, 2048, 16384));
    }

    @Property(tries = 60)
    void theBitmapOffsetIsWhereMdWouldWriteTheBitmapOrRefused(@ForAll("smallOffsets") int offset) throws IOException {
        byte[][] e = copy(bitmapArray);
        for (byte[] m : e) {
            editSuperblock(m, sb -> sb.bitmapOffset(offset));
        }
        byte[] m0 = e[0];
        long dataOffset = u64(m0, DATA_OFFSET);
        // every member has the same layout here: judge m0's areas, with the bitmap superblock md would
        // read at the new place (bad magic or another array's UUID: md refuses it)
        long at = (8L + offset) * 512;
        ByteBuffer b = ByteBuffer.wrap(m0).order(ByteOrder.LITTLE_ENDIAN);
        boolean bitmapThere = at >= 0
                && at + 256 <= m0.length
                && b.getInt((int) at) == 0x6d746962
                && java.util.Arrays.equals(m0, (int) at + 8, (int) at + 24, m0, 4096 + 16, 4096 + 32);
        long chunk = bitmapThere ? Integer.toUnsignedLong(b.getInt((int) at + 52)) : 4096;
        boolean valid = bitmapThere
                && areasValid(
                        MEMBER / 512,
                        dataOffset,
                        u64(m0, DATA_SIZE),
                        u64(m0, SIZE),
                        (long) offset,
                        bitmapSectors(u64(m0, SIZE), chunk),
                        s32(m0, BBLOG_OFFSET),
                        u16(m0, BBLOG_SIZE),
                        false);
        check(e, valid, "bitmap_offset " + offset);
    }

    @Property(tries = 60)
    void theBadBlockLogLiesInTheMetadataSpaceOrIsRefused(
            @ForAll("smallOffsets") int offset, @ForAll("bblogSizes") int size) throws IOException {
        byte[][] e = copy(bitmapArray);
        editSuperblock(e[2], sb -> sb.bblogOffset(offset).bblogSize(size));
        byte[] m = e[2];
        long dataOffset = u64(m, DATA_OFFSET);
        boolean valid = areasValid(
                MEMBER / 512,
                dataOffset,
                u64(m, DATA_SIZE),
                u64(m, SIZE),
                8L,
                bitmapSectors(u64(m, SIZE), 4096),
                offset,
                size,
                false);
        // a log md reads (feature set) must hold valid entries: this array has none, so it is empty
        check(e, valid, "bblog_offset " + offset + " bblog_size " + size);
    }

    @Provide
    Arbitrary<Integer> bblogSizes() {
        return Arbitraries.oneOf(Arbitraries.integers().between(0, 16), Arbitraries.of(0, 8, 65535));
    }

    @Property(tries = 60)
    void theDataAreaFitsTheDeviceOrIsRefused(
            @ForAll("dataOffsets") long dataOffset, @ForAll("dataOffsets") long dataSize) throws IOException {
        dataArea(dataOffset, dataSize);
    }

    /**
     * Seed -8076647253044151016 found it: a current member whose data area runs a sector past its end
     * is left out as too small (CrashTruthTest's truncated member), which the model now counts as md's answer.
     */
    @Example
    void aCurrentMemberWhoseDataAreaRunsOneSectorPastItsEndIsRefusedOrLeftOut() throws IOException {
        dataArea(2049, 14336);
    }

    private void dataArea(long dataOffset, long dataSize) throws IOException {
        byte[][] e = copy(bitmapArray);
        byte[] m = e[1];
        // the superblock is written raw: raidfive's encoder refuses what its decoder refuses, and both are md's rules
        ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(4096 + DATA_OFFSET, dataOffset).putLong(4096 + DATA_SIZE, dataSize);
        fixChecksum(m);
        // a moved data offset reads other bytes as data: md accepts it all the same, if the areas hold
        boolean valid = areasValid(
                        MEMBER / 512,
                        dataOffset,
                        dataSize,
                        u64(m, SIZE),
                        8L,
                        bitmapSectors(u64(m, SIZE), 4096),
                        s32(m, BBLOG_OFFSET),
                        u16(m, BBLOG_SIZE),
                        false)
                && Long.compareUnsigned(dataSize, -1L - dataOffset) <= 0;
        check(e, valid, "data_offset " + dataOffset + " data_size " + dataSize);
    }

    @Provide
    Arbitrary<Long> dataOffsets() {
        return Arbitraries.oneOf(
                Arbitraries.longs().between(0, MEMBER / 512 + 100),
                Arbitraries.of(0L, 8L, 9L, 10L, 2048L, MEMBER / 512, -1L, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 55));
    }

    // ---------------------------------------------------------------- the bitmap superblock

    @Provide
    Arbitrary<Long> bitmapValues() {
        return Arbitraries.oneOf(
                Arbitraries.longs().between(-2, 1 << 20),
                Arbitraries.of(
                        0L,
                        1L,
                        3L,
                        4L,
                        5L,
                        511L,
                        512L,
                        4096L,
                        16383L,
                        16384L,
                        1L << 31,
                        1L << 32,
                        0xffffffffL,
                        1L << 25,
                        -1L,
                        Long.MIN_VALUE));
    }

    /** Offsets in bitmap_super_t: version 4, sync_size 40, state 48, chunksize 52, daemon_sleep 56, write_behind 60. */
    @Property(tries = 120)
    void bitmapSuperblockFieldsAreJudgedAsMdReadsThem(
            @ForAll("bitmapFields") int field, @ForAll("bitmapValues") long value) throws IOException {
        byte[][] e = copy(bitmapArray);
        int width = field == 40 ? 8 : 4;
        for (byte[] m : e) {
            ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN);
            int at = 16 * 512 + field;
            if (width == 8) {
                b.putLong(at, value);
            } else {
                b.putInt(at, (int) value);
            }
        }
        long u32 = value & 0xffffffffL;
        byte[] m0 = e[0];
        boolean valid = switch (field) {
            case 4 -> u32 == 3 || u32 == 4; // md reads 3..5; 5 is clustered md, which raidfive refuses
            case 40, 48 -> true; // sync_size: md writes its own; state: STALE means a full resync, nothing refused
            case 52 ->
                u32 >= 512
                        && Long.bitCount(u32) == 1
                        && areasValid(
                                MEMBER / 512,
                                u64(m0, DATA_OFFSET),
                                u64(m0, DATA_SIZE),
                                u64(m0, SIZE),
                                8L,
                                bitmapSectors(u64(m0, SIZE), u32),
                                s32(m0, BBLOG_OFFSET),
                                u16(m0, BBLOG_SIZE),
                                false);
            case 56 -> u32 != 0; // md: daemon_sleep * HZ in 1..MAX_SCHEDULE_TIMEOUT
            case 60 -> u32 <= 16383; // COUNTER_MAX
            default -> throw new AssertionError(field);
        };
        check(e, valid, "bitmap field at " + field + " = " + value);
    }

    @Provide
    Arbitrary<Integer> bitmapFields() {
        return Arbitraries.of(4, 40, 48, 52, 56, 60);
    }

    // ---------------------------------------------------------------- bad block entries

    @Property(tries = 80)
    void badBlockEntriesAreJudgedAsMdLoadsThem(@ForAll("badBlockEntries") long entry, @ForAll("shifts") int shift)
            throws IOException {
        byte[][] e = copy(bitmapArray);
        byte[] m = e[3];
        int logAt = (int) ((8 + s32(m, BBLOG_OFFSET)) * 512L);
        ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(logAt, entry);
        editSuperblock(
                m, sb -> sb.setFeature(Superblock.MD_FEATURE_BAD_BLOCKS, true).bblogShift(shift));
        long units = entry >>> 10;
        boolean valid = entry == -1L // the end mark: an empty list
                || ((entry & 0x3ff) != 0 && shift < 54 && (units << shift) >>> shift == units && (units << shift) >= 0);
        check(e, valid, String.format("bad block entry 0x%016x shift %d", entry, shift));
    }

    @Provide
    Arbitrary<Long> badBlockEntries() {
        return Arbitraries.oneOf(
                Arbitraries.longs(),
                Arbitraries.of(
                        -1L,
                        0L,
                        1L,
                        0x3ffL,
                        0x400L,
                        1L << 10 | 8,
                        Long.MAX_VALUE,
                        Long.MIN_VALUE | 1,
                        (1L << 53) << 10 | 1));
    }

    @Provide
    Arbitrary<Integer> shifts() {
        return Arbitraries.oneOf(Arbitraries.integers().between(0, 12), Arbitraries.of(0, 3, 9, 53, 54, 63, 200, 255));
    }

    // ---------------------------------------------------------------- PPL entries

    @Property(tries = 80)
    void pplEntriesMdCannotPlaceChangeNoData(
            @ForAll("sectors") long dataSector,
            @ForAll("ppSizes") int ppSize,
            @ForAll("ppSizes") int dataSize,
            @ForAll("slots") int parityDisk)
            throws IOException {
        byte[][] e = copy(pplArray);
        for (byte[] m : e) {
            editSuperblock(m, sb -> sb.resyncOffset(0)); // dirty: the logs are recovered
        }
        int slot = 1;
        byte[] m = e[slot];
        long area = (8 + (short) u16(m, PPL_OFFSET)) * 512L;
        int areaBytes = u16(m, PPL_OFFSET + 2) * 512;
        java.util.Arrays.fill(m, (int) area, (int) area + areaBytes, (byte) 0);
        ByteBuffer h = ByteBuffer.wrap(m, (int) area, 4096).slice().order(ByteOrder.LITTLE_ENDIAN);
        org.raidfive.md.PplHeader.begin(h, org.raidfive.md.PplHeader.signature(uuidOf(m)), 1);
        long ppBytes = Integer.toUnsignedLong(ppSize);
        int crc = 0;
        if (ppBytes <= areaBytes - 4096) {
            CRC32C c = new CRC32C();
            c.update(m, (int) area + 4096, (int) ppBytes);
            crc = (int) c.getValue();
        }
        org.raidfive.md.PplHeader.entry(h, 0, dataSector, ppSize, dataSize, parityDisk, crc);
        org.raidfive.md.PplHeader.seal(h, 1, new CRC32C());
        long arraySectors = u64(m, SIZE) * 3;
        long dataBytes = Integer.toUnsignedLong(dataSize);
        boolean placeable = ppBytes % 512 == 0
                && dataBytes % 512 == 0
                && ppBytes <= areaBytes - 4096
                && Long.compareUnsigned(dataSector, arraySectors) < 0
                && dataBytes > 0
                && (ppBytes == 0 || dataBytes / ppBytes <= 3);
        List<MemberDisk> disks = disks(e);
        try (Raid5Array array = Raid5Array.assemble(disks, QUIET)) {
            assertEquals(4, array.status().members().size());
        } catch (IOException ex) {
            fail("a log entry never refuses the array: " + ex, ex);
        }
        if (!placeable) {
            for (int i = 0; i < 4; i++) {
                byte[] after = bytes(disks.get(i));
                int from = (int) (u64(e[i], DATA_OFFSET) * 512);
                assertArrayEquals(
                        java.util.Arrays.copyOfRange(e[i], from, after.length),
                        java.util.Arrays.copyOfRange(after, from, after.length),
                        String.format(
                                "an entry md cannot place (data_sector %d, pp_size %d, data_size %d) changed data of m%d",
                                dataSector, ppSize, dataSize, i));
            }
        }
        for (MemberDisk d : disks) {
            d.close();
        }
    }

    private static byte[] uuidOf(byte[] m) {
        return java.util.Arrays.copyOfRange(m, 4096 + 16, 4096 + 32);
    }

    @Provide
    Arbitrary<Long> sectors() {
        return Arbitraries.oneOf(
                Arbitraries.longs().between(0, 50_000),
                Arbitraries.longs(),
                Arbitraries.of((1L << 55) + 7168, Long.MIN_VALUE + 7168, -8L, 0L, 7168L, 12287L, 12288L));
    }

    @Provide
    Arbitrary<Integer> ppSizes() {
        return Arbitraries.oneOf(
                Arbitraries.integers().between(0, 300).map(i -> i * 512),
                Arbitraries.integers(),
                Arbitraries.of(0, 4096, 8192, 65536, 0x7ffff000, -1, 511, 1 << 20));
    }

    @Provide
    Arbitrary<Integer> slots() {
        return Arbitraries.integers().between(0, 3);
    }
}
