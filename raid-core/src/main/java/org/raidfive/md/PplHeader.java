package org.raidfive.md;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * md's partial parity log header ({@code struct ppl_header}, Linux {@code md_p.h}; the log itself is
 * {@code drivers/md/raid5-ppl.c}): 4 KiB at the start of each io_unit in a member's PPL area, followed
 * by the partial parity of its entries, in entry order.
 *
 * <pre>
 *    0 reserved[512] (0xff)   512 signature   516 padding (0)   520 generation (le64)
 *  528 entries_count          532 checksum    536 entries[148], 24 bytes each:
 *      0 data_sector (le64)  8 pp_size  12 data_size  16 parity_disk  20 checksum
 * </pre>
 *
 * Checksums are CRC-32C as md writes them ({@code ~crc32c_le(~0, ...)}, which is the standard
 * CRC-32C {@link CRC32C} computes): the signature is that of the array UUID, the header's is taken
 * with its own field zero, an entry's is that of its partial parity. {@code data_sector} is the array
 * sector (512-byte units, md's native block size) of the first byte of modified data.
 *
 * <p>The writing side ({@link #begin}, {@link #entry}, {@link #seal}, {@link #checksum(CRC32C,
 * ByteBuffer, int, int)}) works in place on a little-endian buffer the caller owns and allocates
 * nothing: the log writes a header per io_unit on the I/O path.
 */
public final class PplHeader {
    /** {@code PPL_HEADER_SIZE}. */
    public static final int SIZE = 4096;
    /** {@code PPL_HDR_RESERVED}. */
    public static final int RESERVED = 512;
    /** Bytes per ppl_header_entry. */
    public static final int ENTRY_SIZE = 24;

    private static final int ENTRIES_AT = RESERVED + 24;
    /** {@code PPL_HDR_MAX_ENTRIES}. */
    public static final int MAX_ENTRIES = (SIZE - RESERVED - 4 * 4 - 8) / ENTRY_SIZE;
    /** {@code PPL_SPACE_SIZE}: partial parity one io_unit carries at most when the area holds several. */
    public static final int SPACE_SIZE = 128 * 1024;
    /** mdadm's {@code MULTIPLE_PPL_AREA_SIZE_SUPER1} in sectors, placed 8 sectors after a v1.2 superblock. */
    public static final int AREA_SECTORS = 1024 * 1024 / 512;
    /** Where mdadm puts the area: sectors after the superblock. */
    public static final int AREA_OFFSET = 8;
    /** md's limit of members for a partial parity log: one bit per member in {@code disk_flush_bitmap}. */
    public static final int MAX_DISKS = 64;

    private PplHeader() {}

    /** md's signature for an array: CRC-32C of its UUID. */
    public static int signature(final byte[] arrayUuid) {
        final CRC32C crc = new CRC32C();
        crc.update(arrayUuid, 0, arrayUuid.length);
        return (int) crc.getValue();
    }

    /** CRC-32C of {@code len} bytes of {@code b} from {@code off}, as md checks an entry's partial parity. */
    public static int checksum(final ByteBuffer b, final int off, final int len) {
        return checksum(new CRC32C(), b.duplicate(), off, len);
    }

    /**
     * {@link #checksum(ByteBuffer, int, int)} with the caller's CRC object, without allocating; the
     * buffer's position and limit are restored.
     */
    public static int checksum(final CRC32C crc, final ByteBuffer b, final int off, final int len) {
        final int position = b.position();
        final int limit = b.limit();
        crc.reset();
        b.limit(off + len).position(off);
        crc.update(b);
        b.limit(limit).position(position);
        return (int) crc.getValue();
    }

    /**
     * Starts a header in {@code h} (4 KiB from index 0, little-endian): reserved bytes, signature
     * and generation; no entries.
     */
    public static void begin(final ByteBuffer h, final int signature, final long generation) {
        final ByteBuffer b = littleEndian(h);
        for (int i = 0; i < SIZE; i += 8) {
            b.putLong(i, 0);
        }
        for (int i = 0; i < RESERVED; i += 8) {
            b.putLong(i, -1L);
        }
        b.putInt(RESERVED, signature);
        b.putLong(RESERVED + 8, generation);
    }

    /** Writes entry {@code i} of the header in {@code h}. */
    public static void entry(
            final ByteBuffer h,
            final int i,
            final long dataSector,
            final int ppSize,
            final int dataSize,
            final int parityDisk,
            final int checksum) {
        final ByteBuffer b = littleEndian(h);
        final int at = ENTRIES_AT + i * ENTRY_SIZE;
        b.putLong(at, dataSector);
        b.putInt(at + 8, ppSize);
        b.putInt(at + 12, dataSize);
        b.putInt(at + 16, parityDisk);
        b.putInt(at + 20, checksum);
    }

    /** Sets the entry count and the header's checksum: the header in {@code h} is complete. */
    public static void seal(final ByteBuffer h, final int entries, final CRC32C crc) {
        final ByteBuffer b = littleEndian(h);
        b.putInt(RESERVED + 16, entries);
        b.putInt(RESERVED + 20, 0);
        b.putInt(RESERVED + 20, checksum(crc, b, 0, SIZE));
    }

    /**
     * Clears entries {@code [0, count)} of the header in {@code h} and its entry count and checksum,
     * leaving the reserved bytes and the signature: a header {@link #begin}-ed once and sealed with
     * {@code count} entries is ready for its next use without clearing all 4 KiB again.
     */
    public static void clearEntries(final ByteBuffer h, final int count) {
        final ByteBuffer b = littleEndian(h);
        final int end = ENTRIES_AT + count * ENTRY_SIZE;
        for (int i = RESERVED + 16; i < end; i += 8) {
            b.putLong(i, 0);
        }
    }

    /**
     * {@link #seal} for a header whose bytes after its {@code entries} entries are all zero (as
     * {@link #begin} and {@link #clearEntries} leave them): the same checksum, computed over the
     * bytes up to the last entry and carried over the zeros after them without reading them.
     */
    public static void sealZeroTail(final ByteBuffer h, final int entries, final CRC32C crc) {
        final ByteBuffer b = littleEndian(h);
        b.putInt(RESERVED + 16, entries);
        b.putInt(RESERVED + 20, 0);
        final int written = ENTRIES_AT + entries * ENTRY_SIZE;
        b.putInt(RESERVED + 20, ZeroTail.extend(checksum(crc, b, 0, written), entries));
    }

    /**
     * CRC-32C over zeros without reading them: appending a zero byte to a message maps the CRC's
     * register linearly (over GF(2)), so appending the header's {@code SIZE - ENTRIES_AT - 24 n} zeros
     * after {@code n} entries is one 32 x 32 bit matrix per entry count, made once.
     */
    private static final class ZeroTail {
        /** {@code MATRICES[n][i]}: the register after the zeros that follow n entries, from register bit i alone. */
        private static final int[][] MATRICES = new int[MAX_ENTRIES + 1][];

        static {
            int tail = SIZE - ENTRIES_AT - MAX_ENTRIES * ENTRY_SIZE;
            int[] last = zeros(tail);
            int[] entry = zeros(ENTRY_SIZE);
            MATRICES[MAX_ENTRIES] = last;
            for (int n = MAX_ENTRIES - 1; n >= 0; n--) {
                int[] after = MATRICES[n + 1];
                int[] m = new int[32];
                for (int i = 0; i < 32; i++) {
                    m[i] = apply(after, entry[i]); // first one entry's zeros, then the rest
                }
                MATRICES[n] = m;
            }
        }

        /** The CRC-32C of a message whose CRC-32C is {@code crc}, followed by the zeros after {@code entries} entries. */
        static int extend(final int crc, final int entries) {
            return ~apply(MATRICES[entries], ~crc);
        }

        private static int apply(final int[] matrix, int register) {
            int out = 0;
            for (int i = 0; register != 0; i++, register >>>= 1) {
                if ((register & 1) != 0) {
                    out ^= matrix[i];
                }
            }
            return out;
        }

        /** The matrix of {@code bytes} zero bytes, stepped bit by bit (CRC-32C, reflected polynomial 0x82F63B78). */
        private static int[] zeros(final int bytes) {
            int[] m = new int[32];
            for (int i = 0; i < 32; i++) {
                int r = 1 << i;
                for (int k = 0; k < 8 * bytes; k++) {
                    r = (r & 1) != 0 ? (r >>> 1) ^ 0x82F63B78 : r >>> 1;
                }
                m[i] = r;
            }
            return m;
        }
    }

    private static ByteBuffer littleEndian(final ByteBuffer h) {
        if (h.order() != ByteOrder.LITTLE_ENDIAN) {
            throw new IllegalArgumentException("a PPL header buffer must be little-endian");
        }
        return h;
    }

    /** True if the 4 KiB at {@code h}'s position 0 is a header whose checksum holds. */
    public static boolean valid(final ByteBuffer h) {
        final ByteBuffer b = h.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        final int stored = b.getInt(RESERVED + 20);
        b.putInt(RESERVED + 20, 0);
        final int computed = checksum(b, 0, SIZE);
        b.putInt(RESERVED + 20, stored);
        return stored == computed && entries(h) <= MAX_ENTRIES;
    }

    /** The header's signature (CRC-32C of the array UUID). */
    public static int signatureOf(final ByteBuffer h) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(RESERVED);
    }

    /** The header's generation (a log's io_units count up). */
    public static long generation(final ByteBuffer h) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(RESERVED + 8);
    }

    /** The number of entries in the header. */
    public static int entries(final ByteBuffer h) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(RESERVED + 16);
    }

    /** Entry {@code i}'s first data sector (member sector of the stripe). */
    public static long dataSector(final ByteBuffer h, final int i) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(ENTRIES_AT + i * ENTRY_SIZE);
    }

    /** Bytes of partial parity entry {@code i} has after the header. */
    public static int ppSize(final ByteBuffer h, final int i) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(ENTRIES_AT + i * ENTRY_SIZE + 8);
    }

    /** Bytes of data entry {@code i} covers. */
    public static int dataSize(final ByteBuffer h, final int i) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(ENTRIES_AT + i * ENTRY_SIZE + 12);
    }

    /** The parity member's slot of entry {@code i}. */
    public static int parityDisk(final ByteBuffer h, final int i) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(ENTRIES_AT + i * ENTRY_SIZE + 16);
    }

    /** The CRC-32C of entry {@code i}'s partial parity. */
    public static int entryChecksum(final ByteBuffer h, final int i) {
        return h.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(ENTRIES_AT + i * ENTRY_SIZE + 20);
    }

    /** Bytes of partial parity the header's entries carry. */
    public static long ppBytes(final ByteBuffer h) {
        long n = 0;
        for (int i = 0; i < entries(h); i++) {
            n += Integer.toUnsignedLong(ppSize(h, i));
        }
        return n;
    }
}
