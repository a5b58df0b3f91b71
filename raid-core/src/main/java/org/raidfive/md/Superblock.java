package org.raidfive.md;

import static org.raidfive.md.SuperblockFormat.SET_NAME_LENGTH;
import static org.raidfive.md.SuperblockFormat.span;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One member's md v1.2 superblock: every field of Linux's
 * {@code struct mdp_superblock_1} ({@code include/uapi/linux/raid/md_p.h}),
 * mutable, with a bit-exact codec.
 *
 * <p>Field names follow md's; sizes are in 512-byte sectors as on disk. Unsigned
 * 64-bit fields ({@code events}, offsets) are held in {@code long} and unsigned
 * 32-bit ones in {@code int}: compare them with {@link Long#compareUnsigned}.
 * {@code magic} and {@code major_version} are constants, and {@code pad0} and
 * {@code pad3} are always zero: they are written as such and checked on read,
 * so they are not stored.
 *
 * <p>{@code dev_roles[]} is indexed by device number (not by role): entry
 * {@code i} is the role of the member whose {@code dev_number} is {@code i}:
 * a slot {@code 0..raid_disks-1}, or {@link #ROLE_SPARE}, {@link #ROLE_FAULTY},
 * {@link #ROLE_JOURNAL}. Setting a role for a device number at or beyond
 * {@code max_dev}, or encoding a superblock whose own {@code dev_number} is, grows
 * {@code max_dev} to that number + 1 and fills new entries with spare, as the
 * kernel's {@code super_1_sync} does.
 *
 * <p>{@link #encode} refuses (with {@link IllegalStateException}) a superblock
 * that {@link #decode} would refuse, so what this engine writes Linux can read.
 */
public final class Superblock {
    /** {@code MD_SB_MAGIC}. */
    public static final int MD_SB_MAGIC = 0xa92b4efc;
    /** The only major version: 1. */
    public static final int MAJOR_VERSION_1 = 1;
    /** Byte offset of a v1.2 superblock from the start of the member. */
    public static final int SUPERBLOCK_OFFSET = 4096;
    /** The same, in sectors: the value of {@code super_offset} in every v1.2 superblock. */
    public static final long SUPERBLOCK_OFFSET_SECTORS = SUPERBLOCK_OFFSET / 512;
    /** Bytes of the fixed part; {@code dev_roles[max_dev]} follows. */
    public static final int HEADER_BYTES = SuperblockFormat.HEADER_LENGTH;
    /** Bytes the kernel reads for a superblock; the whole superblock must fit. */
    public static final int MAX_SUPERBLOCK_BYTES = 4096;
    /** Largest {@code max_dev} the kernel accepts ({@code (4096 - 256) / 2}); also its device limit. */
    public static final int MAX_DEV_LIMIT = (MAX_SUPERBLOCK_BYTES - HEADER_BYTES) / 2;
    /** Sector size of every md size and offset. */
    public static final int SECTOR_BYTES = 512;

    /** {@code level} of a raid5 array. */
    public static final int LEVEL_RAID5 = 5;

    /** {@code dev_roles[]} value: spare (also unused device numbers). */
    public static final int ROLE_SPARE = 0xffff;
    /** {@code dev_roles[]} value: failed member. */
    public static final int ROLE_FAULTY = 0xfffe;
    /** {@code dev_roles[]} value: write journal. */
    public static final int ROLE_JOURNAL = 0xfffd;
    /** Roles below this are slots in the array ({@code MD_DISK_ROLE_MAX}). */
    public static final int ROLE_MAX = 0xff00;

    /** {@code resync_offset} of a clean array: all ones ({@code MaxSector}). */
    public static final long RESYNC_CLEAN = -1L;

    /** {@code devflags} bit: write-mostly member. */
    public static final int DEVFLAG_WRITE_MOSTLY = 1;
    /** {@code devflags} bit: fail-fast member. */
    public static final int DEVFLAG_FAILFAST = 2;

    /** {@code bitmap_offset} is meaningful: an internal write-intent bitmap. */
    public static final int MD_FEATURE_BITMAP_OFFSET = 1;
    /** {@code recovery_offset} is present and must be honoured. */
    public static final int MD_FEATURE_RECOVERY_OFFSET = 2;
    /** A reshape is in progress: the {@code new_*} fields and {@code reshape_position} are meaningful. */
    public static final int MD_FEATURE_RESHAPE_ACTIVE = 4;
    /** The bad block log is not empty. */
    public static final int MD_FEATURE_BAD_BLOCKS = 8;
    /** This device is replacing an active device with the same role. */
    public static final int MD_FEATURE_REPLACEMENT = 16;
    /** Reshape keeps the device count but runs backwards. */
    public static final int MD_FEATURE_RESHAPE_BACKWARDS = 32;
    /** {@code new_offset} must be honoured. */
    public static final int MD_FEATURE_NEW_OFFSET = 64;
    /** Recovery in progress is guided by the bitmap. */
    public static final int MD_FEATURE_RECOVERY_BITMAP = 128;
    /** Clustered md. */
    public static final int MD_FEATURE_CLUSTERED = 256;
    /** The array has a write journal. */
    public static final int MD_FEATURE_JOURNAL = 512;
    /** Partial parity log; {@code bitmap_offset} holds the PPL offset and size. */
    public static final int MD_FEATURE_PPL = 1024;
    /** Multiple partial parity logs. */
    public static final int MD_FEATURE_MULTIPLE_PPLS = 2048;
    /** {@code layout} is meaningful for raid0. */
    public static final int MD_FEATURE_RAID0_LAYOUT = 4096;
    /** Every feature bit Linux defines ({@code MD_FEATURE_ALL}). */
    public static final int MD_FEATURE_ALL = 0x1fff;

    /** {@code max_dev} mdadm writes for a new array of up to 128 devices (see {@link #mdadmMaxDev}). */
    public static final int DEFAULT_MAX_DEV = 128;

    // package-private: SuperblockCodec reads and writes them raw
    int featureMap;
    final byte[] setUuid = new byte[MdUuid.LENGTH];
    final byte[] setName = new byte[SET_NAME_LENGTH];
    long ctime;
    int level = LEVEL_RAID5;
    int layout = MdLayout.DEFAULT.number();
    long size;
    int chunkSectors;
    int raidDisks;
    int bitmapOffset;
    int newLevel;
    long reshapePosition;
    int deltaDisks;
    int newLayout;
    int newChunk;
    int newOffset;
    long dataOffset;
    long dataSize;
    long superOffset = SUPERBLOCK_OFFSET_SECTORS;
    long recoveryOffset;
    int devNumber;
    int cntCorrectedRead;
    final byte[] deviceUuid = new byte[MdUuid.LENGTH];
    int devflags;
    int bblogShift;
    int bblogSize;
    int bblogOffset;
    long utime;
    long events;
    long resyncOffset;
    int sbCsum;
    int[] devRoles;

    /**
     * An empty raid5 superblock: level 5, layout left-symmetric, {@code super_offset} 8,
     * {@code max_dev} 128 with every role spare; everything else zero. Geometry
     * (chunk, raid_disks, sizes, offsets) must be set before it can be encoded.
     */
    public Superblock() {
        devRoles = new int[DEFAULT_MAX_DEV];
        Arrays.fill(devRoles, ROLE_SPARE);
    }

    /** A deep copy. */
    public Superblock copy() {
        final Superblock c = new Superblock();
        c.featureMap = featureMap;
        System.arraycopy(setUuid, 0, c.setUuid, 0, setUuid.length);
        System.arraycopy(setName, 0, c.setName, 0, setName.length);
        c.ctime = ctime;
        c.level = level;
        c.layout = layout;
        c.size = size;
        c.chunkSectors = chunkSectors;
        c.raidDisks = raidDisks;
        c.bitmapOffset = bitmapOffset;
        c.newLevel = newLevel;
        c.reshapePosition = reshapePosition;
        c.deltaDisks = deltaDisks;
        c.newLayout = newLayout;
        c.newChunk = newChunk;
        c.newOffset = newOffset;
        c.dataOffset = dataOffset;
        c.dataSize = dataSize;
        c.superOffset = superOffset;
        c.recoveryOffset = recoveryOffset;
        c.devNumber = devNumber;
        c.cntCorrectedRead = cntCorrectedRead;
        System.arraycopy(deviceUuid, 0, c.deviceUuid, 0, deviceUuid.length);
        c.devflags = devflags;
        c.bblogShift = bblogShift;
        c.bblogSize = bblogSize;
        c.bblogOffset = bblogOffset;
        c.utime = utime;
        c.events = events;
        c.resyncOffset = resyncOffset;
        c.sbCsum = sbCsum;
        c.devRoles = devRoles.clone();
        return c;
    }

    // ------------------------------------------------------------------ codec

    /**
     * Writes the on-disk bytes, exactly {@link #encodedLength()} of them, at
     * {@code dst}'s position (advancing it), computing {@code sb_csum}. The
     * buffer's byte order does not matter. A member's superblock lives at
     * {@link #SUPERBLOCK_OFFSET}; the rest of that 4 KiB block is not part of it
     * (write it as zeros).
     *
     * <p>Like {@code super_1_sync}, first grows {@code max_dev} to cover this
     * device's {@code dev_number}.
     *
     * @throws IllegalStateException if {@link #decode} would refuse the result, naming the problem.
     * @throws IllegalArgumentException if {@code dst} has too little room.
     */
    public void encode(final ByteBuffer dst) {
        SuperblockCodec.encode(this, dst);
    }

    /** {@code decode(src, memberName, SUPERBLOCK_OFFSET_SECTORS)}: the bytes were read at 4 KiB. */
    public static Superblock decode(final ByteBuffer src, final String memberName) throws SuperblockException {
        return SuperblockCodec.decode(src, memberName, SUPERBLOCK_OFFSET_SECTORS);
    }

    /**
     * Reads and validates a superblock starting at {@code src}'s position; on
     * success advances the position past it ({@code 256 + 2 * max_dev} bytes).
     * Bytes after that span are not looked at. The buffer's byte order does not matter.
     *
     * @param memberName names the member in every error message.
     * @param readAtSector where the bytes came from; {@code super_offset} must say the same.
     * @throws SuperblockException not an md member, or a superblock this engine does not support.
     * @throws CorruptSuperblockException bad checksum, non-zero reserved bytes, or contradictory fields.
     */
    public static Superblock decode(final ByteBuffer src, final String memberName, final long readAtSector)
            throws SuperblockException {
        return SuperblockCodec.decode(src, memberName, readAtSector);
    }

    /**
     * md's checksum of the superblock starting at {@code sb}'s position, over
     * {@code 256 + 2 * max_dev} bytes ({@code max_dev} read from the buffer), with the
     * stored {@code sb_csum} taken as zero. Does not move the position.
     *
     * @throws IllegalArgumentException if the buffer is shorter than that span or max_dev is out of range.
     */
    public static int checksum(final ByteBuffer sb) {
        return SuperblockCodec.checksum(sb);
    }

    /** Bytes {@link #encode} writes: {@code 256 + 2 * max_dev} (after growing max_dev to cover dev_number). */
    public int encodedLength() {
        final int maxDev = Integer.compareUnsigned(devNumber, MAX_DEV_LIMIT) < 0
                ? Math.max(devRoles.length, devNumber + 1)
                : devRoles.length;
        return span(maxDev);
    }

    /**
     * The {@code max_dev} mdadm's {@code init_super1} chooses for a new array of
     * {@code devices} members (raid disks + spares): room for that many roles,
     * rounded up so that the superblock fills whole 512-byte sectors. 128 for up
     * to 128 devices, then 384, 640, ...
     */
    public static int mdadmMaxDev(final int devices) {
        if (devices < 0 || devices > MAX_DEV_LIMIT) {
            throw new IllegalArgumentException("devices " + devices + " out of range (0.." + MAX_DEV_LIMIT + ")");
        }
        final int bytes = HEADER_BYTES + 2 * devices;
        final int rounded = (bytes + SECTOR_BYTES - 1) / SECTOR_BYTES * SECTOR_BYTES;
        return (rounded - HEADER_BYTES) / 2;
    }

    // ------------------------------------------------------------------ fields

    /** md's superblock magic, {@code 0xa92b4efc} in a valid v1.x superblock. */
    public int magic() {
        return MD_SB_MAGIC;
    }

    /** The superblock's major version: 1 for the v1.x formats. */
    public int majorVersion() {
        return MAJOR_VERSION_1;
    }

    /** md's feature_map: the MD_FEATURE_* bits of this superblock (bitmap offset, recovery offset, reshape, bad block log, PPL and others). */
    public int featureMap() {
        return featureMap;
    }

    /** Sets {@link #featureMap()}; returns this. */
    public Superblock featureMap(final int featureMap) {
        this.featureMap = featureMap;
        return this;
    }

    /** True if every bit of {@code feature} is set. */
    public boolean hasFeature(final int feature) {
        return (featureMap & feature) == feature;
    }

    /** Sets ({@code on}) or clears one MD_FEATURE_* bit of {@link #featureMap()}; returns this. */
    public Superblock setFeature(final int feature, final boolean on) {
        featureMap = on ? featureMap | feature : featureMap & ~feature;
        return this;
    }

    /** A copy of the array UUID ({@code set_uuid}). */
    public byte[] setUuid() {
        return setUuid.clone();
    }

    /** Sets {@link #setUuid()}; returns this. */
    public Superblock setUuid(final byte[] uuid) {
        MdUuid.checkLength(uuid);
        System.arraycopy(uuid, 0, setUuid, 0, MdUuid.LENGTH);
        return this;
    }

    /** The array name ({@code set_name}) up to its first NUL, e.g. {@code "host:name"}. */
    public String name() {
        int end = 0;
        while (end < SET_NAME_LENGTH && setName[end] != 0) {
            end++;
        }
        return new String(setName, 0, end, StandardCharsets.UTF_8);
    }

    /**
     * Sets {@code set_name}, NUL-padded. mdadm writes {@code "homehost:name"}; at most
     * 32 bytes of UTF-8 (mdadm itself keeps it to 31 so it stays NUL-terminated).
     */
    public Superblock name(final String name) {
        final byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > SET_NAME_LENGTH) {
            throw new IllegalArgumentException(
                    "array name '" + name + "' is " + bytes.length + " bytes, md allows " + SET_NAME_LENGTH);
        }
        if (name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("array name must not contain NUL");
        }
        Arrays.fill(setName, (byte) 0);
        System.arraycopy(bytes, 0, setName, 0, bytes.length);
        return this;
    }

    /** A copy of the raw 32 bytes of {@code set_name}. */
    public byte[] nameBytes() {
        return setName.clone();
    }

    /** Sets the raw 32 bytes of {@code set_name} (bytes after a NUL are kept, bit for bit). */
    public Superblock nameBytes(final byte[] bytes) {
        if (bytes.length != SET_NAME_LENGTH) {
            throw new IllegalArgumentException("set_name is 32 bytes, got " + bytes.length);
        }
        System.arraycopy(bytes, 0, setName, 0, SET_NAME_LENGTH);
        return this;
    }

    /** Creation time, md-encoded (see {@link MdTime}). */
    public long ctime() {
        return ctime;
    }

    /** Sets {@link #ctime()}; returns this. */
    public Superblock ctime(final long mdTime) {
        this.ctime = mdTime;
        return this;
    }

    /** The RAID level (5 for arrays raidfive runs). */
    public int level() {
        return level;
    }

    /** Sets {@link #level()}; returns this. */
    public Superblock level(final int level) {
        this.level = level;
        return this;
    }

    /** The raw {@code layout} number; {@link MdLayout#ofNumber} names it. */
    public int layout() {
        return layout;
    }

    /** Sets {@link #layout()}; returns this. */
    public Superblock layout(final int layout) {
        this.layout = layout;
        return this;
    }

    /** Sets {@link #layout()} from an md layout; returns this. */
    public Superblock layout(final MdLayout layout) {
        this.layout = layout.number();
        return this;
    }

    /** Sectors of each member used by the array ({@code size}). */
    public long size() {
        return size;
    }

    /** Sets {@link #size()}; returns this. */
    public Superblock size(final long sectors) {
        this.size = sectors;
        return this;
    }

    /** Chunk size in sectors ({@code chunksize}). */
    public int chunkSectors() {
        return chunkSectors;
    }

    /** Sets {@link #chunkSectors()}; returns this. */
    public Superblock chunkSectors(final int sectors) {
        this.chunkSectors = sectors;
        return this;
    }

    /** The number of member slots (raid_disks). */
    public int raidDisks() {
        return raidDisks;
    }

    /** Sets {@link #raidDisks()}; returns this. */
    public Superblock raidDisks(final int raidDisks) {
        this.raidDisks = raidDisks;
        return this;
    }

    /** Signed sectors from the superblock to the bitmap (with {@link #MD_FEATURE_BITMAP_OFFSET}). */
    public int bitmapOffset() {
        return bitmapOffset;
    }

    /** Sets {@link #bitmapOffset()}; returns this. */
    public Superblock bitmapOffset(final int sectors) {
        this.bitmapOffset = sectors;
        return this;
    }

    /** With {@link #MD_FEATURE_PPL}: signed sectors from the superblock to the PPL (low half of bitmap_offset). */
    public int pplOffset() {
        return (short) bitmapOffset;
    }

    /** With {@link #MD_FEATURE_PPL}: PPL size in sectors (high half of bitmap_offset). */
    public int pplSize() {
        return bitmapOffset >>> 16;
    }

    /** Sets md's {@code ppl} union (it shares bitmap_offset's four bytes): le16 offset, le16 size. */
    public Superblock ppl(final int offsetSectors, final int sizeSectors) {
        if (offsetSectors < Short.MIN_VALUE
                || offsetSectors > Short.MAX_VALUE
                || sizeSectors < 0
                || sizeSectors > 0xffff) {
            throw new IllegalArgumentException("PPL offset " + offsetSectors + " or size " + sizeSectors
                    + " sectors does not fit md's 16-bit fields");
        }
        this.bitmapOffset = (sizeSectors << 16) | (offsetSectors & 0xffff);
        return this;
    }

    /** The level a reshape in progress converts to (new_level); equal to level otherwise. */
    public int newLevel() {
        return newLevel;
    }

    /** Sets {@link #newLevel()}; returns this. */
    public Superblock newLevel(final int newLevel) {
        this.newLevel = newLevel;
        return this;
    }

    /** How far a reshape in progress has got, in array sectors (reshape_position). */
    public long reshapePosition() {
        return reshapePosition;
    }

    /** Sets {@link #reshapePosition()}; returns this. */
    public Superblock reshapePosition(final long reshapePosition) {
        this.reshapePosition = reshapePosition;
        return this;
    }

    /** The change in member slots of a reshape in progress (delta_disks). */
    public int deltaDisks() {
        return deltaDisks;
    }

    /** Sets {@link #deltaDisks()}; returns this. */
    public Superblock deltaDisks(final int deltaDisks) {
        this.deltaDisks = deltaDisks;
        return this;
    }

    /** The layout a reshape in progress converts to (new_layout). */
    public int newLayout() {
        return newLayout;
    }

    /** Sets {@link #newLayout()}; returns this. */
    public Superblock newLayout(final int newLayout) {
        this.newLayout = newLayout;
        return this;
    }

    /** New chunk size in sectors. */
    public int newChunk() {
        return newChunk;
    }

    /** Sets {@link #newChunk()}; returns this. */
    public Superblock newChunk(final int sectors) {
        this.newChunk = sectors;
        return this;
    }

    /** Signed sectors to add to data_offset in the new layout (with {@link #MD_FEATURE_NEW_OFFSET}). */
    public int newOffset() {
        return newOffset;
    }

    /** Sets {@link #newOffset()}; returns this. */
    public Superblock newOffset(final int sectors) {
        this.newOffset = sectors;
        return this;
    }

    /** First sector of data on this member. */
    public long dataOffset() {
        return dataOffset;
    }

    /** Sets {@link #dataOffset()}; returns this. */
    public Superblock dataOffset(final long sectors) {
        this.dataOffset = sectors;
        return this;
    }

    /** Sectors of this member available for data, from data_offset. */
    public long dataSize() {
        return dataSize;
    }

    /** Sets {@link #dataSize()}; returns this. */
    public Superblock dataSize(final long sectors) {
        this.dataSize = sectors;
        return this;
    }

    /** Sector of this superblock on the member: 8 for v1.2. */
    public long superOffset() {
        return superOffset;
    }

    /** Sets {@link #superOffset()}; returns this. */
    public Superblock superOffset(final long sectors) {
        this.superOffset = sectors;
        return this;
    }

    /** Sectors (from data_offset) already rebuilt, with {@link #MD_FEATURE_RECOVERY_OFFSET}; journal_tail on a journal. */
    public long recoveryOffset() {
        return recoveryOffset;
    }

    /** Sets {@link #recoveryOffset()}; returns this. */
    public Superblock recoveryOffset(final long sectors) {
        this.recoveryOffset = sectors;
        return this;
    }

    /** Permanent identifier of this device in the array; indexes dev_roles. Not its role. */
    public int devNumber() {
        return devNumber;
    }

    /** Sets dev_number; grows max_dev to cover it, as super_1_sync does. */
    public Superblock devNumber(final int devNumber) {
        checkDevNumber(devNumber);
        this.devNumber = devNumber;
        if (devNumber >= devRoles.length) {
            maxDev(devNumber + 1);
        }
        return this;
    }

    /** md's cnt_corrected_read: sectors whose read error was corrected by rewriting them. */
    public int cntCorrectedRead() {
        return cntCorrectedRead;
    }

    /** Sets {@link #cntCorrectedRead()}; returns this. */
    public Superblock cntCorrectedRead(final int count) {
        this.cntCorrectedRead = count;
        return this;
    }

    /** A copy of this device's UUID ({@code device_uuid}). */
    public byte[] deviceUuid() {
        return deviceUuid.clone();
    }

    /** Sets {@link #deviceUuid()}; returns this. */
    public Superblock deviceUuid(final byte[] uuid) {
        MdUuid.checkLength(uuid);
        System.arraycopy(uuid, 0, deviceUuid, 0, MdUuid.LENGTH);
        return this;
    }

    /** Per-device flags ({@link #DEVFLAG_WRITE_MOSTLY}, {@link #DEVFLAG_FAILFAST}); a u8. */
    public int devflags() {
        return devflags;
    }

    /** Sets {@link #devflags()}; returns this. */
    public Superblock devflags(final int flags) {
        this.devflags = checkUnsigned(flags, 0xff, "devflags");
        return this;
    }

    /** Shift from sectors to bad-block-log block size; a u8. */
    public int bblogShift() {
        return bblogShift;
    }

    /** Sets {@link #bblogShift()}; returns this. */
    public Superblock bblogShift(final int shift) {
        this.bblogShift = checkUnsigned(shift, 0xff, "bblog_shift");
        return this;
    }

    /** Sectors reserved for the bad block log; a u16. */
    public int bblogSize() {
        return bblogSize;
    }

    /** Sets {@link #bblogSize()}; returns this. */
    public Superblock bblogSize(final int sectors) {
        this.bblogSize = checkUnsigned(sectors, 0xffff, "bblog_size");
        return this;
    }

    /** Signed sectors from the superblock to the bad block log. */
    public int bblogOffset() {
        return bblogOffset;
    }

    /** Sets {@link #bblogOffset()}; returns this. */
    public Superblock bblogOffset(final int sectors) {
        this.bblogOffset = sectors;
        return this;
    }

    /** Last update time, md-encoded (see {@link MdTime}). */
    public long utime() {
        return utime;
    }

    /** Sets {@link #utime()}; returns this. */
    public Superblock utime(final long mdTime) {
        this.utime = mdTime;
        return this;
    }

    /** Update counter (unsigned 64-bit). */
    public long events() {
        return events;
    }

    /** Sets {@link #events()}; returns this. */
    public Superblock events(final long events) {
        this.events = events;
        return this;
    }

    /** Sectors (from data_offset) known in sync; {@link #RESYNC_CLEAN} when the array is clean. */
    public long resyncOffset() {
        return resyncOffset;
    }

    /** Sets {@link #resyncOffset()}; returns this. */
    public Superblock resyncOffset(final long sectors) {
        this.resyncOffset = sectors;
        return this;
    }

    /** True if {@code resync_offset} is all ones, which mdadm prints as "State : clean". */
    public boolean isClean() {
        return resyncOffset == RESYNC_CLEAN;
    }

    /** The checksum last written by {@link #encode} or read by {@link #decode}; 0 before either. */
    public int sbCsum() {
        return sbCsum;
    }

    /** Number of dev_roles entries. */
    public int maxDev() {
        return devRoles.length;
    }

    /**
     * Sets {@code max_dev}: entries past the new end are dropped, new ones are spare.
     * (Encoding still grows it to cover this device's dev_number.)
     */
    public Superblock maxDev(final int maxDev) {
        if (maxDev < 0 || maxDev > MAX_DEV_LIMIT) {
            throw new IllegalArgumentException("max_dev " + maxDev + " out of range (0.." + MAX_DEV_LIMIT + ")");
        }
        final int old = devRoles.length;
        devRoles = Arrays.copyOf(devRoles, maxDev);
        if (maxDev > old) {
            Arrays.fill(devRoles, old, maxDev, ROLE_SPARE);
        }
        return this;
    }

    /** Role of device number {@code devNumber}; spare beyond max_dev (mdadm's {@code role_from_sb}). */
    public int devRole(final int devNumber) {
        return devNumber >= 0 && devNumber < devRoles.length ? devRoles[devNumber] : ROLE_SPARE;
    }

    /** Sets the role of device number {@code devNumber}, growing max_dev to cover it. */
    public Superblock devRole(final int devNumber, final int role) {
        checkDevNumber(devNumber);
        checkUnsigned(role, 0xffff, "role");
        if (devNumber >= devRoles.length) {
            maxDev(devNumber + 1);
        }
        devRoles[devNumber] = role;
        return this;
    }

    /** A copy of dev_roles[0..max_dev). */
    public int[] devRoles() {
        return devRoles.clone();
    }

    /** This device's own role: {@code devRole(devNumber())}. */
    public int role() {
        return devRole(devNumber);
    }

    /** This device's role as a word: {@code "active 2"}, {@code "spare"}, {@code "faulty"}, {@code "journal"}. */
    public static String describeRole(final int role) {
        switch (role) {
            case ROLE_SPARE:
                return "spare";
            case ROLE_FAULTY:
                return "faulty";
            case ROLE_JOURNAL:
                return "journal";
            default:
                return role < ROLE_MAX ? "active " + role : String.format("invalid 0x%04x", role);
        }
    }

    private static void checkDevNumber(final int devNumber) {
        if (devNumber < 0 || devNumber >= MAX_DEV_LIMIT) {
            throw new IllegalArgumentException(
                    "dev_number " + devNumber + " out of range (0.." + (MAX_DEV_LIMIT - 1) + ")");
        }
    }

    private static int checkUnsigned(final int value, final int max, final String field) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(field + " " + value + " out of range (0.." + max + ")");
        }
        return value;
    }

    // ------------------------------------------------------------------ value

    @Override
    public boolean equals(final Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof Superblock)) {
            return false;
        }
        final Superblock o = (Superblock) other;
        return featureMap == o.featureMap
                && Arrays.equals(setUuid, o.setUuid)
                && Arrays.equals(setName, o.setName)
                && ctime == o.ctime
                && level == o.level
                && layout == o.layout
                && size == o.size
                && chunkSectors == o.chunkSectors
                && raidDisks == o.raidDisks
                && bitmapOffset == o.bitmapOffset
                && newLevel == o.newLevel
                && reshapePosition == o.reshapePosition
                && deltaDisks == o.deltaDisks
                && newLayout == o.newLayout
                && newChunk == o.newChunk
                && newOffset == o.newOffset
                && dataOffset == o.dataOffset
                && dataSize == o.dataSize
                && superOffset == o.superOffset
                && recoveryOffset == o.recoveryOffset
                && devNumber == o.devNumber
                && cntCorrectedRead == o.cntCorrectedRead
                && Arrays.equals(deviceUuid, o.deviceUuid)
                && devflags == o.devflags
                && bblogShift == o.bblogShift
                && bblogSize == o.bblogSize
                && bblogOffset == o.bblogOffset
                && utime == o.utime
                && events == o.events
                && resyncOffset == o.resyncOffset
                && Arrays.equals(devRoles, o.devRoles);
    }

    /** Not part of equality: {@code sb_csum}, which follows from the other fields. */
    @Override
    public int hashCode() {
        int h = Objects.hash(
                featureMap,
                ctime,
                level,
                layout,
                size,
                chunkSectors,
                raidDisks,
                dataOffset,
                dataSize,
                devNumber,
                events,
                resyncOffset,
                utime,
                recoveryOffset);
        h = 31 * h + Arrays.hashCode(setUuid);
        h = 31 * h + Arrays.hashCode(deviceUuid);
        return 31 * h + Arrays.hashCode(devRoles);
    }

    /** Every field, by its md name, in on-disk order. */
    @Override
    public String toString() {
        return SuperblockText.describe(this);
    }
}
