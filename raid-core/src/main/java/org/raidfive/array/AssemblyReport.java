package org.raidfive.array;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.disk.MemberDisk;

/**
 * What {@link Raid5Array#assemble} found and did beyond the obvious, as {@code mdadm --assemble}
 * reports it: members it left out (and why) and members it took back by force.
 *
 * @param leftOut members given but not used: failed earlier or behind the others (md's "kicking
 *                non-fresh"). The array does not own them; the caller still does (and closes them).
 * @param forced members taken back by {@code force} after failing together with others
 * @param resyncForced true when forcing marked the array dirty, so that a resync recomputes parity
 * @param repaired what md would have set right on its own and assembly did the same way (a bitmap's
 *                 {@code sync_size} written anew, a stale bitmap resynced in full, log entries skipped),
 *                 one sentence each
 */
public record AssemblyReport(List<LeftOut> leftOut, List<Forced> forced, boolean resyncForced, List<String> repaired) {
    /** No member left out, nothing forced, nothing repaired. */
    public static final AssemblyReport NONE = new AssemblyReport(List.of(), List.of(), false, List.of());

    /** Copies the lists. */
    public AssemblyReport {
        leftOut = List.copyOf(leftOut);
        forced = List.copyOf(forced);
        repaired = List.copyOf(repaired);
    }

    /** A report with nothing repaired. */
    public AssemblyReport(List<LeftOut> leftOut, List<Forced> forced, boolean resyncForced) {
        this(leftOut, forced, resyncForced, List.of());
    }

    /**
     * A member left out of the array.
     *
     * @param disk the disk, still the caller's
     * @param reason why, e.g. "failed earlier (events 7 &lt; 9)"
     * @param events its own superblock's events
     */
    public record LeftOut(MemberDisk disk, String reason, long events) {}

    /**
     * A member taken back by force: its superblock's events are brought up to the array's and the
     * array's record of its failure is cleared (mdadm's "forcing event count").
     *
     * @param member its name
     * @param slot the slot it takes again
     * @param fromEvents the events its superblock had
     * @param toEvents the array's events it was brought up to
     */
    public record Forced(String member, int slot, long fromEvents, long toEvents) {}

    /** One line per thing done, in mdadm's words. */
    public List<String> lines() {
        List<String> out = new ArrayList<>();
        for (Forced f : forced) {
            out.add("forcing event count in " + f.member() + "(" + f.slot() + ") from "
                    + Long.toUnsignedString(f.fromEvents()) + " upto " + Long.toUnsignedString(f.toEvents())
                    + "; clearing its FAULTY flag");
        }
        if (resyncForced) {
            out.add("marked the array dirty: a resync recomputes parity over the stripes written when the members "
                    + "failed");
        }
        for (LeftOut l : leftOut) {
            out.add("leaving out " + l.disk().name() + ": " + l.reason());
        }
        out.addAll(repaired);
        return out;
    }
}
