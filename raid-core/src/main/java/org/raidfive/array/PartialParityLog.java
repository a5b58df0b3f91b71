package org.raidfive.array;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.raidfive.disk.AlignedBuffers;
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
        Unit next = null;
        synchronized (log) {
            log.inFlight = null;
            log.recycle(unit);
            if (log.current != null && log.current.entries > 0) {
                next = log.current;
                log.inFlight = next;
                log.current = null;
            }
            log.wakeWaiters();
        }
        if (next != null) {
            submit(log, next);
        }
    }

    /** Writes the unit's header and partial parity where the log is, flushes, and lets its stripes go. */
    private void submit(MemberLog log, Unit unit) throws IOException {
        Member m = unit.member;
        try {
            if (m.state != MemberState.FAULTY) {
                unit.generation = generation.incrementAndGet();
                unit.seal();
                int bytes = PplHeader.SIZE + unit.ppBytes;
                long start = areaStart(m);
                long at = start;
                if (multiple(m.pplSize)) {
                    if (log.nextIn != m || start + areaBytes(m) - log.next < bytes) {
                        log.next = start; // a new member's area, or the rest of it cannot hold the unit: rewind
                        log.nextIn = m;
                    }
                    at = log.next;
                    log.next += bytes;
                }
                m.nrPending.get();
                try {
                    m.disk.write(at, unit.buffer, 0, bytes);
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
            synchronized (log) {
                unit.durable = true;
                log.wakeWaiters();
            }
        }
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

    /** md's {@code ppl_io_unit}: a header, the partial parity of its entries, its stripes in flight. */
    final class Unit implements Logged {
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
