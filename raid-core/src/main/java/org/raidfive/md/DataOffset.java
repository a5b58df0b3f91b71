package org.raidfive.md;

/**
 * Where data starts on a new v1.2 member, chosen exactly as Debian's mdadm 4.2
 * does for {@code mdadm --create --metadata=1.2} without {@code --data-offset}.
 *
 * <p>The rule, from mdadm {@code super1.c}, {@code validate_geometry1()}, case
 * minor version 2 (sizes in 512-byte sectors; {@code devsize} is the member's size):
 * <pre>
 *   bmspace   = choose_bm_space(devsize)    // 0 below 64 KiB, 8 (4 KiB), 128 above 8 GiB, 256 from 200 GiB
 *   headroom  = 262144                      // 128 MiB, room for a reshape
 *   while (headroom &lt;&lt; 10 &gt; devsize           // aim for about 0.1% of the member...
 *          &amp;&amp; headroom / 2 &gt;= 2 * chunk)      // ...but keep at least twice the chunk
 *       headroom &gt;&gt;= 1
 *   data_offset = ROUND_UP(24 + bmspace + headroom, 2048)   // 12 KiB of metadata, 1 MiB aligned
 * </pre>
 * The bitmap space is reserved whether or not a bitmap is asked for. mdadm
 * computes this on the first member and uses it for every member of the
 * array. It then makes each member's {@code size} the free space
 * {@code devsize - data_offset} rounded down to a whole chunk
 * ({@code Create.c}); a member with no room left is refused.
 *
 * <p>So a 64 MiB member gets 2048 sectors with a 64 KiB chunk but 4096 with
 * the default 512 KiB chunk; members from 1 GiB to just under 2 GiB get 4096;
 * from 128 GiB on, 264192 (128 MiB + 1 MiB). Older mdadm (3.x) rounded down
 * instead and gave 262144 there. Checked against mdadm 4.2 itself: see
 * {@code src/test/resources/md/mdadm-4.2-size-set.csv} and its test.
 */
public final class DataOffset {
    /** 1 MiB in sectors: data_offset is always a multiple of it. */
    public static final long ONE_MIB_SECTORS = 2048;
    /** The most headroom mdadm leaves for reshapes: 128 MiB. */
    public static final long MAX_HEADROOM_SECTORS = 128L * 1024 * 2;
    /** Sectors mdadm always reserves for superblock and friends before the bitmap space: 12 KiB. */
    public static final long METADATA_SECTORS = 12 * 2;
    /** Size of the bad block log mdadm reserves: 4 KiB. */
    public static final int BAD_BLOCK_LOG_SECTORS = 8;

    private DataOffset() {}

    /**
     * data_offset, in sectors, that mdadm 4.2 chooses for a new v1.2 raid5 whose
     * first member has {@code memberSectors} sectors and whose chunk is
     * {@code chunkSectors} (a power of two, at least 8).
     */
    public static long forNewMember(final long memberSectors, final int chunkSectors) {
        return forNewMember(memberSectors, chunkSectors, false);
    }

    /**
     * {@link #forNewMember(long, int)} for an array with md's partial parity log, whose area (1 MiB,
     * mdadm's {@code MULTIPLE_PPL_AREA_SIZE_SUPER1}) takes the place of the bitmap space.
     */
    public static long forNewMember(final long memberSectors, final int chunkSectors, final boolean ppl) {
        checkChunk(chunkSectors);
        if (memberSectors < 0) {
            throw new IllegalArgumentException("member size " + memberSectors + " sectors is negative");
        }
        final long space = ppl ? PplHeader.AREA_SECTORS : bitmapSpace(memberSectors);
        final long offset = METADATA_SECTORS + space + headroom(memberSectors, chunkSectors);
        return (offset + ONE_MIB_SECTORS - 1) / ONE_MIB_SECTORS * ONE_MIB_SECTORS;
    }

    /**
     * The {@code size} (sectors used per member) mdadm 4.2 gives an array on
     * members of {@code memberSectors}: the space after {@link #forNewMember} rounded
     * down to whole chunks.
     *
     * @throws IllegalArgumentException naming the sizes when no chunk fits,
     *         as mdadm refuses such a member ("too small" / "no free space left").
     */
    public static long usableSectors(final long memberSectors, final int chunkSectors) {
        final long dataOffset = forNewMember(memberSectors, chunkSectors);
        final long free = memberSectors - dataOffset;
        final long usable = free < 0 ? 0 : free / chunkSectors * chunkSectors;
        if (usable == 0) {
            throw new IllegalArgumentException(
                    "member of " + memberSectors + " sectors is too small: data would start at sector " + dataOffset
                            + ", leaving no whole " + chunkSectors + "-sector chunk");
        }
        return usable;
    }

    /**
     * mdadm's {@code choose_bm_space}: sectors kept for a write-intent bitmap on a
     * member (or a used size) of {@code sectors}: none below 64 KiB, 4 KiB up to
     * 8 GiB, 64 KiB above, 128 KiB from 200 GiB.
     */
    public static long bitmapSpace(final long sectors) {
        if (sectors < 64 * 2) {
            return 0;
        }
        if (sectors - 64 * 2 >= 200L * 1024 * 1024 * 2) {
            return 128 * 2;
        }
        if (sectors - 4 * 2 > 8L * 1024 * 1024 * 2) {
            return 64 * 2;
        }
        return 4 * 2;
    }

    /** mdadm caps a bitmap added to an existing array at this many sectors (128 KiB). */
    public static final long ADDED_BITMAP_MAX_SECTORS = 256;

    /**
     * mdadm's room for a write-intent bitmap added to an existing v1.2 array on one member
     * ({@code add_internal_bitmap1}, not creating): from 8 sectors after the superblock to the bad
     * block log (or, without one, to the data, less the 8 sectors a bad block log would take), in
     * sectors; offsets count from the superblock, {@code dataOffsetSectors} from the device's start.
     * The array's room is the smallest of its members', at most {@link #ADDED_BITMAP_MAX_SECTORS}.
     */
    public static long addedBitmapRoom(final long bblogOffset, final long bblogSize, final long dataOffsetSectors) {
        long end = bblogSize != 0 ? bblogOffset + bblogSize : dataOffsetSectors - Superblock.SUPERBLOCK_OFFSET_SECTORS;
        long badBlockLog = bblogSize != 0 ? bblogSize : BAD_BLOCK_LOG_SECTORS;
        return end - 8 - badBlockLog;
    }

    /**
     * mdadm's room for a partial parity log added to an existing v1.2 array on one member: from
     * {@link PplHeader#AREA_OFFSET} after the superblock to the bad block log or the data, in sectors.
     */
    public static long addedPplRoom(final long bblogOffset, final long dataOffsetSectors) {
        return bblogOffset != 0
                ? bblogOffset - PplHeader.AREA_OFFSET
                : dataOffsetSectors - Superblock.SUPERBLOCK_OFFSET_SECTORS - PplHeader.AREA_OFFSET;
    }

    /**
     * mdadm's size of a partial parity log added where the smallest member has {@code room} sectors
     * for it: 1 MiB when it fits, else a header and a chunk (at least 128 KiB), at most the room and
     * 0xffff sectors; -1 when the room is below the header and 8 sectors (md needs that much).
     */
    public static long addedPplSize(final long room, final int chunkBytes) {
        int header = PplHeader.SIZE / 512;
        if (room < header + 8) {
            return -1;
        }
        if (room >= PplHeader.AREA_SECTORS) {
            return PplHeader.AREA_SECTORS;
        }
        long optimal = header + Math.max(chunkBytes / 512, 256);
        return Math.min(Math.min(room, optimal), 0xffff);
    }

    /** Reshape headroom mdadm 4.2 leaves on a member: about 0.1% of it, at most 128 MiB, at least 2 chunks. */
    public static long headroom(final long memberSectors, final int chunkSectors) {
        checkChunk(chunkSectors);
        long headroom = MAX_HEADROOM_SECTORS;
        while ((headroom << 10) > memberSectors && headroom / 2 >= 2L * chunkSectors) {
            headroom >>= 1;
        }
        return headroom;
    }

    /**
     * {@code bblog_offset} (sectors from the superblock) where mdadm 4.2's
     * {@code write_init_super1} puts the 8-sector bad block log on a new v1.2
     * member: just after the bitmap space, which it sizes from the used size
     * {@code sizeSectors} ({@code sb->size}). mdadm only does so if the data starts
     * at least 8 sectors after that, which is true for every data offset above.
     */
    public static int badBlockLogOffset(final long sizeSectors) {
        return (int) (8 + bitmapSpace(sizeSectors));
    }

    private static void checkChunk(final int chunkSectors) {
        if (chunkSectors < 8 || Integer.bitCount(chunkSectors) != 1) {
            throw new IllegalArgumentException(
                    "chunk size " + chunkSectors + " sectors must be a power of two of at least 8 (4 KiB)");
        }
    }
}
