package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;

/**
 * md state raidfive does not implement is refused, never dropped; md state it does implement is
 * honoured. The arrays are raidfive's, with superblocks then edited the way md would have written
 * them (re-encoded, so every checksum is right): a reshape in progress, a write journal, clustered
 * md, a partial parity log; a bad block list; md's corrected-read count; devflags; an internal
 * bitmap.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MdFeatureRulesTest {
    private static final long MEMBER = 4L << 20;
    private static final int CHUNK = 64 * 1024;
    private static final AssembleOptions QUIET = AssembleOptions.DEFAULT.withStartSync(false);

    @TempDir
    Path dir;

    private final List<Path> paths = new ArrayList<>();
    private byte[] image;

    private void makeArray() throws IOException {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Path p = dir.resolve("m" + i + ".img");
            paths.add(p);
            disks.add(FileDisk.createOrExtend(p, MEMBER, false));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            image = new byte[(int) array.size()];
            new Random(12).nextBytes(image);
            array.write(0, ByteBuffer.wrap(image), 0, image.length);
        }
    }

    private List<MemberDisk> open(boolean readOnly) throws IOException {
        List<MemberDisk> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(readOnly ? FileDisk.openReadOnly(p) : FileDisk.open(p));
        }
        return out;
    }

    private void editAll(Consumer<Superblock> edit) throws Exception {
        for (Path p : paths) {
            edit(p, edit);
        }
    }

    private static void edit(Path p, Consumer<Superblock> edit) throws Exception {
        Superblock sb = MemberOwnershipTest.readSuperblock(p);
        edit.accept(sb);
        writeRaw(p, Superblock.SUPERBLOCK_OFFSET, encode(sb));
    }

    private static ByteBuffer encode(Superblock sb) {
        ByteBuffer buf = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        sb.encode(buf);
        return buf.clear();
    }

    static void writeRaw(Path p, long at, ByteBuffer bytes) throws IOException {
        try (FileDisk d = FileDisk.open(p)) {
            d.write(at, bytes, 0, bytes.remaining());
        }
    }

    private List<byte[]> contents() throws IOException {
        List<byte[]> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(MemberOwnershipTest.bytesOf(p));
        }
        return out;
    }

    private void assertRefused(String... words) throws Exception {
        List<byte[]> before = contents();
        for (boolean readOnly : new boolean[] {false, true}) {
            List<MemberDisk> disks = open(readOnly);
            IOException e =
                    assertThrows(IOException.class, () -> Raid5Array.assemble(disks, QUIET.withReadOnly(readOnly)));
            for (String w : words) {
                assertTrue(e.getMessage().contains(w), "'" + w + "' in: " + e.getMessage());
            }
            for (MemberDisk d : disks) {
                d.close();
            }
        }
        List<byte[]> after = contents();
        for (int i = 0; i < paths.size(); i++) {
            assertArrayEquals(before.get(i), after.get(i), "a refused assembly wrote to " + paths.get(i));
        }
    }

    @Test
    void reshapeInProgressIsRefused() throws Exception {
        makeArray();
        editAll(sb -> sb.setFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE, true)
                .reshapePosition(2048)
                .deltaDisks(1)
                .newLayout(sb.layout())
                .newChunk(sb.chunkSectors()));
        assertRefused("reshape", "Linux md");
    }

    @Test
    void writeJournalIsRefused() throws Exception {
        makeArray();
        editAll(sb -> sb.setFeature(Superblock.MD_FEATURE_JOURNAL, true));
        assertRefused("write journal");
    }

    @Test
    void aJournalRoleIsRefusedAndNotTakenForASpare() throws Exception {
        makeArray();
        // md's journal device has role 0xfffd (and the array the journal feature): here only the roles say so
        editAll(sb -> sb.devRole(9, Superblock.ROLE_JOURNAL));
        assertRefused("journal");
    }

    @Test
    void clusteredMdIsRefused() throws Exception {
        makeArray();
        editAll(sb -> sb.setFeature(Superblock.MD_FEATURE_CLUSTERED, true));
        assertRefused("clustered");
    }

    @ParameterizedTest
    @ValueSource(ints = {Superblock.MD_FEATURE_PPL, Superblock.MD_FEATURE_MULTIPLE_PPLS})
    void aPartialParityLogAreaOverlappingTheDataIsRefused(int feature) throws Exception {
        makeArray();
        editAll(sb -> sb.setFeature(feature, true).ppl(8, 0xffff));
        assertRefused("partial parity log", "overlaps");
    }

    @Test
    void listedBadBlocksAreNeverReturnedAsDataAndAreKeptUntilRewritten() throws Exception {
        makeArray();
        Superblock sb0 = MemberOwnershipTest.readSuperblock(paths.get(0));
        long dataOffset = sb0.dataOffset() * 512;
        // Member 0 lists 8 sectors at the start of its data as bad (md's entry: sector << 10 | count);
        // the bytes there are garbage, as an unreadable disk region would be after a remap.
        ByteBuffer log = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        log.putLong(((dataOffset / 512) << 10) | 8);
        while (log.hasRemaining()) {
            log.putLong(-1L);
        }
        writeRaw(paths.get(0), (Superblock.SUPERBLOCK_OFFSET_SECTORS + sb0.bblogOffset()) * 512, log.clear());
        edit(paths.get(0), sb -> sb.setFeature(Superblock.MD_FEATURE_BAD_BLOCKS, true));
        writeRaw(paths.get(0), dataOffset, ByteBuffer.wrap(new byte[4096]).put(0, (byte) 0x5a));
        List<MemberDisk> ro = open(true);
        try (Raid5Array array = Raid5Array.assemble(ro, QUIET.withReadOnly(true))) {
            ArrayOracle.assertArrayHolds(array, image); // chunk 0 of stripe 0 is on member 0: rebuilt
        }
        // A writable array keeps the list on every superblock write...
        List<MemberDisk> rw = open(false);
        try (Raid5Array array = Raid5Array.assemble(rw, QUIET)) {
            array.write(CHUNK, ByteBuffer.wrap(new byte[4096]), 0, 4096); // elsewhere: the list stays
            System.arraycopy(new byte[4096], 0, image, CHUNK, 4096);
        }
        Superblock kept = MemberOwnershipTest.readSuperblock(paths.get(0));
        assertTrue(kept.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS), "the list is kept");
        try (FileDisk d = FileDisk.openReadOnly(paths.get(0))) {
            assertTrue(SuperblockIo.readBadBlocks(d, kept).overlaps(dataOffset / 512, 8));
        }
        // ...and a read there rebuilds the bytes and writes them over the listed sectors, which makes
        // them good (md's R5_ReadError rewrite, then R5_MadeGood).
        rw = open(false);
        try (Raid5Array array = Raid5Array.assemble(rw, QUIET)) {
            ArrayOracle.assertArrayHolds(array, image);
        }
        Superblock cleared = MemberOwnershipTest.readSuperblock(paths.get(0));
        assertFalse(cleared.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS), "the rewritten sectors are good again");
        byte[] member0 = MemberOwnershipTest.bytesOf(paths.get(0));
        assertArrayEquals(
                java.util.Arrays.copyOfRange(image, 0, 4096),
                java.util.Arrays.copyOfRange(member0, (int) dataOffset, (int) dataOffset + 4096),
                "rewritten on disk");
        rw = open(false);
        try (Raid5Array array = Raid5Array.assemble(rw, QUIET)) {
            ArrayOracle.assertArrayHolds(array, image);
            ArrayOracle.assertParityConsistent(rw, dataOffset, array.layout().memberBytesUsed());
        }
    }

    @Test
    void correctedReadCountIsInSectorsAndDoesNotFailAMember() throws Exception {
        makeArray();
        // md counts sectors: an md member that had a few 4 KiB pages corrected says 40.
        editAll(sb -> sb.cntCorrectedRead(40));
        List<FaultyDisk> disks = new ArrayList<>();
        for (MemberDisk d : open(false)) {
            disks.add(new FaultyDisk(d));
        }
        long dataOffset = MemberOwnershipTest.readSuperblock(paths.get(0)).dataOffset() * 512;
        try (Raid5Array array = Raid5Array.assemble(disks, QUIET)) {
            disks.get(0).failReads(dataOffset, dataOffset + 4096, 2); // the read, then md's page retry
            ArrayOracle.assertArrayHolds(array, image);
            assertFalse(array.isDegraded(), "one corrected read error keeps the member, whatever the count");
        }
        assertEquals(
                48,
                MemberOwnershipTest.readSuperblock(paths.get(0)).cntCorrectedRead(),
                "40 sectors + the 8 just corrected");
        assertEquals(40, MemberOwnershipTest.readSuperblock(paths.get(1)).cntCorrectedRead());
    }

    @Test
    void devflagsAreKept() throws Exception {
        makeArray();
        edit(paths.get(2), sb -> sb.devflags(Superblock.DEVFLAG_WRITE_MOSTLY | Superblock.DEVFLAG_FAILFAST));
        try (Raid5Array array = Raid5Array.assemble(open(false), QUIET)) {
            array.write(0, ByteBuffer.wrap(image), 0, 4096);
        }
        assertEquals(3, MemberOwnershipTest.readSuperblock(paths.get(2)).devflags());
        assertEquals(0, MemberOwnershipTest.readSuperblock(paths.get(1)).devflags());
    }

    @Test
    void anMdBitmapIsMaintainedBitByBitAndClearedAtAStop() throws Exception {
        makeArray();
        Superblock sb0 = MemberOwnershipTest.readSuperblock(paths.get(0));
        long syncSectors = sb0.size();
        int bitmapChunk = 64 * 1024;
        long bits = (syncSectors + bitmapChunk / 512 - 1) / (bitmapChunk / 512);
        assertTrue(bits > 4, "several chunks: " + bits);
        for (Path p : paths) {
            // bitmap_super_t as mdadm writes it, 8 sectors after the superblock; all bits clean
            ByteBuffer bm = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
            bm.putInt(0, 0x6d746962)
                    .putInt(4, 4)
                    .put(8, sb0.setUuid())
                    .putLong(24, sb0.events())
                    .putLong(32, sb0.events())
                    .putLong(40, syncSectors)
                    .putInt(52, bitmapChunk)
                    .putInt(56, 5)
                    .putInt(64, 8);
            writeRaw(p, (Superblock.SUPERBLOCK_OFFSET_SECTORS + 8) * 512, bm);
        }
        editAll(sb -> sb.setFeature(Superblock.MD_FEATURE_BITMAP_OFFSET, true).bitmapOffset(8));
        int at = (int) ((Superblock.SUPERBLOCK_OFFSET_SECTORS + 8) * 512);
        try (Raid5Array array = Raid5Array.assemble(open(false), QUIET)) {
            array.write(0, ByteBuffer.wrap(image), 0, 4096); // member offset 0: bitmap chunk 0
            for (Path p : paths) {
                byte[] all = MemberOwnershipTest.bytesOf(p);
                for (long b = 0; b < bits; b++) {
                    int bit = all[at + 256 + (int) (b / 8)] >> (b % 8) & 1;
                    assertEquals(b == 0 ? 1 : 0, bit, "bit " + b + " on " + p + ": set where written, clean elsewhere");
                }
            }
        }
        for (Path p : paths) {
            Superblock sb = MemberOwnershipTest.readSuperblock(p);
            assertTrue(
                    sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET) && sb.bitmapOffset() == 8,
                    "the bitmap is still the array's on " + p);
            byte[] all = MemberOwnershipTest.bytesOf(p);
            ByteBuffer b = ByteBuffer.wrap(all, at, 256).slice().order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(0x6d746962, b.getInt(0), "bitmap superblock intact");
            assertEquals(sb.events(), b.getLong(24), "the bitmap's events follow the superblock's, as md keeps them");
            assertTrue(b.getLong(32) > sb0.events(), "events_cleared moved when the bit was cleared");
            for (long bit = 0; bit < bits; bit++) {
                assertEquals(0, all[at + 256 + (int) (bit / 8)] >> (bit % 8) & 1, "a clean stop clears bit " + bit);
            }
        }
    }
}
