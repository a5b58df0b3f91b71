package org.raidfive.array;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.ClaimMode;
import org.raidfive.disk.DiskClaim;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Membership changes: fail, hot-remove, hot-add, a replacement joining, a spare taking an empty
 * slot, a finished replacement taking over its slot. Each change that touches the member table runs
 * quiesced ({@link #quiesce}: the configuration write side held, the aligned-read counter exact at
 * zero) and under the metadata lock, builds a new {@link MemberTable} and writes the superblocks
 * before anything acts on it.
 *
 * <p>Lock order, outermost first: the recovery conductor's lock, the configuration write side,
 * {@code meta.lock}. A member leaving the array is drained first: its {@code nr_pending} switches to
 * atomic mode and is waited down to an exact zero, so no I/O is in flight on it when it goes.
 */
final class Membership {
    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);

    private final ArrayCore core;
    private final ArrayMetadata meta;

    Membership(ArrayCore core, ArrayMetadata meta) {
        this.core = core;
        this.meta = meta;
    }

    /** A configuration change run while quiesced. */
    @FunctionalInterface
    interface IoAction {
        void run() throws IOException, InterruptedException;
    }

    /** Runs {@code change} with all I/O drained and held back, and the aligned-read counter exact. */
    void quiesce(IoAction change) throws IOException {
        lockConfiguration("change its configuration");
        Duration drainTimeout = core.drainTimeout;
        try {
            core.activeAlignedReads.switchToAtomicSync();
            try {
                if (!core.activeAlignedReads.awaitZero(drainTimeout)) {
                    throw new IOException(core.name + ": aligned reads did not drain within " + seconds(drainTimeout));
                }
                change.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while quiescing " + core.name);
            } finally {
                if (core.counterMode != CounterMode.ATOMIC) {
                    core.activeAlignedReads.switchToPercpu();
                }
            }
        } finally {
            core.config.writeUnlock();
        }
    }

    /**
     * Takes the configuration write side, waiting at most the drain timeout for the I/O that holds
     * the read side: a member I/O that never completes becomes an error naming the member instead of
     * a hang. Nothing has changed when this throws; I/O held back meanwhile goes on.
     */
    void lockConfiguration(String purpose) throws IOException {
        Duration timeout = core.drainTimeout;
        try {
            if (!core.config.tryWriteLock(timeout)) {
                throw new IOException(core.name + ": cannot " + purpose + ": I/O in flight did not finish within "
                        + seconds(timeout) + "; " + inFlight());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(core.name + ": interrupted while waiting for I/O in flight to " + purpose);
        }
    }

    /** The members with I/O in flight now (a moving count: for the message of a drain that timed out). */
    private String inFlight() {
        StringBuilder on = new StringBuilder();
        for (Member m : allMembers()) {
            long pending = m.nrPending.count();
            if (pending > 0) {
                on.append(on.length() == 0 ? "in flight on " : ", ")
                        .append(m.name())
                        .append(" (")
                        .append(pending)
                        .append(pending == 1 ? " I/O)" : " I/Os)");
            }
        }
        return on.length() == 0 ? "no member I/O is in flight (an I/O is held up inside the array)" : on.toString();
    }

    static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }

    Member find(MemberDisk disk) {
        synchronized (meta.lock) {
            for (Member m : meta.members) {
                if (m.disk == disk) {
                    return m;
                }
            }
        }
        throw new IllegalArgumentException(disk.name() + " is not a member of " + core.name);
    }

    /**
     * A joining member's areas besides its superblock: the bad block log, an empty partial parity
     * log (md's ppl_modify_log when a member joins) and the bitmap as it is now (kept current from
     * here on). Written quiesced, once the join can no longer be refused for I/O in flight, so a
     * refused add writes nothing to the disk.
     */
    private void writeJoiningAreas(Member m) throws IOException {
        SuperblockIo.initBadBlockLog(meta, m);
        core.consistency.writeAreaTo(m);
    }

    /** Every member not marked faulty: in a slot, replacing one, or spare. */
    List<Member> liveMembers() {
        synchronized (meta.lock) {
            List<Member> live = new ArrayList<>(meta.members.size());
            for (Member m : meta.members) {
                if (m.state != MemberState.FAULTY) {
                    live.add(m);
                }
            }
            return live;
        }
    }

    /** Every member the array knows, faulty ones included. */
    List<Member> allMembers() {
        synchronized (meta.lock) {
            return new ArrayList<>(meta.members);
        }
    }

    /** Flushes every live member; one whose flush fails is failed. Goes on whatever happens to the array. */
    void flushLiveMembers() throws IOException {
        for (Member m : liveMembers()) {
            try {
                m.disk.flush();
            } catch (IOException e) {
                core.memberFailedQuietly(m, e);
            }
        }
    }

    /** Marks a member faulty on request, as {@code mdadm --fail} does. */
    void fail(Member m) throws IOException {
        LOG.info("{}: failing {} on request", core.name, m.name());
        try {
            core.memberFailed(m, new IOException("failed on request"));
        } catch (ArrayFailedException e) {
            LOG.error("{}: failing {} failed the array", core.name, m.name());
            throw e;
        }
    }

    /** md's hot-remove of a faulty or spare member: drained, dropped from the table and metadata, closed. */
    void remove(Member m) throws IOException {
        quiesce(() -> {
            if (m.state != MemberState.FAULTY && m.state != MemberState.SPARE) {
                throw new ArrayStateException(m.name() + " is " + m.state.name().toLowerCase(Locale.ROOT) + " in "
                        + core.name + "; only a faulty or spare member can be removed (fail it first)");
            }
            detach(m);
        });
        close(m);
    }

    /** md's hot-add: the spare joins the metadata; superblocks written at once. */
    void addSpare(Member spare) throws IOException {
        try {
            quiesce(() -> {
                synchronized (meta.lock) {
                    writeJoiningAreas(spare);
                    meta.members.add(spare);
                    meta.writeAll();
                }
            });
        } catch (IOException | RuntimeException e) {
            releaseUnlessMember(spare);
            throw e;
        }
        LOG.info("{}: added spare {}", core.name, spare.name());
        core.events.publish(ArrayEvent.Kind.SPARE_ADDED, spare.name(), null, null);
    }

    /** {@code target} starts building beside {@code old}'s slot (md's replace). */
    void addReplacement(Member old, Member target) throws IOException {
        quiesce(() -> {
            synchronized (meta.lock) {
                writeJoiningAreas(target);
                target.slot = old.slot;
                target.state = MemberState.REBUILDING;
                target.recoveryOffset = 0;
                core.table = core.table.withReplacement(old.slot, target);
                meta.members.add(target);
                meta.writeAll();
            }
        });
    }

    /**
     * A spare takes the first empty or faulty slot (the faulty member is removed), to be rebuilt;
     * null when there is no spare or no such slot.
     */
    Member takeSpareIntoMissingSlot() throws IOException {
        synchronized (meta.lock) {
            if (meta.members.stream().noneMatch(m -> m.state == MemberState.SPARE) || !isDegraded()) {
                return null;
            }
        }
        Member[] chosen = new Member[1];
        quiesce(() -> {
            Member spare = null;
            int slot = -1;
            Member faulty = null;
            synchronized (meta.lock) {
                for (Member m : meta.members) {
                    if (m.state == MemberState.SPARE) {
                        spare = m;
                        break;
                    }
                }
                Member[] s = core.table.slots;
                for (int i = 0; i < s.length && spare != null; i++) {
                    if (s[i] == null || s[i].state == MemberState.FAULTY) {
                        slot = i;
                        faulty = s[i];
                        break;
                    }
                }
            }
            if (spare == null || slot < 0) {
                return;
            }
            if (faulty != null) {
                detach(faulty);
                close(faulty);
            }
            WriteIntentBitmap bitmap = WriteIntentBitmap.in(core);
            if (bitmap != null) {
                bitmap.writeAreaTo(spare); // it keeps the bitmap from now on
            }
            synchronized (meta.lock) {
                spare.slot = slot;
                spare.recoveryOffset = 0;
                spare.state = MemberState.REBUILDING;
                core.table = core.table.withSlot(slot, spare);
                meta.writeAll();
            }
            chosen[0] = spare;
        });
        return chosen[0];
    }

    /** The target of a finished rebuild holds everything: it is in sync; a replacement takes its slot and the old member goes. */
    void recovered(Member target) throws IOException {
        Member[] replaced = new Member[1];
        quiesce(() -> {
            synchronized (meta.lock) {
                int slot = target.slot;
                if (core.table.replacements[slot] == target) {
                    Member old = core.table.slots[slot];
                    core.table = core.table.promoteReplacement(slot);
                    if (old != null) {
                        old.state = MemberState.FAULTY;
                        replaced[0] = old;
                    }
                }
                target.state = MemberState.IN_SYNC;
                target.recoveryOffset = core.layout.memberBytesUsed();
                meta.writeAll();
            }
            if (replaced[0] != null) {
                detach(replaced[0]);
            }
        });
        if (replaced[0] != null) {
            close(replaced[0]);
        }
        LOG.info("{}: {} is in sync", core.name, target.name());
    }

    /**
     * md's re-add (see {@link Raid5Array#reAdd}): the former member takes its slot back, as a member
     * being rebuilt, by the bitmap where md's rule allows it.
     */
    ReAddOutcome reAdd(MemberDisk disk) throws IOException {
        Superblock sb;
        try {
            sb = SuperblockIo.read(disk);
        } catch (SuperblockException e) {
            throw new ArrayConfigException(disk.name() + " cannot be re-added: " + e.getMessage(), e);
        }
        if (!Arrays.equals(sb.setUuid(), meta.uuid)) {
            throw new ArrayConfigException(disk.name() + " was not a member of " + core.name + " (array UUID "
                    + MdUuid.format(sb.setUuid()) + "); add it as a spare instead");
        }
        int slot = sb.role();
        if (slot < 0 || slot >= core.layout.disks()) {
            throw new ArrayConfigException(disk.name() + " was not in a slot of " + core.name
                    + " (its role is spare or faulty); add it as a spare instead");
        }
        if (sb.dataOffset() * 512 != firstDataOffset()) {
            throw new ArrayConfigException(disk.name() + "'s data offset (" + sb.dataOffset() + " sectors) differs "
                    + "from the array's; add it as a spare instead");
        }
        ReAddOutcome[] out = new ReAddOutcome[1];
        quiesce(() -> {
            Member old = core.table.slots[slot];
            if (old != null && old.state != MemberState.FAULTY) {
                throw new ArrayConfigException("slot " + slot + " of " + core.name + " is held by " + old.name() + "; "
                        + disk.name() + " cannot take it back");
            }
            WriteIntentBitmap bitmap = WriteIntentBitmap.in(core);
            long events = sb.events();
            String why = null;
            if (bitmap == null) {
                why = core.name + " has no write-intent bitmap";
            } else if (Long.compareUnsigned(events, bitmap.eventsCleared()) < 0) {
                why = disk.name() + " left at events " + Long.toUnsignedString(events) + ", before bits were last "
                        + "cleared (events_cleared " + bitmap.eventsCleared() + "): the writes it missed may no "
                        + "longer be marked";
            } else if (Long.compareUnsigned(events, meta.events()) > 0) {
                why = disk.name() + "'s events (" + Long.toUnsignedString(events) + ") are newer than the array's";
            }
            if (old != null) {
                detach(old); // the failed member object goes (it may hold the same storage's claim)
                close(old);
            }
            DiskClaim claim = disk.claim(ClaimMode.EXCLUSIVE, ArrayMetadata.holder(meta.name, meta.uuid));
            int devNumber = sb.devNumber();
            synchronized (meta.lock) {
                for (Member m : meta.members) {
                    if (m.devNumber == devNumber) {
                        devNumber = meta.nextDevNumber();
                        break;
                    }
                }
            }
            Member back = new Member(
                    disk,
                    sb.dataOffset() * 512,
                    new DeviceId(devNumber, sb.deviceUuid()),
                    slot,
                    MemberState.REBUILDING,
                    core.counterMode);
            back.claimed(claim);
            back.bblogOffset = sb.bblogOffset();
            back.bblogSize = sb.bblogSize();
            back.bblogShift = sb.bblogShift();
            back.bitmapRecovery = why == null;
            try {
                if (bitmap != null) {
                    bitmap.writeAreaTo(back);
                }
            } catch (IOException e) {
                claim.close();
                throw e;
            }
            synchronized (meta.lock) {
                core.table = core.table.withSlot(slot, back);
                meta.members.add(back);
                meta.writeAll();
            }
            long dirty = bitmap == null ? 0 : bitmap.dirtyChunks();
            long total = bitmap == null ? 0 : bitmap.chunks();
            out[0] = new ReAddOutcome(slot, why == null, dirty, total, why);
            LOG.info(
                    "{}: re-added {} into slot {}: {}",
                    core.name,
                    disk.name(),
                    slot,
                    why == null
                            ? "recovering the " + dirty + " of " + total + " chunks the bitmap marks"
                            : "full rebuild: " + why);
        });
        return out[0];
    }

    private long firstDataOffset() {
        synchronized (meta.lock) {
            return meta.members.isEmpty() ? -1 : meta.members.get(0).dataOffsetBytes;
        }
    }

    boolean isDegraded() {
        for (Member m : core.table.slots) {
            if (m == null || m.state != MemberState.IN_SYNC) {
                return true;
            }
        }
        return false;
    }

    /** A member that never joined gives its storage back. */
    void releaseUnlessMember(Member m) {
        synchronized (meta.lock) {
            if (meta.members.contains(m)) {
                return;
            }
        }
        m.releaseClaim();
    }

    /** Caller quiesced. Drains the member's I/O and drops it from the member table and metadata. */
    private void detach(Member m) throws IOException {
        m.nrPending.switchToAtomicSync();
        try {
            Duration drainTimeout = core.drainTimeout;
            if (!m.nrPending.awaitZero(drainTimeout)) {
                throw new IOException(m.name() + ": in-flight I/O did not drain within " + seconds(drainTimeout));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while draining " + m.name());
        }
        synchronized (meta.lock) {
            core.table = core.table.without(m);
            meta.members.remove(m);
            meta.updateFailureLocked();
            meta.writeAll();
        }
        LOG.info("{}: removed {}", core.name, m.name());
        core.events.publish(ArrayEvent.Kind.MEMBER_REMOVED, m.name(), null, null);
    }

    private static void close(Member m) throws IOException {
        m.releaseClaim();
        m.disk.close();
    }
}
