package org.raidfive.array;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.raidfive.disk.AlignedBuffers;
import org.raidfive.md.BitmapSuperblock;
import org.raidfive.md.Superblock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * md's internal write-intent bitmap ({@code md-bitmap.c}), kept bit by bit: one bit per bitmap
 * chunk of member data, set on disk (and flushed, on every live member) before any write to that
 * chunk reaches a member, cleared lazily after writes stop, so that a crash resyncs only the chunks
 * with bits set and a member that comes back after a short absence is rebuilt only where it missed
 * writes.
 *
 * <p>State per chunk, in {@code flags}: {@link #ON_DISK} (the bit is set on disk, so writes may go),
 * {@link #NEEDED} (the chunk must be resynced or recovered before its bit may go: a write that did
 * not reach every member, or a bit found set at assembly), {@link #AGED} (the daemon found it idle
 * once). Writes in flight per chunk are counted in striped cells, {@code inflight[stripe][chunk]},
 * each stripe a row of its own cache lines; a thread adds to the row its id hashes to, so writers on
 * different cores share no line in the common case. No array-wide lock on the write path: a writer
 * takes a page's lock only to set a bit that is not yet on disk.
 *
 * <p>The bit's safety rests on one handshake (Dekker's): a writer adds to its cell, then reads
 * {@code ON_DISK}; the clearing daemon removes {@code ON_DISK} with a CAS, then sums the cells. Both
 * are volatile accesses in one total order, so either the writer sees the bit gone (and sets it again
 * on disk, under the page lock the daemon holds while it writes the page) or the daemon sees the
 * writer's count (and puts {@code ON_DISK} back, writing nothing). A bit is cleared only after a
 * daemon pass found the chunk idle twice (md's counter going 2, 1, 0), and never while {@code NEEDED}.
 *
 * <p>{@code events_cleared} follows md: raised to the array's events when a write completes on every
 * member of a whole array ({@code md_bitmap_endwrite}), and here also when a pass makes the array
 * whole again and lets go of the marks degraded writes kept; it is written with the superblock page,
 * before any cleared bit. A member whose events are below it may not be re-added by the bitmap: writes
 * it missed may have lost their marks. Lock order: the metadata lock, then a page lock; member
 * failures found while holding a page lock are reported after it is released.
 */
final class WriteIntentBitmap implements ConsistencyPort {
    private static final Logger LOG = LoggerFactory.getLogger(WriteIntentBitmap.class);
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    static final int ON_DISK = 1;
    static final int NEEDED = 2;
    static final int AGED = 4;
    private static final int PAGE = 4096;
    /** 32 ints: 128 bytes, a row's end never shares a prefetch pair of lines with the next row. */
    private static final int LINE_INTS = 32;

    private final ArrayCore core;
    /** The array's events count, for {@code events_cleared}. */
    private final LongSupplier events;
    /** Bytes from a member's start to the bitmap superblock. */
    private final long areaStart;

    private final int chunkShift;
    private final int chunks;
    private final int[] flags;
    private final int stripes;
    private final int rowInts;
    private final int[] inflight;
    private final Object[] pageLocks;
    private final ByteBuffer[] pageBuffers;
    private final BitmapSuperblock sb;
    private volatile long eventsCleared;
    /** The events_cleared the superblock page last carried (written under page 0's lock). */
    private volatile long eventsClearedWritten;

    private WriteIntentBitmap(ArrayCore core, LongSupplier events, BitmapSuperblock sb, int offsetSectors) {
        this.core = core;
        this.events = events;
        this.sb = sb;
        this.areaStart = (Superblock.SUPERBLOCK_OFFSET_SECTORS + offsetSectors) * 512L;
        this.chunkShift = Integer.numberOfTrailingZeros(sb.chunksize());
        this.chunks = (int) sb.bits();
        this.flags = new int[chunks];
        int cores = Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 2 - 1);
        // Enough rows for the cores, but not more memory than a million counters.
        int s = Math.min(Math.max(1, cores), 16);
        while (s > 1 && (long) s * chunks > (1 << 20)) {
            s >>= 1;
        }
        this.stripes = s;
        this.rowInts = (chunks + LINE_INTS - 1) / LINE_INTS * LINE_INTS + LINE_INTS;
        this.inflight = new int[stripes * rowInts];
        int pages = (int) ((BitmapSuperblock.BYTES + (chunks + 7L) / 8 + PAGE - 1) / PAGE);
        this.pageLocks = new Object[pages];
        this.pageBuffers = new ByteBuffer[pages];
        for (int i = 0; i < pages; i++) {
            pageLocks[i] = new Object();
        }
        this.eventsCleared = sb.eventsCleared();
        this.eventsClearedWritten = eventsCleared;
    }

    /**
     * The bitmap a running array keeps, its superblock {@code sb} found (or made) at {@code offsetSectors}
     * after the superblock; {@code setBits} are the chunks whose bit is set on disk, {@code needed}
     * those of them to resync or recover.
     */
    static WriteIntentBitmap of(
            ArrayCore core,
            LongSupplier events,
            BitmapSuperblock sb,
            int offsetSectors,
            boolean[] setBits,
            boolean[] needed) {
        WriteIntentBitmap b = new WriteIntentBitmap(core, events, sb, offsetSectors);
        for (int c = 0; c < b.chunks; c++) {
            b.flags[c] = (setBits[c] ? ON_DISK : 0) | (needed[c] ? NEEDED : 0);
        }
        return b;
    }

    int chunks() {
        return chunks;
    }

    long chunkBytes() {
        return 1L << chunkShift;
    }

    /** Sectors the bitmap takes on a member: its superblock and its bits. */
    long areaSectors() {
        return sb.areaSectors();
    }

    long eventsCleared() {
        return eventsCleared;
    }

    BitmapSuperblock superblock() {
        return sb;
    }

    /** Chunks whose bit is set now (on disk). */
    long dirtyChunks() {
        long n = 0;
        for (int c = 0; c < chunks; c++) {
            if ((flagsOf(c) & ON_DISK) != 0) {
                n++;
            }
        }
        return n;
    }

    private int flagsOf(int c) {
        return (int) INTS.getVolatile(flags, c);
    }

    private int firstChunk(long memberOffset) {
        return (int) (memberOffset >>> chunkShift);
    }

    private int lastChunk(long memberOffset, long len) {
        return (int) Math.min(chunks - 1, (memberOffset + len - 1) >>> chunkShift);
    }

    private int row() {
        long h = Thread.currentThread().getId() * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & (stripes - 1);
    }

    // ------------------------------------------------------------------ the write path

    /**
     * Before a write of member data {@code [memberOffset, +len)} reaches any member: counts it in
     * flight on its chunks and makes sure each chunk's bit is set on disk.
     */
    @Override
    public ConsistencyPolicy policy() {
        return ConsistencyPolicy.BITMAP;
    }

    /** The policy of {@code core}'s array when it is a write-intent bitmap, else null. */
    static WriteIntentBitmap in(ArrayCore core) {
        return core.consistency instanceof WriteIntentBitmap b ? b : null;
    }

    @Override
    public boolean mayBeInconsistent(long memberOffset, long len) {
        return dirty(memberOffset, len);
    }

    @Override
    public void startWrite(long memberOffset, int len) throws IOException {
        int base = row() * rowInts;
        int last = lastChunk(memberOffset, len);
        for (int c = firstChunk(memberOffset); c <= last; c++) {
            INTS.getAndAdd(inflight, base + c, 1); // a full fence: ordered before the flag read below
            int f = flagsOf(c);
            if ((f & AGED) != 0) {
                INTS.getAndBitwiseAnd(flags, c, ~AGED); // written again: the daemon starts its count over
            }
            if ((f & ON_DISK) == 0) {
                setOnDisk(c);
            }
        }
    }

    /**
     * {@link #startWrite} when every chunk's bit is already on disk; else the counts taken back and
     * false. Against the daemon this is startWrite's protocol: the count is raised (a full fence)
     * before the flag is read, so a clearing pass either sees the count and puts the bit back, or
     * cleared first and this sees the flag gone and backs out.
     */
    @Override
    public boolean tryStartWrite(long memberOffset, int len) {
        int base = row() * rowInts;
        int first = firstChunk(memberOffset);
        int last = lastChunk(memberOffset, len);
        for (int c = first; c <= last; c++) {
            INTS.getAndAdd(inflight, base + c, 1);
            int f = flagsOf(c);
            if ((f & ON_DISK) == 0) {
                for (int d = first; d <= c; d++) {
                    INTS.getAndAdd(inflight, base + d, -1);
                }
                return false;
            }
            if ((f & AGED) != 0) {
                INTS.getAndBitwiseAnd(flags, c, ~AGED);
            }
        }
        return true;
    }

    /** The bitmap keeps a write's bits when the write did not reach every member in sync. */
    @Override
    public boolean asksWhole() {
        return true;
    }

    /**
     * After the write: no longer in flight; a write that is not {@code whole} (it did not reach every
     * member) keeps the bits.
     */
    @Override
    public void endWrite(long memberOffset, int len, boolean whole, Logged logged, long wroteSlots) {
        boolean degraded = !whole;
        if (!degraded) {
            long now = events.getAsLong();
            if (eventsCleared < now) {
                eventsCleared = now; // md_bitmap_endwrite; a racing smaller store is raised by the next write
            }
        }
        int base = row() * rowInts;
        int last = lastChunk(memberOffset, len);
        for (int c = firstChunk(memberOffset); c <= last; c++) {
            if (degraded && (flagsOf(c) & NEEDED) == 0) {
                INTS.getAndBitwiseOr(flags, c, NEEDED);
            }
            INTS.getAndAdd(inflight, base + c, -1);
        }
    }

    private int inflightOf(int c) {
        int n = 0;
        for (int s = 0; s < stripes; s++) {
            n += (int) INTS.getVolatile(inflight, s * rowInts + c);
        }
        return n;
    }

    /** Sets chunk {@code c}'s bit on disk (on every live member, flushed), then marks it there. */
    private void setOnDisk(int c) throws IOException {
        int page = pageOf(c);
        List<Failure> failures = new ArrayList<>();
        synchronized (pageLocks[page]) {
            if ((flagsOf(c) & ON_DISK) != 0) {
                return;
            }
            writePage(page, c, failures);
            INTS.getAndBitwiseOr(flags, c, ON_DISK); // only now may writes to the chunk go without waiting
        }
        report(failures);
    }

    private int pageOf(int c) {
        return (int) ((BitmapSuperblock.BYTES + c / 8L) / PAGE);
    }

    // ------------------------------------------------------------------ the daemon

    /**
     * md's bitmap daemon, every {@code daemon_sleep}: a chunk idle at two passes in a row, not needed,
     * has its bit cleared; the pages that changed are written (superblock page first, with
     * {@code events_cleared}). Returns the number of bits cleared.
     */
    int daemonPass() throws IOException {
        boolean[] dirtyPages = new boolean[pageLocks.length];
        int cleared = 0;
        for (int c = 0; c < chunks; c++) {
            int f = flagsOf(c);
            if ((f & ON_DISK) == 0 || (f & NEEDED) != 0) {
                continue;
            }
            if (inflightOf(c) != 0) {
                if ((f & AGED) != 0) {
                    INTS.getAndBitwiseAnd(flags, c, ~AGED);
                }
                continue;
            }
            if ((f & AGED) == 0) {
                INTS.compareAndSet(flags, c, f, f | AGED);
                continue;
            }
            synchronized (pageLocks[pageOf(c)]) {
                if (!INTS.compareAndSet(flags, c, ON_DISK | AGED, 0)) {
                    continue; // a writer touched it (AGED gone) or it became NEEDED
                }
                if (inflightOf(c) != 0) {
                    INTS.getAndBitwiseOr(flags, c, ON_DISK); // a writer saw the bit still set: keep it
                    continue;
                }
            }
            dirtyPages[pageOf(c)] = true;
            cleared++;
        }
        if (cleared > 0 || eventsCleared != eventsClearedWritten) {
            List<Failure> failures = new ArrayList<>();
            synchronized (pageLocks[0]) {
                writePage(0, -1, failures);
            }
            for (int p = 1; p < dirtyPages.length; p++) {
                if (dirtyPages[p]) {
                    synchronized (pageLocks[p]) {
                        writePage(p, -1, failures);
                    }
                }
            }
            report(failures);
        }
        return cleared;
    }

    /** At a clean stop: every chunk not needed and idle gets its bit cleared now (md's bitmap flush). */
    void clearIdleBits() throws IOException {
        for (int c = 0; c < chunks; c++) {
            int f = flagsOf(c);
            if ((f & ON_DISK) != 0 && (f & NEEDED) == 0 && inflightOf(c) == 0) {
                INTS.getAndBitwiseOr(flags, c, AGED);
            }
        }
        daemonPass();
    }

    // ------------------------------------------------------------------ sync

    /** True if any chunk of {@code [memberOffset, +len)} has its bit set: resync or recovery must do it. */
    boolean dirty(long memberOffset, long len) {
        int last = lastChunk(memberOffset, len);
        for (int c = firstChunk(memberOffset); c <= last; c++) {
            if ((flagsOf(c) & (ON_DISK | NEEDED)) != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * A pass made every stripe consistent on every member: nothing is needed any more (the daemon may
     * clear). The marks degraded writes kept go, so a member that left before now may not be
     * re-added by the bitmap: {@code events_cleared} moves to now.
     */
    @Override
    public void allSynced() {
        eventsCleared = events.getAsLong();
        for (int c = 0; c < chunks; c++) {
            if ((flagsOf(c) & NEEDED) != 0) {
                INTS.getAndBitwiseAnd(flags, c, ~NEEDED);
            }
        }
    }

    // ------------------------------------------------------------------ pages

    /**
     * Writes the superblock page (with the array's events now) to every live member, as md's
     * {@code md_bitmap_update_sb} does after each superblock update; returns the members whose write
     * failed, for the caller (which holds the metadata lock) to fail.
     */
    List<Member> writeSuperblockLocked() {
        List<Failure> failures = new ArrayList<>();
        synchronized (pageLocks[0]) {
            writePage(0, -1, failures);
        }
        List<Member> failed = new ArrayList<>();
        for (Failure f : failures) {
            LOG.warn(
                    "{}: bitmap write to {} failed: {}",
                    core.name,
                    f.member().name(),
                    f.cause().getMessage());
            failed.add(f.member());
        }
        return failed;
    }

    /** Every page to one member (one joining the array). */
    @Override
    public void writeAreaTo(Member m) throws IOException {
        for (int p = 0; p < pageLocks.length; p++) {
            synchronized (pageLocks[p]) {
                ByteBuffer b = compose(p, -1);
                m.disk.write(areaStart + (long) p * PAGE, b, 0, pageBytes(p, m.disk.logicalBlockSize()));
            }
        }
        m.disk.flush();
    }

    /**
     * Caller holds the page's lock. The page as the flags say it is on disk, with {@code alsoSet}'s
     * bit (or -1) set too, written and flushed on every live member.
     */
    private void writePage(int page, int alsoSet, List<Failure> failures) {
        ByteBuffer b = compose(page, alsoSet);
        for (Member m : liveMembers()) {
            m.nrPending.get();
            try {
                m.disk.write(areaStart + (long) page * PAGE, b, 0, pageBytes(page, m.disk.logicalBlockSize()));
                m.disk.flush();
            } catch (IOException e) {
                failures.add(new Failure(m, e));
            } finally {
                m.nrPending.put();
            }
        }
    }

    private ByteBuffer compose(int page, int alsoSet) {
        ByteBuffer b = pageBuffers[page];
        if (b == null) {
            b = AlignedBuffers.allocate(PAGE);
            pageBuffers[page] = b;
        }
        for (int i = 0; i < PAGE; i += 8) {
            b.putLong(i, 0);
        }
        if (page == 0) {
            long cleared = eventsCleared;
            sb.events(events.getAsLong()).eventsCleared(cleared).encode(b, 0);
            eventsClearedWritten = cleared;
        }
        long firstBit = Math.max(0, (long) page * PAGE * 8 - BitmapSuperblock.BYTES * 8L);
        long lastBit = Math.min(chunks, (long) (page + 1) * PAGE * 8 - BitmapSuperblock.BYTES * 8L);
        for (long c = firstBit; c < lastBit; c++) {
            if ((flagsOf((int) c) & ON_DISK) != 0 || c == alsoSet) {
                long bit = c + BitmapSuperblock.BYTES * 8L - (long) page * PAGE * 8; // md's little-endian bit order
                int at = (int) (bit >>> 3);
                b.put(at, (byte) (b.get(at) | (1 << (bit & 7))));
            }
        }
        return b;
    }

    /**
     * md writes a bitmap page up to the bitmap's end rounded up to the member's logical block size
     * (md-bitmap.c's __write_sb_page); mdadm reserves the area rounded up to 4 KiB, so the bytes
     * past the end are ours at either block size.
     */
    private int pageBytes(int page, int blockSize) {
        long end = BitmapSuperblock.BYTES + (chunks + 7L) / 8;
        long left = end - (long) page * PAGE;
        return (int) Math.min(PAGE, (left + blockSize - 1) / blockSize * blockSize);
    }

    /**
     * The members that keep the bitmap: those in a slot or replacing one, not faulty. From the member
     * table, without the metadata lock (which may be held by whoever waits for this page's lock); a
     * member entering a slot gets every page first ({@link #writeAreaTo}).
     */
    private List<Member> liveMembers() {
        MemberTable t = core.table;
        List<Member> live = new ArrayList<>(t.width() * 2);
        for (Member[] row : new Member[][] {t.slots, t.replacements}) {
            for (Member m : row) {
                if (m != null && m.state != MemberState.FAULTY) {
                    live.add(m);
                }
            }
        }
        return live;
    }

    private record Failure(Member member, IOException cause) {}

    private void report(List<Failure> failures) throws IOException {
        for (Failure f : failures) {
            LOG.warn(
                    "{}: bitmap write to {} failed: {}",
                    core.name,
                    f.member().name(),
                    f.cause().getMessage());
            core.memberFailed(f.member(), f.cause());
        }
    }
}
