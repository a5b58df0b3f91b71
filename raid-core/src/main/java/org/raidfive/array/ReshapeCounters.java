package org.raidfive.array;

import java.io.IOException;
import java.nio.file.Path;
import org.agrona.concurrent.status.AtomicCounter;
import org.raidfive.counter.ThreadStats;
import org.raidfive.stats.CountersFile;
import org.raidfive.stats.Stat;

/**
 * Publishes a reshaping array's live counters and events to a {@link CountersFile}, in the form
 * {@link ArrayCounters} gives an array's, so that {@code raid stat}, {@code raid monitor} and {@code
 * raid stop} see an array mid-reshape as they see any other; made by {@link
 * OnlineReshape#publishCounters}. The array scope counts the reads and writes served, the pass is
 * the reshape ({@link Stat#RESHAPING} 1), and each member slot counts its I/O, the reshape's own and
 * the served; once the reshape has ended, no pass and {@link Stat#RESHAPING} 0. The I/O adds to
 * per-thread cells ({@link ThreadStats}); a daemon thread sums them every {@value
 * CountersPublisher#TICK_MILLIS} ms into the file. Closing stops it, turns the cells off and deletes
 * the file.
 */
public final class ReshapeCounters extends CountersPublisher {
    private final OnlineReshape online;
    private final OfflineReshape reshape;
    private final ThreadStats arrayStats = new ThreadStats(IoStats.ARRAY_WIDTH);
    private final ThreadStats[] memberStats;
    /** Per array and per slot: one counter per {@link Stat} published, by the stat's ordinal. */
    private final AtomicCounter[] array;

    private final AtomicCounter[][] members;

    private static final Stat[] ARRAY_STATS = {
        Stat.READS,
        Stat.WRITES,
        Stat.READ_BYTES,
        Stat.WRITE_BYTES,
        Stat.ERRORS,
        Stat.SYNC_POSITION_BYTES,
        Stat.SYNC_TOTAL_BYTES,
        Stat.SYNC_RATE,
        Stat.STATE,
        Stat.EVENTS,
        Stat.RESHAPING
    };
    private static final Stat[] MEMBER_STATS = {
        Stat.READS, Stat.WRITES, Stat.READ_BYTES, Stat.WRITE_BYTES, Stat.ERRORS, Stat.STATE, Stat.SLOT
    };

    private ReshapeCounters(OnlineReshape online, OfflineReshape reshape, CountersFile file) {
        super(file, reshape.name());
        this.online = online;
        this.reshape = reshape;
        this.array = counters("array", ARRAY_STATS);
        int slots = reshape.slotCount();
        this.memberStats = new ThreadStats[slots];
        this.members = new AtomicCounter[slots][];
        for (int s = 0; s < slots; s++) {
            memberStats[s] = new ThreadStats(IoStats.MEMBER_WIDTH);
            String name = reshape.slotName(s);
            members[s] = counters(name != null ? name : "slot " + s, MEMBER_STATS);
        }
    }

    private AtomicCounter[] counters(String scope, Stat[] stats) {
        AtomicCounter[] byStat = new AtomicCounter[Stat.values().length];
        for (Stat s : stats) {
            byStat[s.ordinal()] = file.newCounter(scope, s);
        }
        return byStat;
    }

    static ReshapeCounters start(OnlineReshape online, OfflineReshape reshape, Path path) throws IOException {
        CountersFile file = CountersFile.create(path, reshape.name(), reshape.uuid());
        ReshapeCounters c = new ReshapeCounters(online, reshape, file);
        c.begin();
        online.ioStats = c.arrayStats;
        reshape.countMemberIo(c.memberStats);
        online.addListener(c.forward);
        return c;
    }

    /** One publication of every counter; under this object's lock. */
    @Override
    void update() {
        set(array, Stat.READS, arrayStats.sum(IoStats.READS));
        set(array, Stat.WRITES, arrayStats.sum(IoStats.WRITES));
        set(array, Stat.READ_BYTES, arrayStats.sum(IoStats.READ_BYTES));
        set(array, Stat.WRITE_BYTES, arrayStats.sum(IoStats.WRITE_BYTES));
        set(array, Stat.ERRORS, arrayStats.sum(IoStats.ERRORS));
        SyncProgress p = online.progress();
        // once the reshape has ended the array is served in its new shape, with no pass (as md's)
        boolean ended = online.completion().isDone();
        set(array, Stat.SYNC_POSITION_BYTES, ended ? 0 : p.doneBytes());
        set(array, Stat.SYNC_TOTAL_BYTES, ended ? 0 : p.totalBytes());
        set(array, Stat.SYNC_RATE, p.running() ? (long) p.bytesPerSecond() : 0);
        boolean failed = online.completion().isCompletedExceptionally();
        // raid stat's codes: 3 failed, 2 degraded, 1 active (written, or a resync due), 0 clean
        set(array, Stat.STATE, failed ? 3 : reshape.missingMember() != null ? 2 : reshape.dirtied() ? 1 : 0);
        set(array, Stat.EVENTS, eventCount.get());
        set(array, Stat.RESHAPING, ended ? 0 : 1);
        for (int s = 0; s < members.length; s++) {
            ThreadStats st = memberStats[s];
            AtomicCounter[] m = members[s];
            set(m, Stat.READS, st.sum(IoStats.READS));
            set(m, Stat.WRITES, st.sum(IoStats.WRITES));
            set(m, Stat.READ_BYTES, st.sum(IoStats.READ_BYTES));
            set(m, Stat.WRITE_BYTES, st.sum(IoStats.WRITE_BYTES));
            set(m, Stat.ERRORS, st.sum(IoStats.ERRORS));
            set(m, Stat.STATE, reshape.slotMissing(s) ? 3 : 0);
            set(m, Stat.SLOT, s);
        }
    }

    private static void set(AtomicCounter[] byStat, Stat stat, long value) {
        byStat[stat.ordinal()].setRelease(value);
    }

    /** Turns the counting off. */
    @Override
    void detach() {
        online.removeListener(forward);
        online.ioStats = null;
        reshape.countMemberIo(null);
    }
}
