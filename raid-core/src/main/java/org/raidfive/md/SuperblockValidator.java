package org.raidfive.md;

import static org.raidfive.md.Superblock.*;

/**
 * The rules a decoded superblock must satisfy beyond magic, version, max_dev,
 * checksum and padding (which {@link Superblock#decode} checks on the raw bytes).
 * They are the kernel's ({@code super_1_load}, {@code super_1_validate},
 * {@code bind_rdev_to_array}, raid5's {@code setup_conf}) plus this engine's:
 * raid5 only. {@link Superblock#encode} applies the same rules before writing.
 */
final class SuperblockValidator {
    private SuperblockValidator() {}

    static void check(final Superblock sb, final long readAtSector, final String member) throws SuperblockException {
        final int features = sb.featureMap();
        if ((features & ~MD_FEATURE_ALL) != 0) {
            throw new SuperblockException(
                    member,
                    String.format(
                            "unsupported feature bits 0x%x (feature_map 0x%x)", features & ~MD_FEATURE_ALL, features));
        }
        if (sb.superOffset() != readAtSector) {
            throw corrupt(
                    member,
                    "super_offset says sector " + Long.toUnsignedString(sb.superOffset())
                            + ", but the superblock was read at sector " + readAtSector);
        }
        if (sb.level() != LEVEL_RAID5) {
            throw new SuperblockException(member, "raid level " + sb.level() + " is not supported (only raid5)");
        }
        if (!MdLayout.isValid(sb.layout())) {
            throw new SuperblockException(
                    member,
                    "layout " + sb.layout() + " is not a raid5 layout (valid: 0..5, " + MdLayout.validNames() + ")");
        }
        checkChunk(sb, member);
        if (sb.raidDisks() < 2 || sb.raidDisks() > MAX_DEV_LIMIT) {
            throw corrupt(
                    member,
                    "raid_disks " + Integer.toUnsignedString(sb.raidDisks()) + " out of range (2.." + MAX_DEV_LIMIT
                            + ")");
        }
        if (Integer.compareUnsigned(sb.devNumber(), MAX_DEV_LIMIT) >= 0) {
            throw corrupt(
                    member,
                    "dev_number " + Integer.toUnsignedString(sb.devNumber()) + " out of range (0.."
                            + (MAX_DEV_LIMIT - 1) + ")");
        }
        checkSizes(sb, member);
        checkRoles(sb, member);
        checkFeatures(sb, member);
    }

    private static void checkChunk(final Superblock sb, final String member) throws CorruptSuperblockException {
        final int chunk = sb.chunkSectors();
        if (chunk == 0 || Integer.bitCount(chunk) != 1) {
            throw corrupt(member, "chunk size " + Integer.toUnsignedString(chunk) + " sectors is not a power of two");
        }
        if (Integer.compareUnsigned(chunk, 8) < 0) {
            throw corrupt(member, "chunk size " + chunk + " sectors is smaller than raid5's minimum of 8 (4 KiB)");
        }
    }

    private static void checkSizes(final Superblock sb, final String member) throws CorruptSuperblockException {
        // super_1_load: data (and the data after a reshape) must start after the superblock's sectors
        final long superEnd = sb.superOffset() + (SuperblockFormat.span(sb.maxDev()) + SECTOR_BYTES - 1) / SECTOR_BYTES;
        final long dataOffset = sb.dataOffset();
        if (Long.compareUnsigned(dataOffset, superEnd) < 0) {
            throw corrupt(
                    member,
                    "data_offset " + Long.toUnsignedString(dataOffset) + " overlaps the superblock (sectors "
                            + sb.superOffset() + ".." + (superEnd - 1) + ")");
        }
        if (sb.hasFeature(MD_FEATURE_RESHAPE_ACTIVE) && sb.hasFeature(MD_FEATURE_NEW_OFFSET)) {
            final long newDataOffset = dataOffset + sb.newOffset();
            if (Long.compareUnsigned(newDataOffset, superEnd) < 0) {
                throw corrupt(
                        member,
                        "data_offset + new_offset = " + newDataOffset + " overlaps the superblock (sectors "
                                + sb.superOffset() + ".." + (superEnd - 1) + ")");
            }
        }
        final long dataSize = sb.dataSize();
        if (Long.compareUnsigned(dataSize, 10) < 0) {
            throw corrupt(member, "data_size " + dataSize + " sectors is too small (the kernel needs at least 10)");
        }
        if (Long.compareUnsigned(dataSize, -1L - dataOffset) > 0) {
            throw corrupt(
                    member,
                    "data_offset " + Long.toUnsignedString(dataOffset) + " + data_size "
                            + Long.toUnsignedString(dataSize) + " overflows 64 bits");
        }
        if (sb.size() == 0) {
            throw corrupt(member, "size (sectors used per member) is 0");
        }
        if (Long.compareUnsigned(sb.size(), dataSize) > 0) {
            throw corrupt(
                    member,
                    "size " + Long.toUnsignedString(sb.size()) + " sectors exceeds data_size "
                            + Long.toUnsignedString(dataSize));
        }
    }

    private static void checkRoles(final Superblock sb, final String member) throws CorruptSuperblockException {
        // while a reshape shrinks the array, raid_disks is the old (larger) count, so it bounds every slot
        final int slots =
                sb.raidDisks() + (sb.hasFeature(MD_FEATURE_RESHAPE_ACTIVE) ? Math.max(0, -sb.deltaDisks()) : 0);
        for (int i = 0; i < sb.maxDev(); i++) {
            final int role = sb.devRole(i);
            if (role < ROLE_MAX) {
                if (role >= slots) {
                    throw corrupt(
                            member, "dev_roles[" + i + "] is slot " + role + ", beyond raid_disks " + sb.raidDisks());
                }
            } else if (role != ROLE_SPARE && role != ROLE_FAULTY && role != ROLE_JOURNAL) {
                throw corrupt(
                        member,
                        String.format("dev_roles[%d] is 0x%04x, neither a slot nor spare/faulty/journal", i, role));
            }
        }
        if (sb.role() == ROLE_JOURNAL && !sb.hasFeature(MD_FEATURE_JOURNAL)) {
            throw corrupt(member, "this device's role is journal but feature_map lacks MD_FEATURE_JOURNAL");
        }
    }

    private static void checkFeatures(final Superblock sb, final String member) throws CorruptSuperblockException {
        final boolean ppl = (sb.featureMap() & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)) != 0;
        if (ppl && (sb.featureMap() & (MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_JOURNAL)) != 0) {
            throw corrupt(
                    member,
                    "PPL cannot be combined with a bitmap or a journal (feature_map 0x"
                            + Integer.toHexString(sb.featureMap()) + ")");
        }
        if (sb.hasFeature(MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)) {
            throw corrupt(member, "MD_FEATURE_PPL and MD_FEATURE_MULTIPLE_PPLS are both set");
        }
        if (sb.hasFeature(MD_FEATURE_RAID0_LAYOUT)) {
            throw corrupt(member, "MD_FEATURE_RAID0_LAYOUT is set on a raid" + sb.level() + " member");
        }
        if (sb.hasFeature(MD_FEATURE_BAD_BLOCKS)) {
            if (sb.bblogSize() > 8) {
                throw corrupt(member, "bad block log of " + sb.bblogSize() + " sectors exceeds one page (8 sectors)");
            }
            if (sb.bblogOffset() == 0) {
                throw corrupt(member, "MD_FEATURE_BAD_BLOCKS is set but bblog_offset is 0");
            }
        }
    }

    private static CorruptSuperblockException corrupt(final String member, final String problem) {
        return new CorruptSuperblockException(member, problem);
    }
}
