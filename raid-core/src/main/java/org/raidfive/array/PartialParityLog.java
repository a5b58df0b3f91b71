package org.raidfive.array;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.raidfive.disk.AlignedBuffers;
import org.raidfive.disk.CompletionThread;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.IoThreads;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.PplHeader;
import org.raidfive.md.Superblock;

/**
 * md's partial parity log (consistency policy {@code ppl}, Linux {@code raid5-ppl.c}), the write
 * side: before a stripe's data and parity are written, the partial parity of the write (the XOR of
 * the data it leaves alone) is logged on the stripe's parity member and made durable; a crash then
 * leaves, for every stripe that may be half-written, what {@link PplRecovery} needs to make its
 * parity match its data again, degraded or not.
 *
 * <p>One log per slot, the PPL area of the member in it, independent of the others (no array-wide
 * lock). Entries gather in an io_unit: a 4 KiB {@link PplHeader} and the entries' partial parity
 * after it. As in md, at most one io_unit per log is in flight: it is written and flushed, then its
 * stripes write their data and parity, and only when all of them are done (and the members they
 * wrote flushed) may the next io_unit go, because a crash must find, as the newest header, every
 * stripe that may be torn. Stripes arriving meanwhile gather in the next io_unit (group commit): the
 * thread that finishes the in-flight unit's last stripe submits it, or, when none is in flight, the
 * thread that logs. With an area of at least two io_units (mdadm's 1 MiB) io_units go one after
 * another through the area and wrap (md's MULTIPLE_PPLS); else each overwrites the area's start.
 *
 * <p>A write running without a thread ({@link #logThen}, {@link #endWriteThen}) waits for nothing:
 * its entry joins a unit (or, when the gathering unit is full, the log's queue, which the next
 * unit takes first), it is run when its unit is durable, and the last stripe of a unit flushes the
 * members the unit wrote and submits the next unit with completion-based I/O; the write's callback
 * comes after those flushes, as a blocking stripe returns after them. Blocking and thread-less stripes share
 * the same units.
 *
 * <p>Each log's state is guarded by the log itself; a stripe holds its stripe lock while it waits,
 * which cannot deadlock: a unit's stripes wait only for the unit before, whose stripes are past
 * logging and wait for nothing. Units are allocated twice per log and recycled.
 */
final class PartialParityLog implements ConsistencyPort {
    private static final int SPINS = 2000;
    private final ArrayCore core;
    private final int signature;
    /** Partial parity bytes one io_unit carries at most: it fits the smallest member's area. */
    private final int entrySpace;
    /** md's {@code ppl_conf->seq}: io_unit generations, shared by the logs, from 1 at every start. */
    private final AtomicLong generation = new AtomicLong();

    private final MemberLog[] logs;

    /**
     * The log of an array whose members' PPL areas are at least {@code smallestAreaSectors} long
     * (each member's own area is in {@link Member#pplOffset}/{@link Member#pplSize}, as md keeps it
     * per device): an io_unit is sized so that it fits every member's area.
     */
    PartialParityLog(ArrayCore core, byte[] arrayUuid, int smallestAreaSectors) {
        this.core = core;
        this.signature = PplHeader.signature(arrayUuid);
        long smallest = areaBytes(smallestAreaSectors);
        if (smallest <= PplHeader.SIZE) {
            throw new IllegalArgumentException(
                    "PPL area of " + smallestAreaSectors + " sectors holds no partial parity");
        }
        this.entrySpace = multiple(smallestAreaSectors) ? PplHeader.SPACE_SIZE : (int) (smallest - PplHeader.SIZE);
        this.logs = new MemberLog[core.layout.disks()];
        for (int i = 0; i < logs.length; i++) {
            logs[i] = new MemberLog();
        }
    }

    /** Usable bytes of an area of {@code sizeSectors}: a header and whole 4 KiB pages (md's {@code ppl_validate_rdev}). */
    static long areaBytes(int sizeSectors) {
        long data = (sizeSectors * 512L - PplHeader.SIZE) / 4096 * 4096;
        return data <= 0 ? 0 : PplHeader.SIZE + data;
    }

    /** True when md writes MULTIPLE_PPLS for an area of {@code sizeSectors} (room for two full io_units). */
    static boolean multiple(int sizeSectors) {
        return areaBytes(sizeSectors) >= 2L * (PplHeader.SPACE_SIZE + PplHeader.SIZE);
    }

    /** Bytes from the start of {@code m} to its PPL area. */
    static long areaStart(Member m) {
        return (Superblock.SUPERBLOCK_OFFSET_SECTORS + m.pplOffset) * 512L;
    }

    /** Usable bytes of {@code m}'s PPL area. */
    static long areaBytes(Member m) {
        return areaBytes(m.pplSize);
    }

    /**
     * The longest write piece whose partial parity one io_unit can take: pieces are widened to
     * whole 4 KiB pages for their partial parity, so this leaves a page on each side.
     */
    @Override
    public ConsistencyPolicy policy() {
        return ConsistencyPolicy.PPL;
    }

    @Override
    public boolean logsPartialParity() {
        return true;
    }

    /** A write starts at once; its wait for the log is in {@link #logThen}. */
    @Override
    public boolean tryStartWrite(long memberOffset, int len) {
        return true;
    }

    /** The policy of {@code core}'s array when it is a partial parity log, else null. */
    static PartialParityLog in(ArrayCore core) {
        return core.consistency instanceof PartialParityLog log ? log : null;
    }

    @Override
    public int maxPiece() {
        return Math.max(4096, Math.min(64 * 1024, entrySpace - 8192) / 4096 * 4096);
    }

    int signature() {
        return signature;
    }

    /**
     * Logs {@code entry} on {@code parity}'s log (slot {@code paritySlot}) and returns once it is
     * durable: the caller then writes the stripe's data and parity, and calls {@link #endWrite}
     * whatever happens. When the log has no io_unit in flight the stripe's unit goes at once and the
     * partial parity is computed straight into it; else it is computed into the entry's own buffer
     * and copied into the unit gathering (group commit). Its checksum is taken outside the log's lock.
     */
    @Override
    public Unit log(Member parity, int paritySlot, PartialParityEntry entry) throws IOException {
        int ppSize = entry.size;
        MemberLog log = logs[paritySlot];
        Unit unit;
        synchronized (log) {
            // The member of a slot changes only while the array is quiesced, when no unit gathers.
            // With no unit in flight none gathers either (the last stripe of one submits the next).
            if (log.inFlight == null) {
                unit = log.take(parity);
                unit.pending = 1;
                log.inFlight = unit;
            } else {
                unit = null;
            }
        }
        if (unit != null) {
            int checksum = 0; // md's for an entry without partial parity: ~(~0)
            try {
                if (ppSize > 0) {
                    entry.fill(unit.buffer, PplHeader.SIZE);
                    checksum = PplHeader.checksum(entry.crc, unit.buffer, PplHeader.SIZE, ppSize);
                }
            } catch (RuntimeException e) {
                finished(unit, 0); // the unit is this stripe's alone: give the log back before failing
                throw e;
            }
            unit.addFilled(entry, paritySlot, checksum);
            submit(log, unit);
            return unit;
        }
        int checksum = 0;
        if (ppSize > 0) {
            entry.fill(entry.partialParity, 0);
            checksum = PplHeader.checksum(entry.crc, entry.partialParity, 0, ppSize);
        }
        boolean submit = false;
        synchronized (log) {
            while (log.current != null && !log.current.fits(ppSize)) {
                try {
                    log.waiters++;
                    log.wait(); // full: it goes when the unit in flight is done
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while logging partial parity on " + parity.name());
                } finally {
                    log.waiters--;
                }
            }
            if (log.current == null) {
                log.current = log.take(parity);
            }
            unit = log.current;
            unit.addCopy(entry, paritySlot, checksum);
            unit.pending++;
            if (log.inFlight == null) {
                log.inFlight = unit;
                log.current = null;
                submit = true;
            }
        }
        if (submit) {
            submit(log, unit);
            return unit;
        }
        // From here the unit counts on this stripe's finished(): the wait must not be cut short by
        // an interrupt (it ends with the I/O of the unit before), which is kept for the caller. On
        // members that complete inline (memory) the unit in flight ends within microseconds: spin a
        // little before blocking. Elsewhere it ends after a write and flushes of milliseconds, and
        // dozens of waiters spinning would take the CPU from the I/O they wait for.
        for (int i = unit.spins; i > 0 && !unit.durable; i--) {
            Thread.onSpinWait();
        }
        boolean interrupted = false;
        synchronized (log) {
            while (!unit.durable) {
                try {
                    log.waiters++;
                    log.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                } finally {
                    log.waiters--;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return unit;
    }

    /**
     * {@link #log} without waiting: the partial parity is computed into the entry's own buffer and
     * copied into the unit it joins (the one going out now when the log has none in flight, else
     * the one gathering); when that unit is full, the entry waits in the log's queue, which the
     * next unit takes first.
     */
    @Override
    public void logThen(Member parity, int paritySlot, PartialParityEntry entry, LogWaiter waiter, boolean handOff) {
        int ppSize = entry.size;
        int checksum = 0;
        if (ppSize > 0) {
            entry.fill(entry.partialParity, 0);
            checksum = PplHeader.checksum(entry.crc, entry.partialParity, 0, ppSize);
        }
        MemberLog log = logs[paritySlot];
        Unit submit = null;
        synchronized (log) {
            Unit unit;
            if (log.inFlight == null) {
                unit = log.take(parity);
                log.inFlight = unit;
                submit = unit;
            } else if (log.current == null || log.current.fits(ppSize)) {
                if (log.current == null) {
                    log.current = log.take(parity);
                }
                unit = log.current;
            } else {
                log.enqueue(entry, parity, paritySlot, checksum, waiter, handOff);
                return;
            }
            unit.join(entry, paritySlot, checksum, waiter, handOff);
        }
        if (submit != null) {
            submitWithoutThread(log, submit);
        }
    }

    /**
     * {@link #endWrite} without waiting: the unit's last stripe starts the flushes of the members
     * the unit wrote and runs {@code then} when they are done (the next unit, if one gathered,
     * submitted first); any other stripe runs {@code then} at once.
     */
    @Override
    public void endWriteThen(long memberOffset, int len, boolean whole, Logged logged, long wroteSlots, Runnable then) {
        if (logged == null) {
            then.run();
            return;
        }
        Unit unit = (Unit) logged;
        synchronized (unit.log) {
            unit.wrote |= wroteSlots;
            if (--unit.pending > 0) {
                unit = null;
            }
        }
        if (unit == null) {
            then.run();
            return;
        }
        unit.flushWrittenThen(then);
    }

    /**
     * A stripe of {@code unit} wrote its data and parity (or gave up): {@code wroteSlots} is a mask of
     * the slots it wrote. The unit's last stripe flushes the members the unit wrote and submits the
     * next unit of the log, if one gathered.
     */
    @Override
    public void endWrite(long memberOffset, int len, boolean whole, Logged logged, long wroteSlots) throws IOException {
        if (logged != null) {
            finished((Unit) logged, wroteSlots);
        }
    }

    void finished(Unit unit, long wroteSlots) throws IOException {
        MemberLog log = unit.log;
        synchronized (log) {
            unit.wrote |= wroteSlots;
            if (--unit.pending > 0) {
                return;
            }
        }
        // md flushes the disks the io_unit's stripes wrote before the next io_unit may go: a crash
        // after it must not find their data or parity still in a volatile cache.
        Member[] s = core.table.slots;
        for (int i = 0; i < s.length; i++) {
            if ((unit.wrote & (1L << i)) != 0 && s[i] != null && s[i].state != MemberState.FAULTY) {
                flush(s[i]);
            }
        }
        Unit next = ended(unit);
        if (next != null) {
            submit(log, next);
        }
    }

    /**
     * {@code unit} is done (its stripes written, the members they wrote flushed): the log's next
     * unit, now in flight and to be submitted by the caller, is the one that gathered, topped up
     * from the queue (or made from the queue alone); null when nothing waits.
     */
    private Unit ended(Unit unit) {
        MemberLog log = unit.log;
        synchronized (log) {
            log.inFlight = null;
            log.recycle(unit);
            Unit next = log.current;
            log.current = null;
            if (next == null || next.entries == 0) {
                next = null;
                if (log.waitingHead != null) {
                    next = log.take(log.waitingHead.parity);
                }
            }
            if (next != null) {
                log.inFlight = next;
                log.joinWaiting(next);
                if (log.waitingHead != null) {
                    // the rest of the queue gathers in the unit after it, ahead of any newcomer
                    log.current = log.take(next.member);
                    log.joinWaiting(log.current);
                }
            }
            log.wakeWaiters();
            return next;
        }
    }

    /** Writes the unit's header and partial parity where the log is, flushes, and lets its stripes go. */
    private void submit(MemberLog log, Unit unit) throws IOException {
        Member m = unit.member;
        try {
            if (m.state != MemberState.FAULTY) {
                unit.generation = generation.incrementAndGet();
                unit.seal();
                long at = placeUnit(log, unit);
                m.nrPending.get();
                try {
                    m.disk.write(at, unit.buffer, 0, PplHeader.SIZE + unit.ppBytes);
                    m.disk.flush();
                } catch (IOException e) {
                    // md_error; the stripes go on (their parity member is faulty now, so their
                    // parity is not written and there is nothing to be torn)
                    core.memberFailedQuietly(m, e);
                } finally {
                    m.nrPending.put();
                }
            }
        } finally {
            unit.markDurable();
        }
    }

    /**
     * {@link #submit} with completion-based I/O, no thread waiting: the write, then the flush, then
     * the unit is durable ({@link Unit#ioDone}).
     */
    private void submitWithoutThread(MemberLog log, Unit unit) {
        Member m = unit.member;
        if (m.state == MemberState.FAULTY) {
            unit.markDurable();
            return;
        }
        unit.generation = generation.incrementAndGet();
        unit.seal();
        m.nrPending.get();
        m.async.writeAsync(placeUnit(log, unit), unit.buffer, 0, PplHeader.SIZE + unit.ppBytes, unit, Unit.LOG_WRITE);
    }

    /** Where {@code unit} goes in its member's area; advances the log's place (MULTIPLE_PPLS). */
    private static long placeUnit(MemberLog log, Unit unit) {
        Member m = unit.member;
        int bytes = PplHeader.SIZE + unit.ppBytes;
        long start = areaStart(m);
        if (!multiple(m.pplSize)) {
            return start;
        }
        if (log.nextIn != m || start + areaBytes(m) - log.next < bytes) {
            log.next = start; // a new member's area, or the rest of it cannot hold the unit: rewind
            log.nextIn = m;
        }
        long at = log.next;
        log.next += bytes;
        return at;
    }

    private void flush(Member m) throws IOException {
        m.nrPending.get();
        try {
            m.disk.flush();
        } catch (IOException e) {
            core.memberFailedQuietly(m, e);
        } finally {
            m.nrPending.put();
        }
    }

    /**
     * Zeroes every live slot member's PPL area and writes an empty header at its start, as md does
     * when it starts an array (and mdadm when it creates one): no header from an earlier run can be
     * taken for a newer one.
     */
    void writeEmptyHeaders() throws IOException {
        for (Member m : core.table.slots) {
            if (m != null && m.state != MemberState.FAULTY) {
                writeEmptyHeader(m);
            }
        }
    }

    /** {@link #writeEmptyHeaders} for one member (one joining the array). */
    @Override
    public void writeAreaTo(Member m) throws IOException {
        writeEmptyHeader(m);
    }

    void writeEmptyHeader(Member m) throws IOException {
        writeEmptyArea(m.disk, areaStart(m), areaBytes(m), signature);
    }

    static void writeEmptyArea(MemberDisk disk, long areaStart, long areaBytes, int signature) throws IOException {
        ByteBuffer zeros = AlignedBuffers.allocate(64 * 1024);
        for (long done = 0; done < areaBytes; done += zeros.capacity()) {
            disk.write(areaStart + done, zeros, 0, (int) Math.min(zeros.capacity(), areaBytes - done));
        }
        ByteBuffer h = AlignedBuffers.allocate(PplHeader.SIZE);
        PplHeader.begin(h, signature, 0);
        PplHeader.seal(h, 0, new CRC32C());
        disk.write(areaStart, h, 0, PplHeader.SIZE);
        disk.flush();
    }

    /**
     * One member's log: the unit gathering entries and the unit in flight. Guarded by itself. At most
     * two units are alive (one in flight, one gathering), so two are made, once, and reused.
     */
    private final class MemberLog {
        Unit current;
        Unit inFlight;
        /** Threads in {@code wait()} on this log: a notify costs a call into the VM, made only for them. */
        int waiters;

        private final Unit[] free = new Unit[2];
        private int freeCount;
        /** Where the next io_unit goes in {@link #nextIn}'s area (MULTIPLE_PPLS). */
        long next;

        Member nextIn;
        /** Entries of writes without a thread that found the gathering unit full, oldest first. */
        Waiting waitingHead;

        private Waiting waitingTail;
        /** Queue nodes given back, reused (made only when more wait at once than ever before). */
        private Waiting spareNodes;

        void enqueue(
                PartialParityEntry entry,
                Member parity,
                int paritySlot,
                int checksum,
                LogWaiter waiter,
                boolean handOff) {
            Waiting w = spareNodes;
            if (w == null) {
                w = new Waiting();
            } else {
                spareNodes = w.next;
            }
            w.entry = entry;
            w.parity = parity;
            w.paritySlot = paritySlot;
            w.checksum = checksum;
            w.waiter = waiter;
            w.handOff = handOff;
            w.next = null;
            if (waitingTail == null) {
                waitingHead = w;
            } else {
                waitingTail.next = w;
            }
            waitingTail = w;
        }

        /** Moves queued entries into {@code unit}, oldest first, while they fit. */
        void joinWaiting(Unit unit) {
            Waiting w;
            while ((w = waitingHead) != null && unit.fits(w.entry.size)) {
                waitingHead = w.next;
                if (waitingHead == null) {
                    waitingTail = null;
                }
                unit.join(w.entry, w.paritySlot, w.checksum, w.waiter, w.handOff);
                w.entry = null;
                w.parity = null;
                w.waiter = null;
                w.next = spareNodes;
                spareNodes = w;
            }
        }

        Unit take(Member member) {
            Unit u = freeCount > 0 ? free[--freeCount] : new Unit(this);
            free[freeCount] = null;
            u.reset(member);
            return u;
        }

        void wakeWaiters() {
            if (waiters > 0) {
                notifyAll();
            }
        }

        void recycle(Unit u) {
            u.member = null;
            if (freeCount < free.length) {
                free[freeCount++] = u;
            }
        }
    }

    /** A write without a thread waiting in its log's queue for room in an io_unit (guarded by the log). */
    private static final class Waiting {
        PartialParityEntry entry;
        Member parity;
        int paritySlot;
        int checksum;
        LogWaiter waiter;
        boolean handOff;
        Waiting next;
    }

    /** md's {@code ppl_io_unit}: a header, the partial parity of its entries, its stripes in flight. */
    final class Unit implements Logged, IoCallback {
        static final int LOG_WRITE = -1;
        static final int LOG_FLUSH = -2;
        final MemberLog log;
        final ByteBuffer buffer = AlignedBuffers.allocate(PplHeader.SIZE + entrySpace);
        /** Used by the unit's submitter, for the header's checksum. */
        private final CRC32C crc = new CRC32C();

        Member member;
        /** The entries in the header; at {@link #reset}, those of the unit's last use, which it clears. */
        int entries;

        int ppBytes;
        int pending;
        long wrote;
        long generation;
        /** Set (under the log's lock) when the unit is on disk; read without it while spinning. */
        volatile boolean durable;
        /** How long a stripe waiting for the unit spins before it blocks: see {@link #log}. */
        int spins;
        /** The writes without a thread in the unit, run when it is durable (each handed off or not). */
        private final LogWaiter[] waiting = new LogWaiter[PplHeader.MAX_ENTRIES];

        private final boolean[] handOff = new boolean[PplHeader.MAX_ENTRIES];
        private int waitingCount;
        /** The members the last stripe's {@link #flushWrittenThen} flushes, by slot, and their errors. */
        private final Member[] flushing = new Member[core.layout.disks()];

        private final IOException[] flushErrors = new IOException[core.layout.disks()];
        private final AtomicInteger flushesLeft = new AtomicInteger();
        private Runnable afterFlushes;
        // The steps that submit, for a completion on a connection's reader, which must not.
        private final Runnable flushLog = this::flushLog;
        private final Runnable endFlushed = this::endFlushed;

        Unit(MemberLog log) {
            this.log = log;
            PplHeader.begin(buffer, signature, 0); // once: a reused header keeps its reserved bytes and signature
        }

        void reset(Member m) {
            member = m;
            spins = m.async.completesInline() ? SPINS : 0;
            PplHeader.clearEntries(buffer, entries);
            entries = 0;
            ppBytes = 0;
            pending = 0;
            wrote = 0;
            durable = false;
            waitingCount = 0;
        }

        /** Adds a write without a thread's entry (under the log's lock) and tells it so. */
        void join(PartialParityEntry entry, int paritySlot, int checksum, LogWaiter waiter, boolean handOff) {
            addCopy(entry, paritySlot, checksum);
            pending++;
            this.waiting[waitingCount] = waiter;
            this.handOff[waitingCount] = handOff;
            waitingCount++;
            waiter.joined(this);
        }

        /**
         * The unit is on disk: its blocking stripes woken, its writes without a thread run. Its
         * pending count holds those until each has ended, so the unit is not reused meanwhile.
         */
        void markDurable() {
            int n;
            synchronized (log) {
                durable = true;
                log.wakeWaiters();
                n = waitingCount;
            }
            for (int i = 0; i < n; i++) {
                LogWaiter w = waiting[i];
                waiting[i] = null;
                if (handOff[i]) {
                    IoThreads.runContinuation(w);
                } else {
                    w.run();
                }
            }
        }

        /**
         * The unit's last stripe has ended: flushes the members the unit wrote, all at once; when
         * they are done the next unit goes and {@code then} runs.
         */
        void flushWrittenThen(Runnable then) {
            afterFlushes = then;
            Member[] s = core.table.slots;
            int n = 0;
            for (int i = 0; i < s.length; i++) {
                Member m = (wrote & (1L << i)) != 0 ? s[i] : null;
                if (m != null && m.state != MemberState.FAULTY) {
                    flushing[i] = m;
                    n++;
                }
            }
            flushesLeft.set(n + 1); // one for this issuer, so that a flush completing inline cannot end the unit early
            for (int i = 0; i < s.length; i++) {
                Member m = flushing[i];
                if (m != null) {
                    m.nrPending.get();
                    m.async.flushAsync(this, i);
                }
            }
            if (flushesLeft.decrementAndGet() == 0) {
                flushed();
            }
        }

        @Override
        public void ioDone(int tag, IOException error) {
            if (tag >= 0) {
                flushing[tag].nrPending.put();
                flushErrors[tag] = error;
                if (flushesLeft.decrementAndGet() == 0) {
                    flushed();
                }
                return;
            }
            Member m = member;
            if (error == null && tag == LOG_WRITE) {
                if (CompletionThread.isCurrent()) {
                    IoThreads.runContinuation(flushLog);
                } else {
                    flushLog();
                }
                return;
            }
            m.nrPending.put();
            if (error == null) {
                markDurable();
                return;
            }
            // md_error, which writes the others' superblocks: on an I/O thread, never on a completion's.
            // The stripes go on (their parity member is faulty now: no parity written, nothing torn).
            IoThreads.runBlocking(() -> {
                try {
                    core.memberFailedQuietly(m, error);
                } catch (IOException | RuntimeException e) {
                    // recorded in the array's failure, which the stripes check
                } finally {
                    markDurable();
                }
            });
        }

        /** Every flush of {@link #flushWrittenThen} is done: a member whose flush failed is failed (on an I/O thread). */
        private void flushed() {
            boolean failed = false;
            for (IOException e : flushErrors) {
                failed |= e != null;
            }
            if (!failed) {
                if (CompletionThread.isCurrent()) {
                    IoThreads.runContinuation(endFlushed);
                } else {
                    endFlushed();
                }
                return;
            }
            IoThreads.runBlocking(() -> {
                try {
                    for (int i = 0; i < flushErrors.length; i++) {
                        if (flushErrors[i] != null) {
                            core.memberFailedQuietly(flushing[i], flushErrors[i]);
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // recorded in the array's failure, which the stripes check
                } finally {
                    endFlushed();
                }
            });
        }

        private void flushLog() {
            member.async.flushAsync(this, LOG_FLUSH);
        }

        private void endFlushed() {
            Runnable then = afterFlushes;
            afterFlushes = null;
            java.util.Arrays.fill(flushing, null);
            java.util.Arrays.fill(flushErrors, null);
            Unit next = ended(this); // this unit is another's from here on
            if (next != null) {
                submitWithoutThread(log, next);
            }
            then.run();
        }

        boolean fits(int ppSize) {
            return entries < PplHeader.MAX_ENTRIES && ppBytes + ppSize <= entrySpace;
        }

        /** Adds {@code entry}, whose partial parity its stripe copies in (under the log's lock). */
        void addCopy(PartialParityEntry entry, int paritySlot, int checksum) {
            if (entry.size > 0) {
                buffer.put(PplHeader.SIZE + ppBytes, entry.partialParity, 0, entry.size);
            }
            addFilled(entry, paritySlot, checksum);
        }

        /** Adds {@code entry}, whose partial parity is already in place after the others'. */
        void addFilled(PartialParityEntry entry, int paritySlot, int checksum) {
            PplHeader.entry(buffer, entries, entry.dataSector, entry.size, entry.dataSize, paritySlot, checksum);
            entries++;
            ppBytes += entry.size;
        }

        void seal() {
            buffer.putLong(PplHeader.RESERVED + 8, generation);
            PplHeader.sealZeroTail(buffer, entries, crc);
        }
    }
}
