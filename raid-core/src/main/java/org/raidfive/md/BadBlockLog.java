package org.raidfive.md;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One member's list of bad blocks, as md keeps it: device sectors (counted from the start of the
 * member, not from data_offset) that must not be read as data. Immutable: changes return a new
 * list, so the I/O path can read the current one from a volatile field without a lock.
 *
 * <p>On disk (Linux {@code super_1_load}/{@code super_1_sync}): {@code bblog_size} sectors at
 * {@code bblog_offset} sectors from the superblock, an array of little-endian u64 entries
 * {@code (sector >> bblog_shift) << 10 | (count >> bblog_shift)} with {@code 1 <= count <= 512}
 * (in units of {@code 1 << bblog_shift} sectors), ended by an all-ones entry; the rest of the
 * area is all ones. The superblock sets {@code MD_FEATURE_BAD_BLOCKS} while the list is not empty.
 */
public final class BadBlockLog {
    /** Longest entry md stores, in units of {@code 1 << shift} sectors ({@code BB_MAX_LEN}). */
    public static final int MAX_ENTRY_LENGTH = 512;
    /** md keeps at most one page of entries ({@code MAX_BADBLOCKS}). */
    public static final int MAX_ENTRIES = 4096 / 8;
    /** The empty list. */
    public static final BadBlockLog EMPTY = new BadBlockLog(new long[0], new long[0]);

    /** Sorted, disjoint, non-adjacent ranges [starts[i], ends[i]) of device sectors. */
    private final long[] starts;

    private final long[] ends;

    private BadBlockLog(final long[] starts, final long[] ends) {
        this.starts = starts;
        this.ends = ends;
    }

    /** True when no sector is listed. */
    public boolean isEmpty() {
        return starts.length == 0;
    }

    /** Number of disjoint ranges. */
    public int ranges() {
        return starts.length;
    }

    /** First sector of range {@code i}. */
    public long start(final int i) {
        return starts[i];
    }

    /** Sectors in range {@code i}. */
    public long length(final int i) {
        return ends[i] - starts[i];
    }

    /** True if any sector of {@code [sector, sector + count)} is listed. */
    public boolean overlaps(final long sector, final long count) {
        if (starts.length == 0 || count <= 0) {
            return false;
        }
        // first range that ends after sector
        int lo = 0;
        int hi = starts.length;
        while (lo < hi) {
            final int mid = (lo + hi) >>> 1;
            if (ends[mid] <= sector) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo < starts.length && starts[lo] < sector + count;
    }

    /** This list with {@code [sector, sector + count)} added (merged with neighbours). */
    public BadBlockLog add(final long sector, final long count) {
        if (count <= 0) {
            return this;
        }
        final List<long[]> out = new ArrayList<>();
        long s = sector;
        long e = sector + count;
        boolean placed = false;
        for (int i = 0; i < starts.length; i++) {
            if (ends[i] < s) {
                out.add(new long[] {starts[i], ends[i]});
            } else if (starts[i] > e) {
                if (!placed) {
                    out.add(new long[] {s, e});
                    placed = true;
                }
                out.add(new long[] {starts[i], ends[i]});
            } else {
                s = Math.min(s, starts[i]);
                e = Math.max(e, ends[i]);
            }
        }
        if (!placed) {
            out.add(new long[] {s, e});
        }
        return of(out);
    }

    /** This list without {@code [sector, sector + count)} (a rewrite made them good). */
    public BadBlockLog clear(final long sector, final long count) {
        if (!overlaps(sector, count)) {
            return this;
        }
        final long e = sector + count;
        final List<long[]> out = new ArrayList<>();
        for (int i = 0; i < starts.length; i++) {
            if (ends[i] <= sector || starts[i] >= e) {
                out.add(new long[] {starts[i], ends[i]});
                continue;
            }
            if (starts[i] < sector) {
                out.add(new long[] {starts[i], sector});
            }
            if (ends[i] > e) {
                out.add(new long[] {e, ends[i]});
            }
        }
        return of(out);
    }

    private static BadBlockLog of(final List<long[]> ranges) {
        if (ranges.isEmpty()) {
            return EMPTY;
        }
        final long[] s = new long[ranges.size()];
        final long[] e = new long[ranges.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = ranges.get(i)[0];
            e[i] = ranges.get(i)[1];
        }
        return new BadBlockLog(s, e);
    }

    /**
     * Reads md's on-disk entries from {@code area} (position to limit, any byte order), as
     * {@code super_1_load} does: stops at the first all-ones entry.
     *
     * @throws CorruptSuperblockException if an entry has a zero count or overflows
     */
    public static BadBlockLog decode(final ByteBuffer area, final int shift, final String member)
            throws CorruptSuperblockException {
        final ByteBuffer b = area.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        BadBlockLog log = EMPTY;
        while (b.remaining() >= 8) {
            final long entry = b.getLong();
            if (entry == -1L) {
                break;
            }
            final long units = entry >>> 10;
            if (shift >= 54 || (units << shift) >>> shift != units || (units << shift) < 0) {
                throw new CorruptSuperblockException(
                        member,
                        String.format(
                                "bad block log entry 0x%016x with bblog_shift %d names a sector past 2^63",
                                entry, shift));
            }
            final long count = (entry & 0x3ff) << shift;
            final long sector = units << shift;
            if (count == 0) {
                throw new CorruptSuperblockException(
                        member, String.format("bad block log entry 0x%016x has a length of 0", entry));
            }
            log = log.add(sector, count);
        }
        return log;
    }

    /** Entries md would write for this list with {@code shift}, each at most {@link #MAX_ENTRY_LENGTH} units. */
    public long[] entries(final int shift) {
        final List<Long> out = new ArrayList<>();
        final long unit = 1L << shift;
        for (int i = 0; i < starts.length; i++) {
            // widen to whole units, as badblocks_set rounds to its shift
            long s = starts[i] & -unit;
            final long e = (ends[i] + unit - 1) & -unit;
            while (s < e) {
                final long n = Math.min(e - s, MAX_ENTRY_LENGTH * unit);
                out.add(((s >>> shift) << 10) | (n >>> shift));
                s += n;
            }
        }
        final long[] a = new long[out.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = out.get(i);
        }
        return a;
    }

    /**
     * Writes the on-disk area ({@code area.remaining()} bytes from its position, which does not
     * move): the entries, then all ones, as {@code super_1_sync} does.
     *
     * @throws IllegalStateException if the entries do not fit
     */
    public void encode(final ByteBuffer area, final int shift) {
        final long[] e = entries(shift);
        final int capacity = Math.min(area.remaining() / 8, MAX_ENTRIES);
        if (e.length > capacity) {
            throw new IllegalStateException(e.length + " bad block entries do not fit the log's " + capacity);
        }
        final ByteBuffer b = area.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (final long entry : e) {
            b.putLong(entry);
        }
        while (b.remaining() >= 8) {
            b.putLong(-1L);
        }
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof BadBlockLog
                && Arrays.equals(starts, ((BadBlockLog) o).starts)
                && Arrays.equals(ends, ((BadBlockLog) o).ends);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(starts) + Arrays.hashCode(ends);
    }

    /** {@code "[2048+8, 4096+16]"}: first sector + count of each range. */
    @Override
    public String toString() {
        final StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < starts.length; i++) {
            if (i > 0) {
                s.append(", ");
            }
            s.append(starts[i]).append('+').append(ends[i] - starts[i]);
        }
        return s.append(']').toString();
    }
}
