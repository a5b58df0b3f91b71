package org.raidfive.md;

import java.util.ArrayList;
import java.util.List;

/**
 * Where md's metadata lies on one v1.2 member, checked before anything is written to it: the
 * superblock, the write-intent bitmap, the bad block log and the partial parity log must each lie
 * on the device, before the data (v1.2 keeps every area between the superblock and
 * {@code data_offset}), clear of the superblock and of one another. The rules are md's
 * ({@code super_1_load}, {@code md-bitmap.c}'s {@code __write_sb_page}, {@code raid5-ppl.c}'s
 * {@code ppl_validate_rdev}), with one addition md leaves to luck: no two areas overlap.
 *
 * <p>Offsets in a superblock are signed and count from {@code super_offset}; this class works in
 * absolute device sectors, with every sum checked, so no field can wrap an area around the device.
 * Each member is checked with its own superblock's areas (md keeps the bad block log and the PPL
 * area per device) and the array's bitmap (md keeps one bitmap offset for the array, written on
 * every member).
 */
public final class MemberAreas {
    /** One area: {@code sectors} device sectors from {@code start}. */
    public record Area(String name, long start, long sectors) {
        /** The first sector after the area. */
        public long end() {
            return start + sectors;
        }

        @Override
        public String toString() {
            return name + " (sectors " + start + ".." + (end() - 1) + ")";
        }
    }

    private final List<Area> areas;

    private MemberAreas(final List<Area> areas) {
        this.areas = List.copyOf(areas);
    }

    /** The areas found, superblock first. */
    public List<Area> areas() {
        return areas;
    }

    /**
     * The superblock's sectors as md counts them ({@code sb_size}: 256 bytes and two per device
     * role, rounded up to whole 512-byte sectors).
     */
    public static long superblockSectors(final Superblock sb) {
        return (SuperblockFormat.span(sb.maxDev()) + Superblock.SECTOR_BYTES - 1) / Superblock.SECTOR_BYTES;
    }

    /**
     * Checks one member's metadata areas.
     *
     * @param sb the member's own superblock (already decoded, so its own fields are in range)
     * @param deviceSectors the member's size in 512-byte sectors
     * @param bitmapOffset the array's bitmap offset from the superblock (signed sectors), or null
     *                     when the array has no bitmap
     * @param bitmapSectors the sectors the array's bitmap spans (its superblock and bits)
     * @param member the member's name, for the message
     * @throws CorruptSuperblockException naming the member, the field, its value and the rule broken
     */
    public static MemberAreas check(
            final Superblock sb,
            final long deviceSectors,
            final Integer bitmapOffset,
            final long bitmapSectors,
            final String member)
            throws CorruptSuperblockException {
        final long superStart = sb.superOffset();
        final long dataOffset = sb.dataOffset();
        final List<Area> found = new ArrayList<>();
        final Area superblock = new Area("the superblock", superStart, superblockSectors(sb));
        found.add(superblock);
        if (Long.compareUnsigned(dataOffset, deviceSectors) > 0) {
            throw corrupt(
                    member,
                    "data_offset " + Long.toUnsignedString(dataOffset) + " is past the end of the " + "device ("
                            + deviceSectors + " sectors)");
        }
        // super_1_load: the device must hold data_size sectors after data_offset
        if (Long.compareUnsigned(sb.dataSize(), deviceSectors - dataOffset) > 0) {
            throw corrupt(
                    member,
                    "data_size " + Long.toUnsignedString(sb.dataSize()) + " sectors from data_offset " + dataOffset
                            + " runs past the end of the device (" + deviceSectors + " sectors), which md refuses");
        }
        if (bitmapOffset != null) {
            final Area bitmap = new Area("the write-intent bitmap", superStart + bitmapOffset, bitmapSectors);
            if (bitmapOffset < superblock.sectors()) {
                // md's __write_sb_page: a negative offset puts the bitmap before the superblock, where
                // a v1.2 member's data would run into it; a small one writes over the superblock.
                throw corrupt(
                        member,
                        "bitmap_offset " + bitmapOffset + " puts the bitmap "
                                + (bitmapOffset < 0 ? "before" : "on")
                                + " the superblock; on a v1.2 member md needs it between "
                                + "the superblock (which ends at offset " + superblock.sectors() + ") and the data");
            }
            if (bitmap.end() > dataOffset) {
                throw corrupt(
                        member,
                        "bitmap_offset " + bitmapOffset + " with a bitmap of " + bitmapSectors
                                + " sectors runs into the data at data_offset " + dataOffset
                                + " (the bitmap would end at sector "
                                + bitmap.end() + "), which md refuses");
            }
            found.add(bitmap);
        }
        if (sb.bblogOffset() != 0 && sb.bblogSize() != 0) {
            final Area log = new Area("the bad block log", superStart + sb.bblogOffset(), sb.bblogSize());
            if (log.start() < 0 || log.end() > dataOffset) {
                throw corrupt(
                        member,
                        "bblog_offset " + sb.bblogOffset() + " with bblog_size " + sb.bblogSize()
                                + " puts the bad block log at sectors " + log.start() + ".." + (log.end() - 1)
                                + ", outside the metadata space before the data (0.." + (dataOffset - 1) + ")");
            }
            found.add(log);
        }
        if (sb.hasFeature(Superblock.MD_FEATURE_PPL) || sb.hasFeature(Superblock.MD_FEATURE_MULTIPLE_PPLS)) {
            found.add(pplArea(sb, dataOffset, superblock, member));
        }
        for (int i = 1; i < found.size(); i++) {
            final Area a = found.get(i);
            if (a.end() > deviceSectors) {
                throw corrupt(member, a + " ends past the end of the device (" + deviceSectors + " sectors)");
            }
            for (int j = 0; j < i; j++) {
                final Area b = found.get(j);
                if (a.start() < b.end() && b.start() < a.end()) {
                    throw corrupt(member, a + " overlaps " + b + "; md would write one over the other");
                }
            }
        }
        return new MemberAreas(found);
    }

    /** md's {@code ppl_validate_rdev}: room for a header and a stripe's partial parity, clear of data and superblock. */
    private static Area pplArea(final Superblock sb, final long dataOffset, final Area superblock, final String member)
            throws CorruptSuperblockException {
        final int offset = sb.pplOffset();
        final int size = sb.pplSize();
        final int header = PplHeader.SIZE / Superblock.SECTOR_BYTES;
        final int data = (size - header) / 8 * 8;
        if (size - header <= 0 || data <= 0) {
            throw corrupt(
                    member,
                    "ppl.size " + size + " sectors leaves no room for a " + header
                            + "-sector header and one 4 KiB stripe of partial parity (md: PPL space too small)");
        }
        final Area ppl = new Area("the partial parity log", superblock.start() + offset, header + data);
        if (ppl.start() < dataOffset ? ppl.end() > dataOffset : true) {
            // v1.2: the data runs to the end of the device, so an area after data_offset is in it
            throw corrupt(
                    member,
                    "ppl.offset " + offset + " with ppl.size " + size + " puts the partial parity log at "
                            + "sectors " + ppl.start() + ".." + (ppl.end() - 1)
                            + ", which overlaps the data from data_offset "
                            + dataOffset + " (md: PPL space overlaps with data)");
        }
        if ((offset > 0 && offset < superblock.sectors())
                || (offset <= 0 && offset + header + data > 0)
                || ppl.start() < 0) {
            throw corrupt(
                    member,
                    "ppl.offset " + offset + " with ppl.size " + size + " overlaps the superblock "
                            + "(sectors " + superblock.start() + ".." + (superblock.end() - 1)
                            + ") or starts before the device (md: PPL space overlaps with superblock)");
        }
        return ppl;
    }

    private static CorruptSuperblockException corrupt(final String member, final String problem) {
        return new CorruptSuperblockException(member, problem);
    }
}
