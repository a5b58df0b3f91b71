package org.raidfive.array;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.raidfive.counter.CounterMode;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.MdUuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The array's md metadata: identity, events, clean/dirty, every member's role, and the writing of
 * superblocks to every live member whenever any of it changes.
 *
 * <p>All changes happen under {@code lock} (one per array). Each change bumps {@code events} and
 * is written to every member that is not faulty before the caller goes on, as md does: a member
 * whose superblock write fails is marked faulty and the update is written again, so the state on
 * disk always names the members that were live when it was written. The clean-to-dirty step is
 * checked without the lock first ({@code dirty} is volatile), so a write to a dirty array pays one
 * volatile read.
 */
final class ArrayMetadata implements ArrayHooks {
    private static final Logger LOG = LoggerFactory.getLogger(ArrayMetadata.class);

    final Object lock = new Object();
    final byte[] uuid;
    final String name;
    final long ctime;
    /** Every member the array knows: in a slot, replacing one, spare, or faulty and not yet removed. */
    final List<Member> members = new ArrayList<>();

    /**
     * md's internal write-intent bitmap ({@link WriteIntentBitmap}, in the core): its offset from the
     * superblock in sectors (0 when the array has none) and the bytes of bits after its 256-byte
     * superblock.
     */
    int bitmapOffset;

    long bitmapBitBytes;
    /**
     * md's partial parity log (consistency policy ppl): size 0 when the array has none; else the area
     * (offset from the superblock and size, in sectors) a member joining the array gets. Each member
     * keeps its own area ({@link Member#pplOffset}), as md does.
     */
    int pplOffset;

    int pplSize;

    private final ArrayCore core;
    private volatile boolean dirty;
    /** Written under {@link #lock}; volatile so the bitmap can read it without the lock (lock order). */
    private volatile long events;

    private long utime;
    /** md's recovery_cp in bytes of member data: parity below it is known good; MAX_VALUE when all is. */
    private long recoveryCp;
    /** Superblock writes since the array was opened (guarded by {@link #lock}). */
    private long superblockWrites;

    private volatile long mismatchSectors = -1;
    private Runnable failureListener = () -> {};

    /**
     * The metadata of an array and, with it, the array's data path ({@link #core()}), whose hooks this
     * is: the core is made here so that each holds the other from construction on.
     */
    ArrayMetadata(
            ArrayIdentity id,
            Raid5Layout layout,
            long events,
            long recoveryCp,
            MemberTable table,
            CounterMode counterMode) {
        this.uuid = id.uuid().clone();
        this.name = id.name();
        this.ctime = id.ctime();
        this.events = events;
        this.recoveryCp = recoveryCp;
        this.core = new ArrayCore(name, layout, table, counterMode, this); // it keeps 'this'; calls nothing yet
        core.resyncOffset = recoveryCp;
    }

    void onMemberFailed(Runnable listener) {
        failureListener = listener;
    }

    ArrayCore core() {
        return core;
    }

    /** The array's geometry now (a size change replaces it). */
    Raid5Layout layout() {
        return core.layout;
    }

    boolean dirty() {
        return dirty;
    }

    long events() {
        return events;
    }

    long utime() {
        synchronized (lock) {
            return utime;
        }
    }

    long recoveryCp() {
        synchronized (lock) {
            return recoveryCp;
        }
    }

    long mismatchSectors() {
        return mismatchSectors;
    }

    void setMismatchSectors(long sectors) {
        mismatchSectors = sectors;
    }

    /** The array was found dirty (or was created without assuming clean): parity must be recomputed. */
    void needResyncFrom(long offset) {
        synchronized (lock) {
            recoveryCp = offset;
            core.resyncOffset = offset;
        }
    }

    /** A resync pass reached {@code offset} (MAX_VALUE when complete). */
    void resyncedTo(long offset) throws IOException {
        synchronized (lock) {
            recoveryCp = offset;
            core.resyncOffset = offset;
            writeAllLocked();
        }
    }

    @Override
    public void beforeWrite() throws IOException {
        if (dirty) {
            return;
        }
        synchronized (lock) {
            if (!dirty) {
                core.checkUsable();
                dirty = true;
                writeAllLocked();
                core.events.publish(ArrayEvent.Kind.DIRTY, null, null, null);
            }
        }
    }

    @Override
    public void badBlocksRecorded(Member member) throws IOException {
        synchronized (lock) {
            LOG.warn("{}: recorded bad blocks on {}: {}", name, member.name(), member.badBlocks());
            writeAllLocked();
        }
    }

    /**
     * Marks the array clean on disk (after every member is flushed): resync_offset = recovery_cp. An
     * array whose superblocks were never written since it was opened (no write, no change: a command
     * that only looked, or was refused) is left as it was found, events included.
     */
    void markClean() throws IOException {
        synchronized (lock) {
            boolean unchanged = !dirty && superblockWrites == 0;
            for (Member m : members) {
                unchanged &= !m.metadataPending();
            }
            dirty = false;
            if (!unchanged) {
                writeAllLocked();
            }
            core.events.publish(ArrayEvent.Kind.CLEAN, null, null, null);
        }
    }

    /** Writes the current state to every live member; used after any change made under {@link #lock}. */
    void writeAll() throws IOException {
        synchronized (lock) {
            writeAllLocked();
        }
    }

    @Override
    public void memberFailed(Member member, IOException cause) throws IOException {
        synchronized (lock) {
            if (member.state == MemberState.FAULTY) {
                core.checkUsable();
                return;
            }
            failLocked(member, cause == null ? "no cause" : cause.getMessage());
            try {
                writeAllLocked();
            } finally {
                failureListener.run();
            }
        }
        core.checkUsable();
    }

    /**
     * The one place a member becomes faulty (md's {@code md_error}): whatever found the failure (a
     * member I/O, a superblock or bitmap write, a request), the state changes here and whether the
     * array can still serve is decided again. The caller writes the superblocks and tells the
     * failure listener.
     */
    private void failLocked(Member member, String why) {
        LOG.warn("{}: member {} failed ({}); marking it faulty", name, member.name(), why);
        boolean heldASlot = member.state == MemberState.IN_SYNC
                && member.slot >= 0
                && member.slot < core.table.slots.length
                && core.table.slots[member.slot] == member;
        member.state = MemberState.FAULTY;
        core.events.publish(ArrayEvent.Kind.MEMBER_FAILED, member.name(), why, null);
        boolean wasFailed = core.failure != null;
        updateFailureLocked();
        if (heldASlot && !wasFailed && core.failure == null) {
            core.events.publish(ArrayEvent.Kind.DEGRADED, member.name(), "slot " + member.slot + " is out", null);
        }
    }

    /**
     * Decides whether the array can still serve: RAID-5 needs every slot but one in sync (a slot
     * being rebuilt does not count, as in md).
     */
    void updateFailureLocked() {
        Member[] s = core.table.slots;
        List<String> out = new ArrayList<>();
        for (int i = 0; i < s.length; i++) {
            Member m = s[i];
            if (m == null) {
                out.add("slot " + i + " missing");
            } else if (m.state != MemberState.IN_SYNC) {
                out.add(m.name() + " (slot " + i + ") " + m.state.name().toLowerCase(Locale.ROOT));
            }
        }
        if (out.size() > 1 && core.failure == null) {
            core.failure = "more than one member is out: " + String.join(", ", out);
            LOG.error("{}: array failed: {}", name, core.failure);
            core.events.publish(ArrayEvent.Kind.FAILED, null, core.failure, null);
        }
    }

    private void writeAllLocked() throws IOException {
        if (core.readOnly) {
            return;
        }
        superblockWrites++;
        // A failing superblock write fails that member, which changes what must be written: repeat.
        for (int round = 0; round <= members.size(); round++) {
            events++;
            utime = System.currentTimeMillis() / 1000;
            boolean lostOne = false;
            for (Member m : members) {
                if (m.state == MemberState.FAULTY) {
                    continue;
                }
                try {
                    SuperblockIo.write(this, m);
                } catch (SuperblockIo.NewerOnDiskException e) {
                    // Someone else owns the members now: writing on would undo their changes. Stop.
                    if (core.failure == null) {
                        core.failure = "stopped to avoid overwriting newer metadata: " + e.getMessage();
                        LOG.error("{}: {}", name, core.failure);
                        core.events.publish(ArrayEvent.Kind.FAILED, null, core.failure, null);
                    }
                    throw new ArrayFailedException(name + " " + core.failure, e);
                } catch (SuperblockIo.MemberReplacedException e) {
                    failLocked(m, e.getMessage());
                    lostOne = true;
                } catch (IOException e) {
                    failLocked(m, "superblock write failed: " + e.getMessage());
                    lostOne = true;
                }
            }
            WriteIntentBitmap bitmap = WriteIntentBitmap.in(core);
            if (bitmap != null && !lostOne) {
                // md_bitmap_update_sb: the bitmap's superblock carries the events just written.
                for (Member m : bitmap.writeSuperblockLocked()) {
                    failLocked(m, "bitmap write failed");
                    lostOne = true;
                }
            }
            if (!lostOne) {
                return;
            }
            failureListener.run(); // a member lost to a superblock write is a failure like any other
        }
        throw new ArrayFailedException(name + ": no member accepts superblock writes");
    }

    /** Role table indexed by dev_number, as md's super_1_sync fills it. */
    int[] rolesLocked() {
        int max = 0;
        for (Member m : members) {
            max = Math.max(max, m.devNumber + 1);
        }
        int[] roles = new int[max];
        // Numbers not held by a current member read "faulty" (older kernels' fill; Linux 6.1 writes
        // spare). Faulty keeps a removed member recognisable as a former member of this array, not a
        // spare of it, when it is given back later; md treats both the same for absent devices.
        Arrays.fill(roles, SuperblockIo.ROLE_FAULTY);
        for (Member m : members) {
            roles[m.devNumber] = roleOf(m);
        }
        return roles;
    }

    static int roleOf(Member m) {
        switch (m.state) {
            case FAULTY:
                return SuperblockIo.ROLE_FAULTY;
            case SPARE:
                return SuperblockIo.ROLE_SPARE;
            default:
                return m.slot;
        }
    }

    /** resync_offset as md writes it: 0 while dirty, else recovery_cp. */
    long resyncOffsetForDisk() {
        return dirty ? 0 : recoveryCp;
    }

    long eventsLocked() {
        return events;
    }

    long utimeLocked() {
        return utime;
    }

    boolean isReplacement(Member m) {
        return core.table.isReplacement(m);
    }

    int nextDevNumber() {
        boolean[] used = new boolean[members.size() + 1];
        for (Member m : members) {
            if (m.devNumber < used.length) {
                used[m.devNumber] = true;
            }
        }
        int i = 0;
        while (used[i]) {
            i++;
        }
        return i;
    }

    /** How a claim names this array to another claimant: {@code array NAME (UUID ...)}. */
    static String holder(String name, byte[] uuid) {
        return "array " + name + " (UUID " + MdUuid.format(uuid) + ")";
    }
}
