package org.raidfive.array;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/** Reads and writes members' md v1.2 superblocks (4 KiB at 4 KiB), mapping engine state to md's fields. */
final class SuperblockIo {
    static final int ROLE_SPARE = Superblock.ROLE_SPARE;
    static final int ROLE_FAULTY = Superblock.ROLE_FAULTY;
    static final int BLOCK = 4096;

    private SuperblockIo() {
    }

    /** Reads the superblock of {@code disk}; a disk too small to hold one has none. */
    static Superblock read(MemberDisk disk) throws IOException, SuperblockException {
        if (disk.size() < Superblock.SUPERBLOCK_OFFSET + BLOCK) {
            throw new SuperblockException(disk.name(), "not an md member: the disk (" + disk.size()
                    + " bytes) is too small to hold a superblock at " + Superblock.SUPERBLOCK_OFFSET);
        }
        ByteBuffer buf = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
        buf.limit(BLOCK);
        disk.read(Superblock.SUPERBLOCK_OFFSET, buf, 0, BLOCK);
        return Superblock.decode(buf, disk.name(), Superblock.SUPERBLOCK_OFFSET_SECTORS);
    }

    /** The superblock {@code m} carries, from the array's state; caller holds the metadata lock. */
    static Superblock build(ArrayMetadata meta, Member m) {
        var layout = meta.layout;
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
                .dataSize((m.disk.size() - m.dataOffsetBytes) / 512)
                .superOffset(Superblock.SUPERBLOCK_OFFSET_SECTORS)
                .devNumber(m.devNumber)
                .deviceUuid(m.deviceUuid)
                .cntCorrectedRead(m.correctedReadErrors.get())
                .utime(org.raidfive.md.MdTime.of(meta.utimeLocked(), 0))
                .events(meta.eventsLocked())
                .resyncOffset(toSectors(meta.resyncOffsetForDisk()));
        // mdadm reserves an (empty) 8-sector bad block log after the bitmap space on every member it
        // creates, and md keeps it: keep that reservation, so md can record bad blocks on the member.
        long bblog = badBlockLogOffset(meta, m);
        if (bblog >= 0) {
            sb.bblogShift(0).bblogSize(org.raidfive.md.DataOffset.BAD_BLOCK_LOG_SECTORS).bblogOffset((int) bblog);
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

    /** Where mdadm puts the bad block log (sectors after the superblock), or -1 if it does not fit. */
    static long badBlockLogOffset(ArrayMetadata meta, Member m) {
        long bblog = org.raidfive.md.DataOffset.badBlockLogOffset(meta.layout.memberBytesUsed() / 512);
        boolean fits = m.dataOffsetBytes / 512 >= Superblock.SUPERBLOCK_OFFSET_SECTORS + bblog
                + org.raidfive.md.DataOffset.BAD_BLOCK_LOG_SECTORS;
        return fits ? bblog : -1;
    }

    /**
     * Writes an empty bad block log (all ones, as mdadm initialises it) on a member new to the array,
     * so the log the superblock points at holds no stale bytes.
     */
    static void initBadBlockLog(ArrayMetadata meta, Member m) throws IOException {
        long bblog = badBlockLogOffset(meta, m);
        if (bblog < 0) {
            return;
        }
        int bytes = org.raidfive.md.DataOffset.BAD_BLOCK_LOG_SECTORS * 512;
        ByteBuffer buf = ByteBuffer.allocateDirect(bytes + BLOCK).alignedSlice(BLOCK);
        for (int i = 0; i < bytes; i++) {
            buf.put(i, (byte) 0xff);
        }
        m.disk.write((Superblock.SUPERBLOCK_OFFSET_SECTORS + bblog) * 512, buf, 0, bytes);
    }

    /** Bytes to md sectors, keeping "all ones" (MaxSector) for MAX_VALUE. */
    static long toSectors(long bytes) {
        return bytes == Long.MAX_VALUE ? Superblock.RESYNC_CLEAN : bytes / 512;
    }

    /** md sectors to bytes, mapping MaxSector (all ones) to MAX_VALUE. */
    static long toBytes(long sectors) {
        return sectors == Superblock.RESYNC_CLEAN || sectors >= Long.MAX_VALUE / 512 ? Long.MAX_VALUE : sectors * 512;
    }

    /** Writes {@code m}'s superblock and forces it to stable storage; caller holds the metadata lock. */
    static void write(ArrayMetadata meta, Member m) throws IOException {
        if (m.disk.size() < Superblock.SUPERBLOCK_OFFSET + BLOCK) {
            throw new EOFException(m.name() + " is too small to hold a superblock");
        }
        ByteBuffer buf = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
        buf.limit(BLOCK);
        build(meta, m).encode(buf);
        m.disk.write(Superblock.SUPERBLOCK_OFFSET, buf, 0, BLOCK);
        m.disk.flush();
    }
}
