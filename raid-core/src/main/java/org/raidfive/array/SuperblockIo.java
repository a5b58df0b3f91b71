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
