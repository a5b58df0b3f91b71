package org.raidfive.md;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * md's write-intent bitmap superblock ({@code bitmap_super_t}, Linux {@code md-bitmap.h}): the
 * first 256 bytes of an internal bitmap, which lives {@code bitmap_offset} sectors from the member's
 * superblock (feature {@code MD_FEATURE_BITMAP_OFFSET}); one bit per {@code chunksize} bytes of each
 * member's data follows it, little-endian bit order.
 *
 * <pre>
 *   0 magic  4 version  8 uuid[16]  24 events  32 events_cleared  40 sync_size (sectors)
 *  48 state 52 chunksize (bytes)  56 daemon_sleep (s)  60 write_behind  64 sectors_reserved
 *  68 nodes 72 cluster_name[64]   136..255 zero
 * </pre>
 */
public final class BitmapSuperblock
{
    /** {@code BITMAP_MAGIC}: "bitm" little-endian. */
    public static final int MAGIC = 0x6d746962;
    /** Bytes of the superblock; the bits follow it. */
    public static final int BYTES = 256;
    /** {@code BITMAP_MAJOR_LO}..{@code BITMAP_MAJOR_HI}: the versions md reads (3 host-endian, 4 little-endian). */
    public static final int VERSION_LO = 3;
    public static final int VERSION_HI = 4;
    /** {@code BITMAP_MAJOR_CLUSTERED}. */
    public static final int VERSION_CLUSTERED = 5;

    private int magic;
    private int version;
    private final byte[] uuid = new byte[16];
    private long events;
    private long eventsCleared;
    private long syncSize;
    private int state;
    private int chunksize;
    private int daemonSleep;
    private int writeBehind;
    private int sectorsReserved;
    private int nodes;

    /**
     * Reads and checks a bitmap superblock at {@code src}'s position (256 bytes; the buffer does not
     * move), as {@code md_bitmap_read_sb} does: magic, a version md reads, a power-of-two chunk, and
     * the array's UUID.
     *
     * @throws SuperblockException for a bitmap md would refuse, or one raidfive cannot keep (clustered)
     */
    public static BitmapSuperblock decode(final ByteBuffer src, final byte[] arrayUuid, final String member)
        throws SuperblockException
    {
        final ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        final int at = b.position();
        final BitmapSuperblock s = new BitmapSuperblock();
        s.magic = b.getInt(at);
        s.version = b.getInt(at + 4);
        b.get(at + 8, s.uuid);
        s.events = b.getLong(at + 24);
        s.eventsCleared = b.getLong(at + 32);
        s.syncSize = b.getLong(at + 40);
        s.state = b.getInt(at + 48);
        s.chunksize = b.getInt(at + 52);
        s.daemonSleep = b.getInt(at + 56);
        s.writeBehind = b.getInt(at + 60);
        s.sectorsReserved = b.getInt(at + 64);
        s.nodes = b.getInt(at + 68);
        if (s.magic != MAGIC)
        {
            throw new SuperblockException(member, String.format(
                "the superblock says it has an internal write-intent bitmap, but the bitmap area holds no bitmap "
                    + "(magic 0x%08x, not 0x%08x)", s.magic, MAGIC));
        }
        if (s.version == VERSION_CLUSTERED || s.nodes > 1)
        {
            throw new SuperblockException(member, "its write-intent bitmap is a clustered one (version " + s.version
                + ", " + s.nodes + " nodes), which raidfive does not implement");
        }
        if (s.version < VERSION_LO || s.version > VERSION_HI)
        {
            throw new SuperblockException(member, "its write-intent bitmap has version " + s.version
                + ", which md does not read (" + VERSION_LO + ".." + VERSION_HI + ")");
        }
        if (s.chunksize < 512 || Integer.bitCount(s.chunksize) != 1)
        {
            throw new SuperblockException(member, "its write-intent bitmap chunk size " + s.chunksize
                + " is not a power of two of at least 512 bytes");
        }
        if (!Arrays.equals(s.uuid, arrayUuid))
        {
            throw new SuperblockException(member, "its write-intent bitmap belongs to another array (UUID "
                + MdUuid.format(s.uuid) + ", not " + MdUuid.format(arrayUuid) + ")");
        }
        return s;
    }

    /** Bits in the bitmap: one per chunk of {@code sync_size} sectors. */
    public long bits()
    {
        final long chunkSectors = chunksize / 512;
        return (syncSize + chunkSectors - 1) / chunkSectors;
    }

    /** Bytes of bits after the superblock. */
    public long bitBytes()
    {
        return (bits() + 7) / 8;
    }

    public int version()
    {
        return version;
    }

    public long events()
    {
        return events;
    }

    public long eventsCleared()
    {
        return eventsCleared;
    }

    /** Sectors of member data the bitmap covers. */
    public long syncSize()
    {
        return syncSize;
    }

    public int state()
    {
        return state;
    }

    /** Bytes of member data per bit. */
    public int chunksize()
    {
        return chunksize;
    }

    public int daemonSleep()
    {
        return daemonSleep;
    }

    public int writeBehind()
    {
        return writeBehind;
    }

    public int sectorsReserved()
    {
        return sectorsReserved;
    }

    public int nodes()
    {
        return nodes;
    }
}
