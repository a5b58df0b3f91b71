package org.raidfive.array;

import java.io.IOException;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.agrona.concurrent.status.AtomicCounter;
import org.raidfive.counter.ThreadStats;
import org.raidfive.stats.CountersFile;
import org.raidfive.stats.Stat;

/**
 * Publishes an array's live counters and events to a {@link CountersFile} for other processes
 * ({@code raid stat}, {@code raid monitor}); made by {@link Raid5Array#publishCounters}.
 *
 * <p>The I/O path only adds to per-thread cells ({@link ThreadStats}: the thread's own cache line, no
 * shared write); a daemon thread sums them every {@value #TICK_MILLIS} ms into the file's counters,
 * with the gauges (nr_pending, active_aligned_reads, states, the pass's position and rate). Events
 * are forwarded from the array's event thread into the file's broadcast buffer as they happen.
 * Closing stops publishing, turns the cells off and deletes the file.
 */
public final class ArrayCounters extends CountersPublisher {
    private final Raid5Array array;
    private final ArrayCore core;
    private final ThreadStats arrayStats = new ThreadStats(IoStats.ARRAY_WIDTH);
    private final AtomicCounter reads;
    private final AtomicCounter writes;
    private final AtomicCounter readBytes;
    private final AtomicCounter writeBytes;
    private final AtomicCounter errors;
    private final AtomicCounter activeAlignedReads;
    private final AtomicCounter lockWaits;
    private final AtomicCounter syncPosition;
    private final AtomicCounter syncTotal;
    private final AtomicCounter syncRate;
    private final AtomicCounter state;
    private final AtomicCounter events;
    private final Map<Member, MemberCounters> members = new IdentityHashMap<>();

    private final class MemberCounters {
        final Member member;
        final ThreadStats stats = new ThreadStats(IoStats.MEMBER_WIDTH);
        final AtomicCounter reads;
        final AtomicCounter writes;
        final AtomicCounter readBytes;
        final AtomicCounter writeBytes;
        final AtomicCounter errors;
        final AtomicCounter corrected;
        final AtomicCounter nrPending;
        final AtomicCounter state;
        final AtomicCounter slot;

        MemberCounters(Member m) {
            this.member = m;
            String scope = m.name();
            reads = file.newCounter(scope, Stat.READS);
            writes = file.newCounter(scope, Stat.WRITES);
            readBytes = file.newCounter(scope, Stat.READ_BYTES);
            writeBytes = file.newCounter(scope, Stat.WRITE_BYTES);
            errors = file.newCounter(scope, Stat.ERRORS);
            corrected = file.newCounter(scope, Stat.CORRECTED_READ_SECTORS);
            nrPending = file.newCounter(scope, Stat.NR_PENDING);
            state = file.newCounter(scope, Stat.STATE);
            slot = file.newCounter(scope, Stat.SLOT);
            m.stats = stats;
        }

        void update(boolean present) {
            reads.setRelease(stats.sum(IoStats.READS));
            writes.setRelease(stats.sum(IoStats.WRITES));
            readBytes.setRelease(stats.sum(IoStats.READ_BYTES));
            writeBytes.setRelease(stats.sum(IoStats.WRITE_BYTES));
            errors.setRelease(stats.sum(IoStats.ERRORS));
            corrected.setRelease(member.correctedSectors.get());
            nrPending.setRelease(Math.max(0, member.nrPending.count()));
            state.setRelease(present ? stateCode(member.state) : 4);
            slot.setRelease(member.state == MemberState.SPARE ? -1 : member.slot);
        }
    }

    private ArrayCounters(Raid5Array array, CountersFile file) {
        super(file, array.core.name);
        this.array = array;
        this.core = array.core;
        String scope = "array";
        reads = file.newCounter(scope, Stat.READS);
        writes = file.newCounter(scope, Stat.WRITES);
        readBytes = file.newCounter(scope, Stat.READ_BYTES);
        writeBytes = file.newCounter(scope, Stat.WRITE_BYTES);
        errors = file.newCounter(scope, Stat.ERRORS);
        activeAlignedReads = file.newCounter(scope, Stat.ACTIVE_ALIGNED_READS);
        lockWaits = file.newCounter(scope, Stat.STRIPE_LOCK_WAITS);
        syncPosition = file.newCounter(scope, Stat.SYNC_POSITION_BYTES);
        syncTotal = file.newCounter(scope, Stat.SYNC_TOTAL_BYTES);
        syncRate = file.newCounter(scope, Stat.SYNC_RATE);
        state = file.newCounter(scope, Stat.STATE);
        events = file.newCounter(scope, Stat.EVENTS);
    }

    static ArrayCounters start(Raid5Array array, Path path) throws IOException {
        CountersFile file = CountersFile.create(path, array.core.name, array.uuid());
        ArrayCounters c = new ArrayCounters(array, file);
        c.begin();
        array.core.stats = c.arrayStats;
        array.core.locks.stats = c.arrayStats;
        array.addListener(c.forward);
        return c;
    }

    /** One publication of every counter; under this object's lock. */
    @Override
    void update() {
        reads.setRelease(arrayStats.sum(IoStats.READS));
        writes.setRelease(arrayStats.sum(IoStats.WRITES));
        readBytes.setRelease(arrayStats.sum(IoStats.READ_BYTES));
        writeBytes.setRelease(arrayStats.sum(IoStats.WRITE_BYTES));
        errors.setRelease(arrayStats.sum(IoStats.ERRORS));
        lockWaits.setRelease(arrayStats.sum(IoStats.LOCK_WAITS));
        activeAlignedReads.setRelease(Math.max(0, core.activeAlignedReads.count()));
        SyncProgress p = array.syncProgress();
        boolean running = p != null && p.running();
        syncPosition.setRelease(running ? p.doneBytes() : 0);
        syncTotal.setRelease(running ? p.totalBytes() : 0);
        syncRate.setRelease(running ? (long) p.bytesPerSecond() : 0);
        state.setRelease(array.isFailed() ? 3 : array.isDegraded() ? 2 : array.meta.dirty() ? 1 : 0);
        events.setRelease(eventCount.get());
        List<Member> now = array.allMembers();
        for (Member m : now) {
            members.computeIfAbsent(m, MemberCounters::new);
        }
        for (MemberCounters mc : members.values()) {
            mc.update(now.contains(mc.member));
        }
    }

    private static int stateCode(MemberState s) {
        switch (s) {
            case IN_SYNC:
                return 0;
            case REBUILDING:
                return 1;
            case SPARE:
                return 2;
            default:
                return 3;
        }
    }

    /** Turns the I/O path's counting off. */
    @Override
    void detach() {
        array.removeListener(forward);
        core.stats = null;
        core.locks.stats = null;
        for (Member m : members.keySet()) {
            m.stats = null;
        }
    }
}
