package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.MdUuid;
import org.raidfive.md.PplHeader;
import org.raidfive.md.Superblock;

/**
 * Metadata that md would refuse or repair, hand-written with every checksum right (what a bit flip,
 * a buggy tool or another md version leaves): raidfive refuses it with one line naming the member,
 * the field and the rule and writes nothing, or repairs it as md does, and never writes over data.
 * The oracles are the members' own bytes (hashed before and after), a flat reference image, parity
 * recomputed from scratch ({@link ArrayOracle}) and the bitmap's bits read straight off a member.
 * Four members of 32 MiB, as the cases were found.
 */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class UntrustedMetadataTest {
    private static final long MEMBER = 32L << 20;
    private static final int CHUNK = 64 * 1024;
    private static final int WRITTEN = 4 << 20;
    private static final AssembleOptions QUIET = AssembleOptions.DEFAULT.withStartSync(false);

    @TempDir
    Path dir;

    private final List<Path> paths = new ArrayList<>();
    private byte[] image;

    private void makeArray(ConsistencyPolicy policy, long bitmapChunk) throws IOException {
        makeArray(dir, paths, policy, bitmapChunk, 5);
    }

    private void makeArray(Path where, List<Path> into, ConsistencyPolicy policy, long bitmapChunk, long seed)
            throws IOException {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Path p = where.resolve("m" + i + ".img");
            into.add(p);
            disks.add(FileDisk.createOrExtend(p, MEMBER, false));
        }
        ArraySpec.Builder spec =
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).consistencyPolicy(policy);
        if (bitmapChunk > 0) {
            spec.bitmapChunk(bitmapChunk);
        }
        try (Raid5Array array = Raid5Array.create(spec.build(), disks)) {
            image = new byte[(int) array.size()];
            byte[] written = new byte[WRITTEN];
            new Random(seed).nextBytes(written);
            System.arraycopy(written, 0, image, 0, WRITTEN);
            array.write(0, ByteBuffer.wrap(written), 0, WRITTEN);
        }
    }

    private List<MemberDisk> open() throws IOException {
        List<MemberDisk> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(FileDisk.open(p));
        }
        return out;
    }

    private static Superblock sb(Path p) throws Exception {
        return MemberOwnershipTest.readSuperblock(p);
    }

    private static void edit(Path p, Consumer<Superblock> change) throws Exception {
        Superblock sb = sb(p);
        change.accept(sb);
        ByteBuffer buf = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        sb.encode(buf);
        MdFeatureRulesTest.writeRaw(p, Superblock.SUPERBLOCK_OFFSET, buf.clear());
    }

    private void editAll(Consumer<Superblock> change) throws Exception {
        for (Path p : paths) {
            edit(p, change);
        }
    }

    /** Raw bytes at {@code at} of one member, written as they are. */
    private static void poke(Path p, long at, ByteBuffer bytes) throws IOException {
        try (var c = java.nio.channels.FileChannel.open(p, StandardOpenOption.WRITE)) {
            c.write(bytes, at);
        }
    }

    private static ByteBuffer peek(Path p, long at, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        try (var c = java.nio.channels.FileChannel.open(p, StandardOpenOption.READ)) {
            c.read(b, at);
        }
        return b.clear();
    }

    private static long bitmapStart(Path p) throws Exception {
        Superblock s = sb(p);
        return (s.superOffset() + s.bitmapOffset()) * 512L;
    }

    /** Rewrites one field of every member's bitmap superblock, raw (no decoder in the way). */
    private void editBitmap(int field, long value, boolean wide) throws Exception {
        for (Path p : paths) {
            ByteBuffer b = ByteBuffer.allocate(wide ? 8 : 4).order(ByteOrder.LITTLE_ENDIAN);
            if (wide) {
                b.putLong(0, value);
            } else {
                b.putInt(0, (int) value);
            }
            poke(p, bitmapStart(p) + field, b);
        }
    }

    private List<byte[]> contents() throws IOException {
        List<byte[]> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(MemberOwnershipTest.bytesOf(p));
        }
        return out;
    }

    /** Every member's data area (from its own data_offset to its end). */
    private List<byte[]> dataAreas() throws Exception {
        List<byte[]> out = new ArrayList<>();
        for (Path p : paths) {
            byte[] all = MemberOwnershipTest.bytesOf(p);
            int from = (int) (sb(p).dataOffset() * 512);
            out.add(java.util.Arrays.copyOfRange(all, from, all.length));
        }
        return out;
    }

    private void assertSame(List<byte[]> before, List<byte[]> after, String what) {
        for (int i = 0; i < before.size(); i++) {
            assertArrayEquals(
                    before.get(i), after.get(i), what + " of " + paths.get(i).getFileName() + " changed");
        }
    }

    /** Assembly is refused with every word given in the message, and not one byte of any member changes. */
    private ArrayConfigException assertRefusedWritingNothing(String... words) throws Exception {
        List<byte[]> before = contents();
        List<MemberDisk> disks = open();
        ArrayConfigException e;
        try {
            e = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(disks, AssembleOptions.DEFAULT));
            for (String w : words) {
                assertTrue(e.getMessage().contains(w), "'" + w + "' in: " + e.getMessage());
            }
            assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
            // not even force goes past a wrong offset
            assertThrows(
                    ArrayConfigException.class,
                    () -> Raid5Array.assemble(disks, AssembleOptions.DEFAULT.withForce(true)));
        } finally {
            for (MemberDisk d : disks) {
                d.close();
            }
        }
        assertSame(before, contents(), "a refused assembly: the bytes");
        return e;
    }

    private void assertHoldsImageAndParity() throws Exception {
        List<MemberDisk> disks = open();
        try (Raid5Array array = Raid5Array.assemble(disks, QUIET.withReadOnly(true))) {
            ArrayOracle.assertArrayHolds(array, image);
        }
        long dataOffset = sb(paths.get(0)).dataOffset() * 512;
        long used = sb(paths.get(0)).size() * 512;
        List<MemberDisk> ro = new ArrayList<>();
        for (Path p : paths) {
            ro.add(FileDisk.openReadOnly(p));
        }
        try {
            ArrayOracle.assertParityConsistent(ro, dataOffset, used);
        } finally {
            for (MemberDisk d : ro) {
                d.close();
            }
        }
    }

    // ---------------------------------------------------------------- 1, 3, 9: the bitmap's sync_size

    @Test
    void aBitmapSyncSizeLargerThanTheMemberIsRewrittenNeverObeyed() throws Exception {
        makeArray(ConsistencyPolicy.BITMAP, 4096);
        editBitmap(40, 1L << 27, true); // sync_size: 64 GiB of member data, on 32 MiB members
        List<byte[]> data = dataAreas();
        List<MemberDisk> disks = open();
        List<String> report;
        try (Raid5Array array = Raid5Array.assemble(disks, QUIET)) {
            report = array.assemblyReport().lines();
        }
        assertSame(data, dataAreas(), "the data area");
        assertTrue(String.join("\n", report).contains("sync_size " + (1L << 27)), report.toString());
        assertHoldsImageAndParity();
        // written anew as md writes it: the array's sectors per member
        assertEquals(
                sb(paths.get(0)).size(),
                peek(paths.get(0), bitmapStart(paths.get(0)) + 40, 8).getLong(0));
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 1L << 31})
    void aBitmapWhoseSyncSizeGivesTooFewBitsStillMarksEveryWrite(long syncSize) throws Exception {
        makeArray(ConsistencyPolicy.BITMAP, 4096);
        editBitmap(40, syncSize, true);
        long arrayOffset = 20L << 20; // in the 7th MiB of every member
        List<MemberDisk> disks = open();
        Raid5Array array = Raid5Array.assemble(disks, QUIET);
        byte[] block = new byte[4096];
        new Random(3).nextBytes(block);
        array.write(arrayOffset, ByteBuffer.wrap(block), 0, block.length);
        Crash.of(array); // dies with the write done: the bit must be on disk
        for (MemberDisk d : disks) {
            d.close();
        }
        long stripe = arrayOffset / CHUNK / 3;
        long memberOffset = stripe * CHUNK + arrayOffset % CHUNK;
        long bit = memberOffset / 4096;
        for (Path p : paths) {
            ByteBuffer bits = peek(p, bitmapStart(p) + 256 + bit / 8, 1);
            assertTrue(
                    (bits.get(0) & (1 << (bit % 8))) != 0,
                    "bit " + bit + " set on " + p.getFileName() + " before the write to member offset " + memberOffset
                            + " landed");
        }
    }

    @Test
    void aBitmapMarkedStaleResyncsEverythingOnADirtyStart() throws Exception {
        makeArray(ConsistencyPolicy.BITMAP, 4096);
        // dirty, no bit set, BITMAP_STALE: md does a full resync
        editAll(s -> s.resyncOffset(0));
        editBitmap(48, 2, false);
        long dataOffset = sb(paths.get(1)).dataOffset() * 512;
        byte[] torn = new byte[4096];
        new Random(9).nextBytes(torn);
        poke(paths.get(1), dataOffset + (8L << 20), ByteBuffer.wrap(torn)); // a stripe the crash tore
        List<MemberDisk> disks = open();
        try (Raid5Array array = Raid5Array.assemble(disks, AssembleOptions.DEFAULT)) {
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            assertTrue(
                    array.assemblyReport().lines().toString().contains("BITMAP_STALE"),
                    array.assemblyReport().lines().toString());
        }
        List<MemberDisk> ro = new ArrayList<>();
        for (Path p : paths) {
            ro.add(FileDisk.openReadOnly(p));
        }
        try {
            ArrayOracle.assertParityConsistent(ro, dataOffset, sb(paths.get(0)).size() * 512);
        } finally {
            for (MemberDisk d : ro) {
                d.close();
            }
        }
        assertEquals(
                0,
                peek(paths.get(0), bitmapStart(paths.get(0)) + 48, 4).getInt(0) & 2,
                "BITMAP_STALE cleared once every bit is set");
    }

    // ---------------------------------------------------------------- 2, 9: where the bitmap lies

    @Test
    void aBitmapOffsetPointingIntoTheDataIsRefused() throws Exception {
        makeArray(ConsistencyPolicy.BITMAP, 4096);
        for (Path p : paths) {
            Superblock s = sb(p);
            ByteBuffer bitmapSuper = peek(p, bitmapStart(p), 256);
            int into = (int) (s.dataOffset() - s.superOffset()); // the first data sector
            poke(p, s.dataOffset() * 512, bitmapSuper); // a valid bitmap superblock there
            edit(p, x -> x.bitmapOffset(into));
        }
        assertRefusedWritingNothing("m0.img", "bitmap_offset", "runs into the data");
    }

    @ParameterizedTest
    @ValueSource(ints = {-4, -16, 0, Integer.MAX_VALUE, 1 << 20})
    void aBitmapOffsetOffTheMetadataSpaceIsRefused(int offset) throws Exception {
        makeArray(ConsistencyPolicy.BITMAP, 4096);
        editAll(s -> s.bitmapOffset(offset));
        if (offset == 0) {
            // on the superblock: the bitmap's bits would be written over it
            assertRefusedWritingNothing("m0.img", "bitmap_offset 0", "on the superblock");
        } else {
            // before the superblock, past the data offset, past the end of the device
            assertRefusedWritingNothing("m0.img", "bitmap_offset " + offset);
        }
    }

    @Test
    void aBitmapDaemonSleepOfZeroIsRefusedAsMdRefusesIt() throws Exception {
        makeArray(ConsistencyPolicy.BITMAP, 4096);
        editBitmap(56, 0, false);
        assertRefusedWritingNothing("daemon_sleep");
    }

    // ---------------------------------------------------------------- 5: a PPL area per member

    @Test
    void membersWithDifferentPplAreasEachKeepTheirOwn() throws Exception {
        makeArray(ConsistencyPolicy.PPL, 0);
        Path odd = paths.get(3);
        Superblock s = sb(odd);
        long newOffset = 1024;
        // move the odd member's data down to sector 1024, its PPL area to 8+512 and its log after it,
        // as mdadm lays out a member with less room (each of these superblocks mdadm --examine accepts)
        byte[] all = MemberOwnershipTest.bytesOf(odd);
        byte[] data = java.util.Arrays.copyOfRange(
                all, (int) (s.dataOffset() * 512), (int) ((s.dataOffset() + s.size()) * 512));
        poke(odd, newOffset * 512, ByteBuffer.wrap(data));
        ByteBuffer ones = ByteBuffer.allocate(4096);
        for (int i = 0; i < 4096; i++) {
            ones.put(i, (byte) 0xff);
        }
        poke(odd, (8 + 520) * 512L, ones); // an empty bad block log
        edit(
                odd,
                x -> x.dataOffset(newOffset)
                        .dataSize(MEMBER / 512 - newOffset)
                        .ppl(8, 512)
                        .bblogOffset(520)
                        .bblogSize(8));
        editAll(x -> x.resyncOffset(0)); // dirty: the logs are read, recovered and emptied
        List<MemberDisk> disks = open();
        List<MemberDisk> oddLast = List.of(disks.get(3), disks.get(0), disks.get(1), disks.get(2));
        try (Raid5Array array = Raid5Array.assemble(
                List.of(disks.get(1), disks.get(0), disks.get(3), disks.get(2)), AssembleOptions.DEFAULT)) {
            array.awaitSync(Duration.ofSeconds(60));
            ArrayOracle.assertArrayHolds(array, image);
        }
        Superblock after = sb(odd);
        assertEquals(newOffset, after.dataOffset());
        assertEquals(8, after.pplOffset());
        assertEquals(512, after.pplSize());
        assertEquals(2048, sb(paths.get(0)).pplSize());
        // and it opens again, read-write, in any order
        List<MemberDisk> again = open();
        try (Raid5Array array =
                Raid5Array.assemble(List.of(again.get(3), again.get(2), again.get(1), again.get(0)), QUIET)) {
            ArrayOracle.assertArrayHolds(array, image);
            assertFalse(array.isDegraded());
        }
        assertTrue(oddLast.size() == 4);
    }

    // ---------------------------------------------------------------- 6, 9: PPL entries

    /** An io_unit header with one entry whose partial parity has a valid CRC, on the member in slot {@code slot}. */
    private void logOneEntry(Path p, long dataSector, int ppSize, int dataSize, int parityDisk) throws Exception {
        Superblock s = sb(p);
        long area = (s.superOffset() + s.pplOffset()) * 512L;
        ByteBuffer h = ByteBuffer.allocate(PplHeader.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        PplHeader.begin(h, PplHeader.signature(s.setUuid()), 1);
        byte[] pp = new byte[4096];
        new Random(17).nextBytes(pp);
        CRC32C crc = new CRC32C();
        crc.update(pp);
        PplHeader.entry(h, 0, dataSector, ppSize, dataSize, parityDisk, (int) crc.getValue());
        PplHeader.seal(h, 1, new CRC32C());
        poke(p, area, ByteBuffer.allocate(s.pplSize() * 512)); // this io_unit is the log's only one
        poke(p, area, h.clear());
        poke(p, area + PplHeader.SIZE, ByteBuffer.wrap(pp));
    }

    @ParameterizedTest
    @ValueSource(longs = {(1L << 55) + 7168, Long.MIN_VALUE + 7168, -8})
    void aPplEntryNamingSectorsOutsideTheArrayIsSkippedNeverApplied(long dataSector) throws Exception {
        makeArray(ConsistencyPolicy.PPL, 0);
        editAll(s -> s.resyncOffset(0));
        // the stripe that sector 7168 (3.5 MiB) wraps to keeps its parity on slot 3 - (7168*512/64K/3 % 4)
        long stripe = 7168L * 512 / CHUNK / 3;
        int paritySlot = (int) (3 - stripe % 4); // left-symmetric
        logOneEntry(paths.get(paritySlot), dataSector, 4096, 4096, paritySlot);
        assertSkippedAndDataUntouched();
    }

    @Test
    void aPplEntryWhosePartialParityRunsPastItsAreaIsSkipped() throws Exception {
        makeArray(ConsistencyPolicy.PPL, 0);
        editAll(s -> s.resyncOffset(0));
        logOneEntry(paths.get(3), 0, 0x7ffff000, 0x7ffff000, 3);
        assertSkippedAndDataUntouched();
    }

    private void assertSkippedAndDataUntouched() throws Exception {
        List<byte[]> data = dataAreas();
        List<MemberDisk> disks = open();
        try (Raid5Array array = Raid5Array.assemble(disks, AssembleOptions.DEFAULT)) {
            assertTrue(
                    array.assemblyReport().lines().toString().contains("could not be applied"),
                    array.assemblyReport().lines().toString());
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
        }
        assertSame(data, dataAreas(), "the data area (parity included)");
        assertHoldsImageAndParity();
    }

    // ---------------------------------------------------------------- 7: a member replaced underneath

    @Test
    void aMemberReplacedUnderneathIsFailedAndNeverWrittenOver() throws Exception {
        makeArray(ConsistencyPolicy.RESYNC, 0);
        byte[] ours = image;
        Path otherDir = Files.createDirectory(dir.resolve("other"));
        List<Path> other = new ArrayList<>();
        makeArray(otherDir, other, ConsistencyPolicy.RESYNC, 0, 6);
        image = ours;
        List<MemberDisk> disks = open();
        List<ArrayEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        Raid5Array array = Raid5Array.assemble(disks, QUIET.withListener(events::add));
        ArrayOracle.assertArrayHolds(array, image);
        // dd conv=notrunc of another array's member over m2, while the array runs
        byte[] foreign = MemberOwnershipTest.bytesOf(other.get(2));
        poke(paths.get(2), 0, ByteBuffer.wrap(foreign));
        byte[] block = new byte[4096];
        new Random(4).nextBytes(block);
        array.write(8L << 20, ByteBuffer.wrap(block), 0, block.length); // clean -> dirty: superblocks written
        System.arraycopy(block, 0, image, 8 << 20, block.length);
        assertTrue(array.isDegraded(), "the replaced member is failed");
        ArrayOracle.assertArrayHolds(array, image);
        array.close();
        assertArrayEquals(foreign, MemberOwnershipTest.bytesOf(paths.get(2)), "m2 still holds the foreign member");
        String failed = events.stream()
                .filter(e -> e.kind() == ArrayEvent.Kind.MEMBER_FAILED)
                .map(ArrayEvent::detail)
                .findFirst()
                .orElseThrow();
        assertTrue(
                failed.contains("replaced underneath")
                        && failed.contains(MdUuid.format(sb(other.get(2)).setUuid())),
                failed);
        // the array opens degraded without it and holds what was written
        List<MemberDisk> three = new ArrayList<>();
        for (int i : new int[] {0, 1, 3}) {
            three.add(FileDisk.open(paths.get(i)));
        }
        try (Raid5Array again = Raid5Array.assemble(three, QUIET)) {
            assertTrue(again.isDegraded());
            ArrayOracle.assertArrayHolds(again, image);
        }
    }
}
