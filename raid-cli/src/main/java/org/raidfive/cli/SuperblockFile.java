package org.raidfive.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.BitmapSuperblock;
import org.raidfive.md.CorruptSuperblockException;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/**
 * Reads a member's md v1.2 superblock directly, opening the file read-only (or connecting to the NBD
 * export just for this): for
 * {@code examine}, for {@code detail} when the array cannot be assembled, and to classify members.
 */
final class SuperblockFile {
    /** Bytes the kernel reads for a v1.2 superblock. */
    private static final int BLOCK = Superblock.MAX_SUPERBLOCK_BYTES;
    /**
     * Offset of {@code sb_csum} in {@code struct mdp_superblock_1} (Linux {@code md_p.h}); raid-core
     * keeps its field offsets package-private, and examine must show a wrong checksum's fields.
     */
    private static final int SB_CSUM_OFFSET = 216;

    private SuperblockFile() {}

    /**
     * A superblock as found: {@code storedChecksum == expectedChecksum} unless it was decoded despite
     * a wrong checksum.
     */
    record Read(Superblock sb, int storedChecksum, int expectedChecksum, long memberBytes, long bitmapSectors) {
        boolean checksumCorrect() {
            return storedChecksum == expectedChecksum;
        }

        Read withBitmapSectors(long sectors) {
            return new Read(sb, storedChecksum, expectedChecksum, memberBytes, sectors);
        }
    }

    /** Reads and fully validates; a wrong checksum is refused like any corruption. */
    static Superblock readValid(Path path, String name) throws IOException, SuperblockException {
        try (FileDisk disk = FileDisk.openReadOnly(path)) {
            return Superblock.decode(block(disk, name), name, Superblock.SUPERBLOCK_OFFSET_SECTORS);
        }
    }

    /** {@link #readValid(Path, String)} of a member spec: a file, or an NBD export (opened just for this). */
    static Superblock readValid(String spec) throws IOException, SuperblockException {
        if (Members.isNbd(spec)) {
            try (MemberDisk disk = Members.openNbd(spec)) {
                return Superblock.decode(block(disk, spec), spec, Superblock.SUPERBLOCK_OFFSET_SECTORS);
            }
        }
        return readValid(Members.existingFile(spec), spec);
    }

    /** {@link #read(Path, String)} of a member spec: a file, or an NBD export (opened just for this). */
    static Read read(String spec) throws IOException, SuperblockException {
        if (Members.isNbd(spec)) {
            try (MemberDisk disk = Members.openNbd(spec)) {
                return read(disk, spec);
            }
        }
        return read(Members.existingFile(spec), spec);
    }

    /** {@link #read(Path, String)} from an open disk. */
    static Read read(MemberDisk disk, String name) throws IOException, SuperblockException {
        Read r = read(block(disk, name), name, disk.size());
        if (!r.sb().hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            return r;
        }
        // What mdadm's getinfo_super1 counts as the bitmap's extent: superblock and bits, in 4 KiB pages.
        ByteBuffer head = ByteBuffer.allocate(BitmapSuperblock.BYTES);
        disk.read((r.sb().superOffset() + r.sb().bitmapOffset()) * 512L, head, 0, head.capacity());
        BitmapSuperblock b = BitmapSuperblock.decode(head, r.sb().setUuid(), name);
        return r.withBitmapSectors(b.areaBytes(4096) / 512);
    }

    /**
     * Reads and validates, except that a superblock whose only fault is its checksum is returned
     * with both checksums (as {@code mdadm --examine} shows "expected ...").
     */
    static Read read(Path path, String name) throws IOException, SuperblockException {
        try (FileDisk disk = FileDisk.openReadOnly(path)) { // a block device's size too, not the 0 fstat gives
            return read(disk, name);
        }
    }

    private static Read read(ByteBuffer block, String name, long memberBytes) throws SuperblockException {
        try {
            Superblock sb = Superblock.decode(
                    block.duplicate().order(ByteOrder.LITTLE_ENDIAN), name, Superblock.SUPERBLOCK_OFFSET_SECTORS);
            return new Read(sb, sb.sbCsum(), sb.sbCsum(), memberBytes, 0);
        } catch (CorruptSuperblockException e) {
            int expected;
            try {
                expected = Superblock.checksum(block);
            } catch (IllegalArgumentException notOurs) {
                throw e;
            }
            int stored = block.getInt(SB_CSUM_OFFSET);
            if (stored == expected) {
                throw e;
            }
            ByteBuffer fixed = ByteBuffer.allocate(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
            fixed.put(block.duplicate());
            fixed.flip();
            fixed.putInt(SB_CSUM_OFFSET, expected);
            try {
                Superblock sb = Superblock.decode(fixed, name, Superblock.SUPERBLOCK_OFFSET_SECTORS);
                return new Read(sb, stored, expected, memberBytes, 0);
            } catch (SuperblockException other) {
                throw e;
            }
        }
    }

    private static ByteBuffer block(MemberDisk disk, String name) throws IOException, SuperblockException {
        long size = disk.size();
        if (size < Superblock.SUPERBLOCK_OFFSET + BLOCK) {
            String what = disk instanceof FileDisk ? "file" : "export";
            throw new SuperblockException(
                    name,
                    "not an md member: the " + what + " (" + size + " bytes) is too small to hold a superblock at "
                            + Superblock.SUPERBLOCK_OFFSET);
        }
        ByteBuffer buf = ByteBuffer.allocate(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
        disk.read(Superblock.SUPERBLOCK_OFFSET, buf, 0, BLOCK);
        return buf;
    }
}
