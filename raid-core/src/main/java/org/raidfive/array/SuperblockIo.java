package org.raidfive.array;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.raidfive.disk.AlignedBuffers;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.BadBlockLog;
import org.raidfive.md.BitmapSuperblock;
import org.raidfive.md.DataOffset;
import org.raidfive.md.MdTime;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/**
 * Reads and writes members' md v1.2 metadata (the 4 KiB superblock at 4 KiB, the bad block log,
 * the internal bitmap's area), mapping engine state to md's fields. Every md field raidfive does
 * not change is carried over as it was found (devflags, data_size, the bad block log's place, the
 * bitmap offset), so a superblock write never drops md state.
 */
final class SuperblockIo {
    static final int ROLE_SPARE = Superblock.ROLE_SPARE;
    static final int ROLE_FAULTY = Superblock.ROLE_FAULTY;
    static final int BLOCK = 4096;

    private SuperblockIo() {}

    /**
     * A superblock write that would take the member's events backwards: someone else wrote it
     * after this array last did. Never written; the array stops (see {@link ArrayMetadata}).
     */
    static final class NewerOnDiskException extends IOException {
        private static final long serialVersionUID = 1L;

        NewerOnDiskException(String message) {
            super(message);
        }
    }

    /**
     * A member no longer holds what this array last wrote to it (or found on it at assembly): another
     * array's superblock, none, another member's, or an older copy of its own. It was replaced
     * underneath the array (a {@code dd} over it, a restored image): the member is failed and its
     * superblock is never written over.
     */
    static final class MemberReplacedException extends IOException {
        private static final long serialVersionUID = 1L;

        MemberReplacedException(String message) {
            super(message);
        }
    }

    /** Reads the superblock of {@code disk}; a disk too small to hold one has none. */
    static Superblock read(MemberDisk disk) throws IOException, SuperblockException {
        if (disk.size() < Superblock.SUPERBLOCK_OFFSET + BLOCK) {
            throw new SuperblockException(
                    disk.name(),
                    "not an md member: the disk (" + disk.size() + " bytes) is too small to hold a superblock at "
                            + Superblock.SUPERBLOCK_OFFSET);
        }
        ByteBuffer buf = AlignedBuffers.allocate(BLOCK);
        disk.read(Superblock.SUPERBLOCK_OFFSET, buf, 0, BLOCK);
        return Superblock.decode(buf, disk.name(), Superblock.SUPERBLOCK_OFFSET_SECTORS);
    }

    /** The bad block list a member's superblock points at (empty without MD_FEATURE_BAD_BLOCKS). */
    static BadBlockLog readBadBlocks(MemberDisk disk, Superblock sb) throws IOException, SuperblockException {
        if (!sb.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS)) {
            return BadBlockLog.EMPTY;
        }
        return BadBlockLog.decode(
                readRange(disk, (Superblock.SUPERBLOCK_OFFSET_SECTORS + sb.bblogOffset()) * 512, sb.bblogSize() * 512),
                sb.bblogShift(),
                disk.name());
    }

    /** The bits of an internal bitmap after its superblock: bit c set means chunk c is dirty (md's little-endian order). */
    static boolean[] readBitmapBits(MemberDisk disk, int bitmapOffsetSectors, long chunks) throws IOException {
        ByteBuffer b =
                readRange(disk, bitmapStart(bitmapOffsetSectors) + BitmapSuperblock.BYTES, (int) ((chunks + 7) / 8));
        boolean[] bits = new boolean[(int) chunks];
        for (int c = 0; c < bits.length; c++) {
            bits[c] = (b.get(c >>> 3) & (1 << (c & 7))) != 0;
        }
        return bits;
    }

    /** Writes a new internal bitmap to a member: its superblock, then every bit set (as mdadm creates one). */
    static void writeNewBitmap(MemberDisk disk, int bitmapOffsetSectors, BitmapSuperblock sb) throws IOException {
        long bytes = sb.areaBytes(4096);
        ByteBuffer b = AlignedBuffers.allocate((int) bytes);
        for (int i = 0; i < bytes; i++) {
            b.put(i, (byte) 0xff);
        }
        sb.encode(b, 0);
        disk.write(bitmapStart(bitmapOffsetSectors), b, 0, (int) bytes);
        disk.flush();
    }

    /** The internal bitmap's superblock (with MD_FEATURE_BITMAP_OFFSET), checked as md checks it. */
    static BitmapSuperblock readBitmap(MemberDisk disk, Superblock sb) throws IOException, SuperblockException {
        return BitmapSuperblock.decode(
                readRange(disk, bitmapStart(sb.bitmapOffset()), BitmapSuperblock.BYTES), sb.setUuid(), disk.name());
    }

    private static long bitmapStart(int bitmapOffsetSectors) {
        return (Superblock.SUPERBLOCK_OFFSET_SECTORS + bitmapOffsetSectors) * 512;
    }

    /** The superblock {@code m} carries, from the array's state; caller holds the metadata lock. */
    static Superblock build(ArrayMetadata meta, Member m) {
        var layout = meta.layout();
        Superblock sb = new Superblock()
                .setUuid(meta.uuid)
                .name(meta.name)
                .ctime(meta.ctime)
                .level(Superblock.LEVEL_RAID5)
                .layout(layout.algorithm().mdNumber())
                .size(layout.memberBytesUsed() / 512)
                .chunkSectors(layout.chunkSize() / 512)
                .raidDisks(layout.disks())
                .dataOffset(m.dataOffsetBytes / 512)
                .dataSize(m.dataSizeSectors)
                .superOffset(Superblock.SUPERBLOCK_OFFSET_SECTORS)
                .devNumber(m.devNumber)
                .deviceUuid(m.deviceUuid)
                .cntCorrectedRead((int) Math.min(Integer.MAX_VALUE, m.correctedSectors.get()))
                .devflags(m.devflags)
                .utime(MdTime.of(meta.utimeLocked(), 0))
                .events(meta.eventsLocked())
                .resyncOffset(toSectors(meta.resyncOffsetForDisk()));
        if (m.bblogOffset != 0) {
            sb.bblogShift(m.bblogShift).bblogSize(m.bblogSize).bblogOffset(m.bblogOffset);
            if (!m.badBlocks().isEmpty()) {
                sb.setFeature(Superblock.MD_FEATURE_BAD_BLOCKS, true);
            }
        }
        if (meta.bitmapOffset != 0) {
            sb.setFeature(Superblock.MD_FEATURE_BITMAP_OFFSET, true).bitmapOffset(meta.bitmapOffset);
        } else if (meta.pplSize != 0) {
            // As the kernel's super_1_sync writes it: the member's own area; MULTIPLE_PPLS when it
            // holds more than one io_unit, else PPL; never both.
            boolean multiple = PartialParityLog.multiple(m.pplSize);
            sb.setFeature(multiple ? Superblock.MD_FEATURE_MULTIPLE_PPLS : Superblock.MD_FEATURE_PPL, true)
                    .ppl(m.pplOffset, m.pplSize);
        }
        int[] roles = meta.rolesLocked();
        int maxDev = Math.max(Superblock.DEFAULT_MAX_DEV, roles.length);
        sb.maxDev(maxDev);
        for (int i = 0; i < maxDev; i++) {
            sb.devRole(i, i < roles.length ? roles[i] : ROLE_FAULTY);
        }
        if (m.state == MemberState.REBUILDING) {
            sb.setFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET, true);
            sb.recoveryOffset(m.recoveryOffset / 512);
        }
        if (meta.isReplacement(m)) {
            sb.setFeature(Superblock.MD_FEATURE_REPLACEMENT, true);
        }
        return sb;
    }

    /** Where mdadm puts {@code m}'s bad block log (sectors after the superblock), or -1 if it does not fit. */
    static long badBlockLogOffset(ArrayMetadata meta, Member m) {
        long bblog = meta.pplSize != 0
                ? m.pplOffset + m.pplSize
                : DataOffset.badBlockLogOffset(meta.layout().memberBytesUsed() / 512);
        boolean fits = m.dataOffsetBytes / 512
                >= Superblock.SUPERBLOCK_OFFSET_SECTORS + bblog + DataOffset.BAD_BLOCK_LOG_SECTORS;
        return fits ? bblog : -1;
    }

    /**
     * Gives a member new to the array (created, or joining as a spare) an empty bad block log (all
     * ones, as mdadm initialises it), where mdadm places it, so the log the superblock points at
     * holds no stale bytes.
     */
    static void initBadBlockLog(ArrayMetadata meta, Member m) throws IOException {
        long bblog = badBlockLogOffset(meta, m);
        if (bblog < 0) {
            return;
        }
        m.bblogOffset = (int) bblog;
        m.bblogSize = DataOffset.BAD_BLOCK_LOG_SECTORS;
        m.bblogShift = 0;
        writeBadBlockLog(m);
    }

    private static void writeBadBlockLog(Member m) throws IOException {
        int bytes = m.bblogSize * 512;
        ByteBuffer log = ByteBuffer.allocate(bytes);
        m.badBlocks().encode(log, m.bblogShift);
        long start = (Superblock.SUPERBLOCK_OFFSET_SECTORS + m.bblogOffset) * 512;
        updateBlocks(
                m.disk,
                null,
                start,
                bytes,
                (block, from, to, source, at) -> block.put(from, log, (int) (at + from - start), to - from));
    }

    /** Bytes {@code [start, start + length)} of {@code disk}, read in whole aligned 4 KiB blocks. */
    private static ByteBuffer readRange(MemberDisk disk, long start, int length) throws IOException {
        long first = start & -BLOCK;
        int span = (int) (((start + length + BLOCK - 1) & -BLOCK) - first);
        ByteBuffer buf = AlignedBuffers.allocate(span);
        disk.read(first, buf, 0, span);
        return buf.position((int) (start - first))
                .limit((int) (start - first) + length)
                .slice()
                .order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Copies the internal bitmap (superblock and bits) from a live member to one joining the array. */
    static void copyBitmap(ArrayMetadata meta, Member from, Member to) throws IOException {
        updateBlocks(
                to.disk,
                from.disk,
                bitmapStart(meta.bitmapOffset),
                BitmapSuperblock.BYTES + meta.bitmapBitBytes,
                (block, lo, hi, source, at) -> block.put(lo, source, lo, hi - lo));
    }

    /** Changes bytes {@code [from, to)} of one 4 KiB block; {@code source} holds the same block of another disk. */
    @FunctionalInterface
    private interface BlockEdit {
        void apply(ByteBuffer block, int from, int to, ByteBuffer source, long blockStart);
    }

    /**
     * Read-modify-write of {@code [start, start + length)} of {@code disk} in whole, aligned 4 KiB
     * blocks (what O_DIRECT members accept), so bytes around the range are kept as they are.
     */
    private static void updateBlocks(MemberDisk disk, MemberDisk source, long start, long length, BlockEdit edit)
            throws IOException {
        ByteBuffer block = AlignedBuffers.allocate(BLOCK);
        ByteBuffer other = source == null ? null : AlignedBuffers.allocate(BLOCK);
        long end = start + length;
        for (long b = start & -BLOCK; b < end; b += BLOCK) {
            disk.read(b, block, 0, BLOCK);
            if (source != null) {
                source.read(b, other, 0, BLOCK);
            }
            int from = (int) (Math.max(start, b) - b);
            int to = (int) (Math.min(end, b + BLOCK) - b);
            edit.apply(block, from, to, other, b);
            disk.write(b, block, 0, BLOCK);
        }
    }

    /** Bytes to md sectors, keeping "all ones" (MaxSector) for MAX_VALUE. */
    static long toSectors(long bytes) {
        return bytes == Long.MAX_VALUE ? Superblock.RESYNC_CLEAN : bytes / 512;
    }

    /** md sectors to bytes, mapping MaxSector (all ones) to MAX_VALUE. */
    static long toBytes(long sectors) {
        return sectors == Superblock.RESYNC_CLEAN || sectors >= Long.MAX_VALUE / 512 ? Long.MAX_VALUE : sectors * 512;
    }

    /**
     * Writes {@code m}'s superblock (and its bad block log first, when that changed) and forces it
     * to stable storage; caller holds the metadata lock. Reads the member's superblock back first
     * and compares it with what this array last wrote there (or found at assembly,
     * {@link Member#onDisk}): another array's, none, another member's or an older one means the
     * member was replaced underneath ({@link MemberReplacedException}: fail it, write nothing); this
     * array's own with events past the last written ones means another writer has been at it, as a
     * second line of defence behind member ownership ({@link NewerOnDiskException}: stop). A member
     * new to the array (created, or joining) has nothing to compare with until its first write.
     */
    static void write(ArrayMetadata meta, Member m) throws IOException {
        if (m.disk.size() < Superblock.SUPERBLOCK_OFFSET + BLOCK) {
            throw new EOFException(m.name() + " is too small to hold a superblock");
        }
        Superblock sb = build(meta, m);
        Superblock onDisk;
        String unreadable = null;
        try {
            onDisk = read(m.disk);
        } catch (SuperblockException notOurs) {
            onDisk = null;
            unreadable = notOurs.getMessage();
        }
        Member.OnDisk expected = m.onDisk;
        if (expected != null) {
            String replaced = replacedBy(meta, m, expected, onDisk, unreadable);
            if (replaced != null) {
                throw new MemberReplacedException(replaced);
            }
        }
        if (onDisk != null
                && Arrays.equals(onDisk.setUuid(), meta.uuid)
                && Arrays.equals(onDisk.deviceUuid(), m.deviceUuid)
                && (Long.compareUnsigned(onDisk.events(), sb.events()) >= 0
                        || (expected != null && Long.compareUnsigned(onDisk.events(), expected.events()) > 0))) {
            throw new NewerOnDiskException(m.name() + " holds events " + Long.toUnsignedString(onDisk.events())
                    + " of " + meta.name + " (" + MdUuid.format(meta.uuid) + "), past the "
                    + Long.toUnsignedString(expected != null ? expected.events() : sb.events() - 1)
                    + " this array wrote there last: another process or array changed it since this one opened it");
        }
        if (m.bblogOffset != 0 && m.takeBadBlocksChanged()) {
            writeBadBlockLog(m);
        }
        ByteBuffer buf = AlignedBuffers.allocate(BLOCK);
        sb.encode(buf);
        m.disk.write(Superblock.SUPERBLOCK_OFFSET, buf, 0, BLOCK);
        m.disk.flush();
        m.onDisk = Member.OnDisk.of(sb);
    }

    /**
     * Writes {@code sb} as {@code disk}'s superblock and flushes it: for a caller that owns every
     * member and writes whole superblocks itself ({@link OfflineReshape}).
     */
    static void writeSuperblock(MemberDisk disk, Superblock sb) throws IOException {
        disk.write(Superblock.SUPERBLOCK_OFFSET, encoded(sb), 0, BLOCK);
        disk.flush();
    }

    /** {@code sb} as the {@link #BLOCK} bytes written at {@link Superblock#SUPERBLOCK_OFFSET}. */
    static ByteBuffer encoded(Superblock sb) {
        ByteBuffer buf = AlignedBuffers.allocate(BLOCK);
        sb.encode(buf);
        return buf;
    }

    /**
     * Brings the events of {@code disk}'s internal bitmap superblock to {@code events}, as md's
     * md_update_sb has md_bitmap_update_sb do with every superblock update: a bitmap behind the
     * superblock is taken for stale (a full resync) at the next assembly, by md and by raidfive.
     */
    static void writeBitmapEvents(MemberDisk disk, Superblock sb, long events) throws IOException, SuperblockException {
        BitmapSuperblock bitmap = readBitmap(disk, sb).events(events);
        ByteBuffer encoded = ByteBuffer.allocate(BitmapSuperblock.BYTES);
        bitmap.encode(encoded, 0);
        long start = bitmapStart(sb.bitmapOffset());
        updateBlocks(
                disk,
                null,
                start,
                BitmapSuperblock.BYTES,
                (block, from, to, source, at) -> block.put(from, encoded, (int) (at + from - start), to - from));
    }

    /** Copies the internal bitmap's area (superblock and bits, {@code bytes} of it) from one disk to another. */
    static void copyBitmapArea(MemberDisk from, MemberDisk to, Superblock sb, long bytes) throws IOException {
        updateBlocks(
                to,
                from,
                bitmapStart(sb.bitmapOffset()),
                bytes,
                (block, lo, hi, source, at) -> block.put(lo, source, lo, hi - lo));
    }

    /** An empty bad block log (as mdadm initialises one) where {@code sb} says {@code disk}'s log is. */
    static void writeEmptyBadBlockLog(MemberDisk disk, Superblock sb) throws IOException {
        int bytes = sb.bblogSize() * 512;
        ByteBuffer log = ByteBuffer.allocate(bytes);
        BadBlockLog.EMPTY.encode(log, sb.bblogShift());
        long start = (Superblock.SUPERBLOCK_OFFSET_SECTORS + sb.bblogOffset()) * 512;
        updateBlocks(
                disk,
                null,
                start,
                bytes,
                (block, from, to, source, at) -> block.put(from, log, (int) (at + from - start), to - from));
    }

    /**
     * What is on {@code m} instead of what this array last wrote there, in words, or null when it is
     * still this array's superblock of this member with the same role and not older events (newer
     * events are {@link NewerOnDiskException}'s case).
     */
    private static String replacedBy(
            ArrayMetadata meta, Member m, Member.OnDisk expected, Superblock onDisk, String unreadable) {
        String was = m.name() + " was replaced underneath " + meta.name + ": ";
        String kept = "; it is failed and left as it is";
        if (onDisk == null) {
            return was + "it holds no md superblock of its own now (" + unreadable + ")" + kept;
        }
        if (!Arrays.equals(onDisk.setUuid(), meta.uuid)) {
            return was + "it holds a member of array " + onDisk.name() + " (UUID " + MdUuid.format(onDisk.setUuid())
                    + ", device " + MdUuid.format(onDisk.deviceUuid()) + ", events "
                    + Long.toUnsignedString(onDisk.events()) + ")" + kept;
        }
        if (!Arrays.equals(onDisk.deviceUuid(), expected.deviceUuid()) || onDisk.devNumber() != expected.devNumber()) {
            return was + "it holds another member of this array (device " + MdUuid.format(onDisk.deviceUuid())
                    + ", dev_number " + onDisk.devNumber() + ", not device " + MdUuid.format(expected.deviceUuid())
                    + ", dev_number " + expected.devNumber() + "): a copy?" + kept;
        }
        if (Long.compareUnsigned(onDisk.events(), expected.events()) < 0) {
            return was + "it holds an older copy of itself (events " + Long.toUnsignedString(onDisk.events())
                    + ", this array wrote " + Long.toUnsignedString(expected.events()) + "): a restored image?" + kept;
        }
        int role = onDisk.devNumber() < onDisk.maxDev() ? onDisk.devRole(onDisk.devNumber()) : -1;
        if (onDisk.events() == expected.events() && role != expected.role()) {
            return was + "at the same events it records role " + role + ", this array wrote " + expected.role() + kept;
        }
        return null;
    }
}
