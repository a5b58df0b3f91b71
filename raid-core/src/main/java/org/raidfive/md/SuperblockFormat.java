package org.raidfive.md;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Byte offsets of {@code struct mdp_superblock_1} (Linux {@code md_p.h}) and
 * md's checksum over it. Offsets are from the start of the superblock; all
 * fields are little-endian. mdadm's {@code calc_sb_1_csum} asserts the same
 * anchors: {@code data_offset} at 128, {@code utime} at 192, header 256 bytes.
 */
final class SuperblockFormat {
    // constant array information - 128 bytes
    static final int MAGIC = 0;
    static final int MAJOR_VERSION = 4;
    static final int FEATURE_MAP = 8;
    static final int PAD0 = 12;
    static final int SET_UUID = 16;
    static final int SET_NAME = 32;
    static final int CTIME = 64;
    static final int LEVEL = 72;
    static final int LAYOUT = 76;
    static final int SIZE = 80;
    static final int CHUNKSIZE = 88;
    static final int RAID_DISKS = 92;
    static final int BITMAP_OFFSET = 96;
    static final int NEW_LEVEL = 100;
    static final int RESHAPE_POSITION = 104;
    static final int DELTA_DISKS = 112;
    static final int NEW_LAYOUT = 116;
    static final int NEW_CHUNK = 120;
    static final int NEW_OFFSET = 124;

    // constant this-device information - 64 bytes
    static final int DATA_OFFSET = 128;
    static final int DATA_SIZE = 136;
    static final int SUPER_OFFSET = 144;
    static final int RECOVERY_OFFSET = 152;
    static final int DEV_NUMBER = 160;
    static final int CNT_CORRECTED_READ = 164;
    static final int DEVICE_UUID = 168;
    static final int DEVFLAGS = 184;
    static final int BBLOG_SHIFT = 185;
    static final int BBLOG_SIZE = 186;
    static final int BBLOG_OFFSET = 188;

    // array state information - 64 bytes
    static final int UTIME = 192;
    static final int EVENTS = 200;
    static final int RESYNC_OFFSET = 208;
    static final int SB_CSUM = 216;
    static final int MAX_DEV = 220;
    static final int PAD3 = 224;
    static final int PAD3_LENGTH = 32;

    /** Size of the fixed part; {@code dev_roles[]} follows. */
    static final int HEADER_LENGTH = 256;

    static final int DEV_ROLES = HEADER_LENGTH;
    static final int SET_NAME_LENGTH = 32;

    private SuperblockFormat() {}

    /** Bytes covered by the checksum (and written): {@code 256 + 2 * max_dev}. */
    static int span(final int maxDev) {
        return HEADER_LENGTH + 2 * maxDev;
    }

    /**
     * md's {@code calc_sb_1_csum}: 32-bit little-endian words over
     * {@code 256 + 2 * max_dev} bytes with {@code sb_csum} taken as zero, summed
     * into 64 bits; a trailing 16-bit word (odd {@code max_dev}) is added as
     * le16; the sum is folded once, {@code (lo32 + hi32)}, and truncated to 32 bits.
     *
     * @param sb little-endian view whose index {@code start} is the superblock's first byte.
     */
    static int checksum(final ByteBuffer sb, final int start, final int maxDev) {
        int size = span(maxDev);
        long sum = 0;
        int i = start;
        for (; size >= 4; size -= 4, i += 4) {
            if (i - start != SB_CSUM) {
                sum += Integer.toUnsignedLong(sb.getInt(i));
            }
        }
        if (size == 2) {
            sum += Short.toUnsignedInt(sb.getShort(i));
        }
        return (int) ((sum & 0xffff_ffffL) + (sum >>> 32));
    }

    /** A little-endian view of {@code buffer} sharing its content (position and limit copied). */
    static ByteBuffer littleEndian(final ByteBuffer buffer) {
        return buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }
}
