package org.raidfive.array;

import java.time.Instant;
import java.util.Locale;

/**
 * Something that happened to an array, as delivered to an {@link ArrayListener}.
 *
 * @param sequence numbers the array's events from 1, in the order they happened and are delivered
 * @param time when it happened
 * @param array the array's name
 * @param kind what happened
 * @param member the member it concerns (its name), or null for the array as a whole
 * @param detail why or how, in words (a failure's cause, a pass's outcome), or null
 * @param pass for the pass events, the pass's progress at that moment; otherwise null
 * @param percent for {@link Kind#PASS_PROGRESS} the step passed (20, 40, 60 or 80); for the other pass
 *                events the pass's percentage then (rounded down); otherwise 0
 */
public record ArrayEvent(
        long sequence,
        Instant time,
        String array,
        Kind kind,
        String member,
        String detail,
        SyncProgress pass,
        int percent) {

    /** What happened. */
    public enum Kind {
        /** A member was marked faulty (I/O error, superblock or bitmap write, or on request); detail is the cause. */
        MEMBER_FAILED,
        /** A faulty or spare member left the array (hot-remove, or replaced by its rebuilt successor). */
        MEMBER_REMOVED,
        /** A spare joined the array. */
        SPARE_ADDED,
        /** A member rebuilt onto took its slot: the array has it in sync (md's SpareActive). */
        SPARE_ACTIVE,
        /** The array lost a member and runs degraded. */
        DEGRADED,
        /** The array has failed: more than one member is out; every I/O is refused. Detail says why. */
        FAILED,
        /** A background pass (resync, recovery, check, repair, or an {@link OnlineReshape}'s reshape) started. */
        PASS_STARTED,
        /** A background pass passed 20, 40, 60 or 80 percent (md's RebuildNN events). */
        PASS_PROGRESS,
        /** A background pass ended; {@link #outcome()} and {@code pass} say how. */
        PASS_FINISHED,
        /** The array was marked clean on disk (safemode, or a clean close). */
        CLEAN,
        /** The array was marked dirty on disk: the first write since it was clean. */
        DIRTY
    }

    /** For {@link Kind#PASS_FINISHED}: how the pass ended; null for other events. */
    public SyncOutcome.Result outcome() {
        return kind == Kind.PASS_FINISHED && pass != null ? SyncOutcome.resultOf(pass) : null;
    }

    /**
     * The event in {@code mdadm --monitor}'s words where mdadm has one (Fail, SpareActive,
     * DegradedArray, RebuildStarted, RebuildNN, RebuildFinished), else this event's own name in the
     * same style (MemberRemoved, SpareAdded, ArrayFailed, Clean, Dirty).
     */
    public String mdadmEvent() {
        switch (kind) {
            case MEMBER_FAILED:
                return "Fail";
            case SPARE_ACTIVE:
                return "SpareActive";
            case DEGRADED:
                return "DegradedArray";
            case PASS_STARTED:
                return "RebuildStarted";
            case PASS_PROGRESS:
                return "Rebuild" + percent;
            case PASS_FINISHED:
                return "RebuildFinished";
            case FAILED:
                return "ArrayFailed";
            default:
                StringBuilder b = new StringBuilder();
                for (String word : kind.name().toLowerCase(Locale.ROOT).split("_")) {
                    b.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
                }
                return b.toString();
        }
    }

    @Override
    public String toString() {
        return time + " " + array + " " + mdadmEvent() + (member == null ? "" : " " + member)
                + (detail == null ? "" : ": " + detail);
    }
}
