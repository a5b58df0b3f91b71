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
public final class BitmapSuperblock {
    /** {@code BITMAP_MAGIC}: "bitm" little-endian. */
    public static final int MAGIC = 0x6d746962;
    /** Bytes of the superblock; the bits follow it. */
    public static final int BYTES = 256;
    /** {@code BITMAP_MAJOR_LO}..{@code BITMAP_MAJOR_HI}: the versions md reads (3 host-endian, 4 little-endian). */
    public static final int VERSION_LO = 3;
    /** The bitmap superblock version md writes (BITMAP_MAJOR_HI). */
    public static final int VERSION_HI = 4;
    /** {@code BITMAP_MAJOR_CLUSTERED}. */
    public static final int VERSION_CLUSTERED = 5;
    /** {@code BITMAP_STALE} in {@code state} (bit 1): the bits cannot be trusted, md resyncs everything. */
    public static final int STATE_STALE = 1 << 1;
    /** md's {@code COUNTER_MAX}: the largest {@code write_behind} md accepts. */
    public static final int MAX_WRITE_BEHIND = 16383;

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
     * move), as {@code md_bitmap_read_sb} does: magic, a version md reads, a power-of-two chunk of at
     * least 512 bytes (an unsigned 32-bit field), a daemon sleep of at least a second, a write-behind
     * limit md accepts, and the array's UUID. {@code sync_size} is not checked: md writes its own
     * (the array's size per member) over it, and so does raidfive ({@link #syncSize(long)}).
     *
     * @throws SuperblockException for a bitmap md would refuse, or one raidfive cannot keep (clustered)
     */
    public static BitmapSuperblock decode(final ByteBuffer src, final byte[] arrayUuid, final String member)
            throws SuperblockException {
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
        if (s.magic != MAGIC) {
            throw new SuperblockException(
                    member,
                    String.format(
                            "the superblock says it has an internal write-intent bitmap, but the bitmap area holds no bitmap "
                                    + "(magic 0x%08x, not 0x%08x)",
                            s.magic, MAGIC));
        }
        if (s.version == VERSION_CLUSTERED || s.nodes > 1) {
            throw new SuperblockException(
                    member,
                    "its write-intent bitmap is a clustered one (version " + s.version + ", " + s.nodes
                            + " nodes), which raidfive does not implement");
        }
        if (s.version < VERSION_LO || s.version > VERSION_HI) {
            throw new SuperblockException(
                    member,
                    "its write-intent bitmap has version " + s.version + ", which md does not read (" + VERSION_LO
                            + ".." + VERSION_HI + ")");
        }
        if (s.chunkBytes() < 512 || Long.bitCount(s.chunkBytes()) != 1) {
            throw new SuperblockException(
                    member,
                    "its write-intent bitmap's chunksize " + s.chunkBytes()
                            + " is not a power of two of at least 512 bytes, which md requires");
        }
        if (s.daemonSleep == 0) {
            throw new SuperblockException(
                    member,
                    "its write-intent bitmap's daemon_sleep is 0; md requires at least "
                            + "1 second (daemon sleep period out of range)");
        }
        if (Integer.compareUnsigned(s.writeBehind, MAX_WRITE_BEHIND) > 0) {
            throw new SuperblockException(
                    member,
                    "its write-intent bitmap's write_behind " + Integer.toUnsignedString(s.writeBehind)
                            + " exceeds md's limit of " + MAX_WRITE_BEHIND);
        }
        if (!Arrays.equals(s.uuid, arrayUuid)) {
            throw new SuperblockException(
                    member,
                    "its write-intent bitmap belongs to another array (UUID " + MdUuid.format(s.uuid) + ", not "
                            + MdUuid.format(arrayUuid) + ")");
        }
        return s;
    }

    /** md's default {@code daemon_sleep}: seconds between the passes that clear bits. */
    public static final int DEFAULT_DAEMON_SLEEP = 5;
    /** mdadm's {@code DEFAULT_BITMAP_MIN}-style floor for an internal bitmap's chunk: 64 MiB. */
    public static final long DEFAULT_MIN_CHUNK = 64L * 1024 * 1024;

    /**
     * A new internal bitmap's superblock as mdadm's {@code add_internal_bitmap1} fills it: version 4,
     * the array's UUID, {@code chunkBytes} per bit, {@code syncSectors} of member data, md's
     * daemon sleep; events 0 (md sets them when it writes the array's superblocks).
     */
    public static BitmapSuperblock create(final byte[] arrayUuid, final int chunkBytes, final long syncSectors) {
        final BitmapSuperblock s = new BitmapSuperblock();
        s.magic = MAGIC;
        s.version = VERSION_HI;
        System.arraycopy(arrayUuid, 0, s.uuid, 0, 16);
        s.chunksize = chunkBytes;
        s.daemonSleep = DEFAULT_DAEMON_SLEEP;
        s.syncSize = syncSectors;
        return s;
    }

    /**
     * mdadm's chunk for an internal bitmap of {@code syncSectors} of member data in {@code roomSectors}
     * after the superblock ({@code add_internal_bitmap1}): the smallest power of two from 4 KiB whose
     * bits fit the room, and never below 64 MiB unless asked.
     */
    public static long defaultChunk(final long syncSectors, final long roomSectors) {
        final long minChunk = minimumChunk(syncSectors, Math.min(roomSectors, 128 * 2));
        return Math.max(minChunk, DEFAULT_MIN_CHUNK);
    }

    /** The smallest chunk (a power of two from 4 KiB) whose bits fit {@code roomSectors}: mdadm's min_chunk. */
    public static long minimumChunk(final long syncSectors, final long roomSectors) {
        final long maxBits = (roomSectors * 512 - BYTES) * 8;
        long minChunk = 4096;
        long bits = syncSectors * 512 / minChunk + 1;
        while (bits > maxBits) {
            minChunk *= 2;
            bits = (bits + 1) / 2;
        }
        return minChunk;
    }

    /** Bytes mdadm writes for a bitmap of this geometry: superblock and bits, rounded up to {@code boundary}. */
    public long areaBytes(final int boundary) {
        final long bytes = bitBytes() + BYTES;
        return (bytes + boundary - 1) / boundary * boundary;
    }

    /** Writes the 256 bytes of this superblock at {@code dst}'s index {@code at}, little-endian, as md lays them out. */
    public void encode(final ByteBuffer dst, final int at) {
        final ByteBuffer b = dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < BYTES; i += 8) {
            b.putLong(at + i, 0);
        }
        b.putInt(at, magic);
        b.putInt(at + 4, version);
        b.put(at + 8, uuid);
        b.putLong(at + 24, events);
        b.putLong(at + 32, eventsCleared);
        b.putLong(at + 40, syncSize);
        b.putInt(at + 48, state);
        b.putInt(at + 52, chunksize);
        b.putInt(at + 56, daemonSleep);
        b.putInt(at + 60, writeBehind);
        b.putInt(at + 64, sectorsReserved);
        b.putInt(at + 68, nodes);
    }

    /** Sets {@link #events()}; returns this. */
    public BitmapSuperblock events(final long e) {
        events = e;
        return this;
    }

    /** Sets {@link #eventsCleared()}; returns this. */
    public BitmapSuperblock eventsCleared(final long e) {
        eventsCleared = e;
        return this;
    }

    /** The array's UUID (16 bytes), as in the md superblock. */
    public byte[] uuid() {
        return uuid.clone();
    }

    /** md's bitmap magic, {@code 0x6d746962} ("bitm") in a valid bitmap superblock. */
    public int magic() {
        return magic;
    }

    /** Bits in the bitmap: one per chunk of {@code sync_size} sectors. */
    public long bits() {
        return bitsFor(syncSize, chunkBytes());
    }

    /**
     * md's bit count for {@code syncSectors} of member data at {@code chunkBytes} per bit
     * ({@code DIV_ROUND_UP(sectors, chunksize >> 9)}), {@code syncSectors} read as unsigned, without
     * overflow.
     */
    public static long bitsFor(final long syncSectors, final long chunkBytes) {
        final long chunkSectors = chunkBytes / 512;
        return Long.divideUnsigned(syncSectors, chunkSectors)
                + (Long.remainderUnsigned(syncSectors, chunkSectors) != 0 ? 1 : 0);
    }

    /** Bytes of bits after the superblock. */
    public long bitBytes() {
        return (bits() + 7) / 8;
    }

    /** Sectors md writes for this bitmap: its superblock and its bits, rounded up to whole sectors. */
    public long areaSectors() {
        return (BYTES + bitBytes() + 511) / 512;
    }

    /** The bitmap superblock's version (3 or 4). */
    public int version() {
        return version;
    }

    /** The array events at the last bitmap update. */
    public long events() {
        return events;
    }

    /** The array events when bits were last cleared: a member back from before then needs a full rebuild. */
    public long eventsCleared() {
        return eventsCleared;
    }

    /** Sectors of member data the bitmap covers. */
    public long syncSize() {
        return syncSize;
    }

    /**
     * Sets {@link #syncSize()}, as md does when it loads a bitmap ({@code sb->sync_size =
     * resync_max_sectors}): the bits then follow the array's size, never the field as found; returns this.
     */
    public BitmapSuperblock syncSize(final long sectors) {
        syncSize = sectors;
        return this;
    }

    /** Sets {@link #state()}; returns this. */
    public BitmapSuperblock state(final int bits) {
        state = bits;
        return this;
    }

    /** True when {@code BITMAP_STALE} is set: md ignores the bits and resyncs the whole array. */
    public boolean stale() {
        return (state & STATE_STALE) != 0;
    }

    /** md's bitmap state bits (BITMAP_STALE and others). */
    public int state() {
        return state;
    }

    /** Bytes of member data per bit, as stored (a u32 on disk: 2 GiB reads as a negative int; see {@link #chunkBytes()}). */
    public int chunksize() {
        return chunksize;
    }

    /** Bytes of member data per bit, the unsigned value of {@code chunksize}. */
    public long chunkBytes() {
        return Integer.toUnsignedLong(chunksize);
    }

    /** Seconds between the bitmap daemon's passes (md's daemon_sleep). */
    public int daemonSleep() {
        return daemonSleep;
    }

    /** md's write_behind (for write-mostly members; 0 here). */
    public int writeBehind() {
        return writeBehind;
    }

    /** Sectors reserved for the bitmap on each member. */
    public int sectorsReserved() {
        return sectorsReserved;
    }

    /** Cluster nodes (clustered md; 0 for a local array). */
    public int nodes() {
        return nodes;
    }
}
