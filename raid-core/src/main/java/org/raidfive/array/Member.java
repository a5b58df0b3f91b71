package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.raidfive.counter.CounterMode;
import org.raidfive.counter.PercpuRef;
import org.raidfive.counter.ThreadStats;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.DirectAccessDisk;
import org.raidfive.disk.DiskClaim;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.BadBlockLog;
import org.raidfive.md.Superblock;

/**
 * One member disk of an array: its storage, role, state and in-flight counter ({@code nr_pending}).
 *
 * <p>Offsets given to {@link #readData}/{@link #writeData} are relative to the data area
 * (md's data_offset is added here). {@code state} and {@code recoveryOffset} are volatile: the I/O
 * path reads them without a lock; they change under the array's metadata lock (state) or the
 * stripe lock of the stripe being rebuilt (recovery offset), and the recovery offset only grows
 * while the member keeps its role.
 *
 * <p>Bad blocks: md's list of device sectors that must not be read as data, an immutable
 * {@link BadBlockLog} in a volatile field (empty on nearly every member, so the I/O path pays one
 * volatile read). A listed range counts as unreadable on this member; a successful write over it
 * clears it (md's "made good"), and the changed list goes to disk with the next superblock write.
 */
final class Member {
    /** md's {@code max_nr_stripes} default: more consecutive read errors than this fail the member. */
    static final int MAX_READ_ERRORS = 256;

    final MemberDisk disk;
    /** The disk's completion-based I/O (native, or its blocking calls on the shared I/O threads). */
    final AsyncDisk async;

    final long dataOffsetBytes;
    final PercpuRef nrPending;
    /** md's {@code read_errors}: failed reads since the last good one. */
    final AtomicInteger readErrors = new AtomicInteger();
    /** md's {@code corrected_errors} ({@code cnt_corrected_read}): sectors rewritten after read errors. */
    final AtomicLong correctedSectors = new AtomicLong();

    volatile int devNumber;
    volatile byte[] deviceUuid;
    volatile int slot;
    volatile MemberState state;
    volatile long recoveryOffset;
    /**
     * While rebuilding: writes to stripes below this reach the member even above
     * {@link #recoveryOffset}. A parallel rebuild raises it past every stripe it has started, so a
     * stripe rebuilt ahead of the contiguous recovery offset is kept current by foreground writes;
     * writing a stripe not yet rebuilt is harmless (the rebuild recomputes it, under the stripe lock).
     */
    volatile long writeLimit;
    /**
     * Re-added with the write-intent bitmap: its data is current except where the bitmap has bits
     * set, so its recovery goes over those chunks only (md's bitmap-based recovery of a re-add).
     */
    volatile boolean bitmapRecovery;
    /** md's {@code devflags} (write-mostly, failfast): kept as found; raid5 does not act on them. */
    volatile int devflags;
    /** md's {@code data_size}: sectors of the member usable for data, kept as found (md keeps it). */
    volatile long dataSizeSectors;
    /** Where this member's bad block log lives, sectors from the superblock; 0 when it has none. */
    volatile int bblogOffset;

    volatile int bblogSize;
    volatile int bblogShift;
    /**
     * This member's partial parity log area (md's {@code rdev->ppl}, from its own superblock): offset
     * from the superblock and size, in sectors; meaningful while the array has a PPL.
     */
    volatile int pplOffset;

    volatile int pplSize;
    private volatile BadBlockLog badBlocks = BadBlockLog.EMPTY;
    /** The list changed since the log was last written. */
    private volatile boolean badBlocksChanged;
    /** cnt_corrected_read changed since the superblocks were read or written. */
    private volatile boolean correctedChanged;
    /**
     * What this member's superblock said when this array last wrote it or found it at assembly: its
     * identity, role and events, compared before every superblock write ({@link SuperblockIo#write});
     * null for a member new to the array until its first write. Read and written under the
     * metadata lock.
     */
    volatile OnDisk onDisk;

    /** The identity, role and events of a superblock on a member. */
    record OnDisk(byte[] deviceUuid, int devNumber, int role, long events) {
        static OnDisk of(Superblock sb) {
            int role = sb.devNumber() < sb.maxDev() ? sb.devRole(sb.devNumber()) : -1;
            return new OnDisk(sb.deviceUuid(), sb.devNumber(), role, sb.events());
        }
    }

    /** This array's ownership of the storage; null until claimed, and after release. */
    private volatile DiskClaim claim;

    Member(MemberDisk disk, long dataOffsetBytes, DeviceId id, int slot, MemberState state, CounterMode counterMode) {
        this.disk = disk;
        this.async = AsyncDisk.of(disk);
        this.dataOffsetBytes = dataOffsetBytes;
        this.devNumber = id.devNumber();
        this.deviceUuid = id.uuid();
        this.slot = slot;
        this.state = state;
        this.nrPending = PercpuRef.inflightCounter(counterMode);
        this.dataSizeSectors = dataRoomBytes() / 512;
    }

    /** Bytes the disk holds after the data offset, as it reports its size now (md's data_size, in bytes). */
    long dataRoomBytes() {
        return disk.size() - dataOffsetBytes;
    }

    /** True when the bytes of the stripe at {@code memberOffset} on this member can be trusted. */
    boolean readable(long memberOffset) {
        MemberState s = state;
        return s == MemberState.IN_SYNC || (s == MemberState.REBUILDING && memberOffset < recoveryOffset);
    }

    /**
     * True when {@code [memberOffset, memberOffset + length)} of the stripe at {@code stripeOffset}
     * can be read from this member: it holds the stripe ({@link #readable}) and lists none of those
     * sectors as bad.
     */
    boolean readable(long stripeOffset, long memberOffset, int length) {
        return readable(stripeOffset) && !hasBadBlocks(memberOffset, length);
    }

    /**
     * True when writes to the stripe at {@code memberOffset} must reach this member: in sync, or
     * rebuilding and already past that stripe (above the line the rebuild writes it later).
     */
    boolean writable(long memberOffset) {
        MemberState s = state;
        return s == MemberState.IN_SYNC
                || (s == MemberState.REBUILDING && (memberOffset < recoveryOffset || memberOffset < writeLimit));
    }

    /** True if any sector of the data range is on this member's bad block list. */
    boolean hasBadBlocks(long memberOffset, int length) {
        BadBlockLog b = badBlocks;
        return !b.isEmpty() && b.overlaps(sector(memberOffset), sectors(length));
    }

    BadBlockLog badBlocks() {
        return badBlocks;
    }

    /** Loads the list read from disk (not a change: nothing to write back). */
    void loadBadBlocks(BadBlockLog list) {
        badBlocks = list;
    }

    /** True if this member can record bad blocks (it has a bad block log area). */
    boolean canRecordBadBlocks() {
        return bblogOffset != 0 && bblogSize > 0;
    }

    /** Lists the data range as bad (an error md could not correct); written with the next superblock. */
    synchronized void recordBadBlocks(long memberOffset, int length) {
        badBlocks = badBlocks.add(sector(memberOffset), sectors(length));
        badBlocksChanged = true;
    }

    /** A read error was corrected over {@code sectors}: md's cnt_corrected_read, written with the next superblock. */
    void corrected(long sectors) {
        correctedSectors.addAndGet(sectors);
        correctedChanged = true;
    }

    /** True while this member holds a change its superblock does not have yet (bad blocks, corrected reads). */
    boolean metadataPending() {
        return badBlocksChanged || correctedChanged;
    }

    /** True (once) if the list changed since the last call: the log must be written again. */
    boolean takeBadBlocksChanged() {
        if (!badBlocksChanged) {
            return false;
        }
        badBlocksChanged = false;
        return true;
    }

    private long sector(long memberOffset) {
        return (dataOffsetBytes + memberOffset) >>> 9;
    }

    private static long sectors(int length) {
        return (length + 511L) >>> 9;
    }

    /** Entries this member's bad block log holds, as {@link BadBlockLog#encode} allows. */
    private int badBlockCapacity() {
        return (int) Math.min(bblogSize * 512L / 8, BadBlockLog.MAX_ENTRIES);
    }

    /** A successful write over listed sectors made them good (md's R5_MadeGood). */
    private synchronized void clearBadBlocks(long memberOffset, int length) {
        BadBlockLog b = badBlocks;
        BadBlockLog cleared = b.clear(sector(memberOffset), sectors(length));
        // md's _badblocks_clear: a clear that would split a range on a full table fails (-ENOSPC) and
        // the range stays listed, so it is still read from parity; the write itself stands.
        if (cleared != b && cleared.entries(bblogShift).length <= badBlockCapacity()) {
            badBlocks = cleared;
            badBlocksChanged = true;
        }
    }

    void readData(long memberOffset, ByteBuffer dst, int dstOffset, int length) throws IOException {
        nrPending.get();
        try {
            disk.read(dataOffsetBytes + memberOffset, dst, dstOffset, length);
        } catch (IOException | RuntimeException e) {
            countError();
            throw e;
        } finally {
            nrPending.put();
        }
        countIo(false, length);
        readDataOk();
    }

    /** I/O counts while live counters are published; null otherwise (one field read per I/O). */
    volatile ThreadStats stats;

    /** Counts one member I/O of {@code bytes} (done, or handed to the member's own completion-based I/O). */
    void countIo(boolean write, long bytes) {
        IoStats.io(stats, write, bytes);
    }

    void countError() {
        IoStats.one(stats, IoStats.ERRORS);
    }

    /** A read of this member succeeded: md resets read_errors on every good read (a plain read otherwise). */
    void readDataOk() {
        if (readErrors.get() != 0) {
            readErrors.set(0);
        }
    }

    /** A write of the data range succeeded: listed bad blocks under it are good again. */
    void wroteData(long memberOffset, int length) {
        if (!badBlocks.isEmpty()) {
            clearBadBlocks(memberOffset, length);
        }
    }

    void writeData(long memberOffset, ByteBuffer src, int srcOffset, int length) throws IOException {
        nrPending.get();
        try {
            disk.write(dataOffsetBytes + memberOffset, src, srcOffset, length);
        } catch (IOException | RuntimeException e) {
            countError();
            throw e;
        } finally {
            nrPending.put();
        }
        countIo(true, length);
        wroteData(memberOffset, length);
    }

    /**
     * This member's bytes at {@code memberOffset} in place, when its disk offers direct access, the
     * range is contiguous and lists no bad blocks; else null and the caller copies (through
     * {@link #readData}/{@link #writeData}, which keep the bad block list). The caller brackets its
     * use with {@code nrPending.get()}/{@code put()} like any other I/O on the member.
     */
    ByteBuffer direct(long memberOffset, int length) throws IOException {
        return inMemory() && badBlocks.isEmpty()
                ? ((DirectAccessDisk) disk).directBuffer(dataOffsetBytes + memberOffset, length)
                : null;
    }

    /** True when this member's disk keeps its bytes in memory the engine addresses in place ({@link DirectAccessDisk}). */
    boolean inMemory() {
        return disk instanceof DirectAccessDisk;
    }

    /** Index in {@link #direct}'s buffer of the byte at {@code memberOffset}. */
    int directIndex(long memberOffset) {
        return ((DirectAccessDisk) disk).directIndex(dataOffsetBytes + memberOffset);
    }

    void claimed(DiskClaim c) {
        claim = c;
    }

    /** Gives the storage up (idempotent). */
    void releaseClaim() {
        DiskClaim c = claim;
        claim = null;
        if (c != null) {
            c.close();
        }
    }

    String name() {
        return disk.name();
    }

    @Override
    public String toString() {
        return name() + " [slot " + slot + ", " + state + "]";
    }
}
