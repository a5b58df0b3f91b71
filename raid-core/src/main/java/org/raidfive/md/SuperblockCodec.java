package org.raidfive.md;

import static org.raidfive.md.Superblock.*;
import static org.raidfive.md.SuperblockFormat.*;

import java.nio.ByteBuffer;

/**
 * Bytes to {@link Superblock} and back ({@link Superblock#encode}, {@link Superblock#decode}).
 * Decode checks in the kernel's order what needs the raw bytes (magic, version,
 * max_dev, length, checksum, padding), then hands the fields to
 * {@link SuperblockValidator}; encode runs the same validator first.
 */
final class SuperblockCodec {
    private static final byte[] ZERO_PAD3 = new byte[PAD3_LENGTH];

    private SuperblockCodec() {}

    static void encode(final Superblock sb, final ByteBuffer dst) {
        if (Integer.compareUnsigned(sb.devNumber, MAX_DEV_LIMIT) < 0 && sb.devNumber >= sb.devRoles.length) {
            sb.maxDev(sb.devNumber + 1); // super_1_sync: max_dev covers every desc_nr
        }
        try {
            SuperblockValidator.check(sb, SUPERBLOCK_OFFSET_SECTORS, "superblock");
        } catch (final SuperblockException ex) {
            throw new IllegalStateException("refusing to encode an invalid superblock: " + ex.problem(), ex);
        }
        final int length = span(sb.devRoles.length);
        if (dst.remaining() < length) {
            throw new IllegalArgumentException("superblock needs " + length + " bytes, buffer has " + dst.remaining());
        }
        final ByteBuffer b = littleEndian(dst);
        final int o = dst.position();
        b.putInt(o + MAGIC, MD_SB_MAGIC);
        b.putInt(o + MAJOR_VERSION, MAJOR_VERSION_1);
        b.putInt(o + FEATURE_MAP, sb.featureMap);
        b.putInt(o + PAD0, 0);
        b.put(o + SET_UUID, sb.setUuid);
        b.put(o + SET_NAME, sb.setName);
        b.putLong(o + CTIME, sb.ctime);
        b.putInt(o + LEVEL, sb.level);
        b.putInt(o + LAYOUT, sb.layout);
        b.putLong(o + SIZE, sb.size);
        b.putInt(o + CHUNKSIZE, sb.chunkSectors);
        b.putInt(o + RAID_DISKS, sb.raidDisks);
        b.putInt(o + BITMAP_OFFSET, sb.bitmapOffset);
        b.putInt(o + NEW_LEVEL, sb.newLevel);
        b.putLong(o + RESHAPE_POSITION, sb.reshapePosition);
        b.putInt(o + DELTA_DISKS, sb.deltaDisks);
        b.putInt(o + NEW_LAYOUT, sb.newLayout);
        b.putInt(o + NEW_CHUNK, sb.newChunk);
        b.putInt(o + NEW_OFFSET, sb.newOffset);
        b.putLong(o + DATA_OFFSET, sb.dataOffset);
        b.putLong(o + DATA_SIZE, sb.dataSize);
        b.putLong(o + SUPER_OFFSET, sb.superOffset);
        b.putLong(o + RECOVERY_OFFSET, sb.recoveryOffset);
        b.putInt(o + DEV_NUMBER, sb.devNumber);
        b.putInt(o + CNT_CORRECTED_READ, sb.cntCorrectedRead);
        b.put(o + DEVICE_UUID, sb.deviceUuid);
        b.put(o + DEVFLAGS, (byte) sb.devflags);
        b.put(o + BBLOG_SHIFT, (byte) sb.bblogShift);
        b.putShort(o + BBLOG_SIZE, (short) sb.bblogSize);
        b.putInt(o + BBLOG_OFFSET, sb.bblogOffset);
        b.putLong(o + UTIME, sb.utime);
        b.putLong(o + EVENTS, sb.events);
        b.putLong(o + RESYNC_OFFSET, sb.resyncOffset);
        b.putInt(o + SB_CSUM, 0);
        b.putInt(o + MAX_DEV, sb.devRoles.length);
        b.put(o + PAD3, ZERO_PAD3);
        for (int i = 0; i < sb.devRoles.length; i++) {
            b.putShort(o + DEV_ROLES + 2 * i, (short) sb.devRoles[i]);
        }
        sb.sbCsum = SuperblockFormat.checksum(b, o, sb.devRoles.length);
        b.putInt(o + SB_CSUM, sb.sbCsum);
        dst.position(o + length);
    }

    static Superblock decode(final ByteBuffer src, final String memberName, final long readAtSector)
            throws SuperblockException {
        final ByteBuffer b = littleEndian(src);
        final int o = src.position();
        final int available = src.remaining();
        if (available < HEADER_BYTES) {
            throw new SuperblockException(
                    memberName,
                    "not an md member: only " + available + " bytes where a superblock needs at least " + HEADER_BYTES);
        }
        final int magic = b.getInt(o + MAGIC);
        if (magic != MD_SB_MAGIC) {
            throw new SuperblockException(
                    memberName, String.format("not an md member (magic 0x%08x, expected 0x%08x)", magic, MD_SB_MAGIC));
        }
        final int major = b.getInt(o + MAJOR_VERSION);
        if (major != MAJOR_VERSION_1) {
            throw new SuperblockException(
                    memberName,
                    "unsupported superblock major version " + Integer.toUnsignedString(major)
                            + " (only 1 is supported)");
        }
        final int maxDev = b.getInt(o + MAX_DEV);
        if (Integer.compareUnsigned(maxDev, MAX_DEV_LIMIT) > 0) {
            throw new CorruptSuperblockException(
                    memberName,
                    "max_dev " + Integer.toUnsignedString(maxDev) + " out of range (0.." + MAX_DEV_LIMIT + ")");
        }
        final int span = span(maxDev);
        if (available < span) {
            throw new CorruptSuperblockException(
                    memberName,
                    "truncated superblock: max_dev " + maxDev + " needs " + span + " bytes, only " + available
                            + " read");
        }
        final int found = b.getInt(o + SB_CSUM);
        final int expected = SuperblockFormat.checksum(b, o, maxDev);
        if (found != expected) {
            throw new CorruptSuperblockException(
                    memberName,
                    String.format("bad superblock checksum: expected 0x%08x, found 0x%08x", expected, found));
        }
        checkPadding(b, o, memberName);

        final Superblock sb = new Superblock();
        sb.featureMap = b.getInt(o + FEATURE_MAP);
        b.get(o + SET_UUID, sb.setUuid);
        b.get(o + SET_NAME, sb.setName);
        sb.ctime = b.getLong(o + CTIME);
        sb.level = b.getInt(o + LEVEL);
        sb.layout = b.getInt(o + LAYOUT);
        sb.size = b.getLong(o + SIZE);
        sb.chunkSectors = b.getInt(o + CHUNKSIZE);
        sb.raidDisks = b.getInt(o + RAID_DISKS);
        sb.bitmapOffset = b.getInt(o + BITMAP_OFFSET);
        sb.newLevel = b.getInt(o + NEW_LEVEL);
        sb.reshapePosition = b.getLong(o + RESHAPE_POSITION);
        sb.deltaDisks = b.getInt(o + DELTA_DISKS);
        sb.newLayout = b.getInt(o + NEW_LAYOUT);
        sb.newChunk = b.getInt(o + NEW_CHUNK);
        sb.newOffset = b.getInt(o + NEW_OFFSET);
        sb.dataOffset = b.getLong(o + DATA_OFFSET);
        sb.dataSize = b.getLong(o + DATA_SIZE);
        sb.superOffset = b.getLong(o + SUPER_OFFSET);
        sb.recoveryOffset = b.getLong(o + RECOVERY_OFFSET);
        sb.devNumber = b.getInt(o + DEV_NUMBER);
        sb.cntCorrectedRead = b.getInt(o + CNT_CORRECTED_READ);
        b.get(o + DEVICE_UUID, sb.deviceUuid);
        sb.devflags = b.get(o + DEVFLAGS) & 0xff;
        sb.bblogShift = b.get(o + BBLOG_SHIFT) & 0xff;
        sb.bblogSize = b.getShort(o + BBLOG_SIZE) & 0xffff;
        sb.bblogOffset = b.getInt(o + BBLOG_OFFSET);
        sb.utime = b.getLong(o + UTIME);
        sb.events = b.getLong(o + EVENTS);
        sb.resyncOffset = b.getLong(o + RESYNC_OFFSET);
        sb.sbCsum = found;
        sb.devRoles = new int[maxDev];
        for (int i = 0; i < maxDev; i++) {
            sb.devRoles[i] = b.getShort(o + DEV_ROLES + 2 * i) & 0xffff;
        }
        SuperblockValidator.check(sb, readAtSector, memberName);
        src.position(o + span);
        return sb;
    }

    static int checksum(final ByteBuffer sb) {
        final ByteBuffer b = littleEndian(sb);
        final int o = sb.position();
        if (sb.remaining() < HEADER_BYTES) {
            throw new IllegalArgumentException("need " + HEADER_BYTES + " bytes, have " + sb.remaining());
        }
        final int maxDev = b.getInt(o + MAX_DEV);
        if (Integer.compareUnsigned(maxDev, MAX_DEV_LIMIT) > 0 || sb.remaining() < span(maxDev)) {
            throw new IllegalArgumentException("max_dev " + Integer.toUnsignedString(maxDev)
                    + " out of range or past the " + sb.remaining() + " bytes given");
        }
        return SuperblockFormat.checksum(b, o, maxDev);
    }

    /** pad0 and pad3 must be zero: the kernel refuses otherwise ("might be a new feature"). */
    private static void checkPadding(final ByteBuffer b, final int o, final String memberName)
            throws CorruptSuperblockException {
        final int pad0 = b.getInt(o + PAD0);
        if (pad0 != 0) {
            throw new CorruptSuperblockException(
                    memberName, String.format("reserved field pad0 is 0x%08x, must be zero", pad0));
        }
        for (int i = 0; i < PAD3_LENGTH; i++) {
            final int v = b.get(o + PAD3 + i) & 0xff;
            if (v != 0) {
                throw new CorruptSuperblockException(
                        memberName, String.format("reserved field pad3[%d] is 0x%02x, must be zero", i, v));
            }
        }
    }
}
