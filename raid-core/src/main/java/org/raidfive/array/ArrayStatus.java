package org.raidfive.array;

import java.time.Instant;
import java.util.List;

/**
 * What {@code mdadm --detail} shows, as data.
 *
 * @param clean as mdadm --detail says it (md's in_sync): no write in flight; see {@link #resyncPending()}
 * @param state mdadm's words: clean or active, then degraded or FAILED, then recovering / resyncing /
 *              checking while a pass runs, or {@code resyncing (PENDING)} / {@code recovering (PENDING)}
 *              while one is due and none runs
 * @param sync the running (or last) background pass, or null
 * @param resyncOffset member offset from which parity still has to be recomputed (md's recovery_cp),
 *                     or {@code Long.MAX_VALUE} when no resync is pending
 * @param created when the array was created
 * @param updated when its metadata was last written
 */
public record ArrayStatus(
        String uuid,
        String name,
        int level,
        String layout,
        int chunkSize,
        long arrayBytes,
        long memberDataBytes,
        int raidDisks,
        long events,
        boolean clean,
        boolean degraded,
        boolean failed,
        String state,
        SyncProgress sync,
        List<MemberStatus> members,
        long resyncOffset,
        Instant created,
        Instant updated) {

    /** True when parity is not known good and no resync is running. */
    public boolean resyncPending() {
        return resyncOffset != Long.MAX_VALUE;
    }

    /** Members in sync in a slot. */
    public long activeMembers() {
        return members.stream()
                .filter(m -> m.slot() >= 0 && !m.replacement() && (m.state() == MemberState.IN_SYNC))
                .count();
    }

    /** Members that are not faulty (in sync, rebuilding or spare). */
    public long workingMembers() {
        return members.stream().filter(m -> m.state() != MemberState.FAULTY).count();
    }

    /** Members marked faulty. */
    public long failedMembers() {
        return members.stream().filter(m -> m.state() == MemberState.FAULTY).count();
    }

    /** Hot spares. */
    public long spareMembers() {
        return members.stream()
                .filter(m -> m.state() == MemberState.SPARE || m.state() == MemberState.REBUILDING)
                .count();
    }

    /**
     * One member as the array sees it.
     *
     * @param slot role (raid disk number), or -1 for a spare or a faulty member without a role
     * @param recoveryOffset bytes of the data area already rebuilt (meaningful while rebuilding)
     */
    public record MemberStatus(
            String name,
            int devNumber,
            String deviceUuid,
            int slot,
            MemberState state,
            boolean replacement,
            long recoveryOffset,
            long dataOffset,
            long diskBytes) {}
}
