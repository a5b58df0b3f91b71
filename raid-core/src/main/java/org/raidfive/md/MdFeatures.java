package org.raidfive.md;

import static org.raidfive.md.Superblock.*;

/**
 * Which md features raidfive can run an array with: every feature bit Linux defines is either
 * honoured or refused here, with what to do instead, so that no md state is silently dropped by
 * the next superblock write.
 *
 * <ul>
 *   <li>honoured: recovery offset, replacement, the bad block log (listed sectors are not read as
 *       data), the internal write-intent bitmap (kept bit by bit as md keeps it: a chunk's bit is
 *       set on disk before a write to it, cleared once it is idle; a dirty start resyncs the chunks
 *       whose bits are set, a re-added member is recovered where they are), the partial parity log
 *       (PPL and MULTIPLE_PPLS: used and recovered as md does);</li>
 *   <li>refused: a reshape in progress (raidfive finishes one that adds members offline,
 *       {@code org.raidfive.array.OfflineReshape}, before the array runs), a write journal, clustered md, a partial parity log of more
 *       than 64 members (md refuses it too), and any bit Linux does not define or combination it
 *       refuses (the decoder refuses those already).</li>
 * </ul>
 *
 * <p>Where each area lies on a member (bitmap, bad block log, partial parity log: on the device,
 * before the data, clear of the superblock and one another) is {@link MemberAreas}'s rule.
 */
public final class MdFeatures {
    private MdFeatures() {}

    /** Why an array with this member cannot be run by raidfive, or null when it can. */
    public static String refusal(final Superblock sb, final String member) {
        final int f = sb.featureMap();
        if ((f & (MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_RESHAPE_BACKWARDS | MD_FEATURE_NEW_OFFSET)) != 0) {
            return member + " is in the middle of a reshape (feature_map 0x" + Integer.toHexString(f)
                    + ", reshape_position " + Long.toUnsignedString(sb.reshapePosition()) + ", delta_disks "
                    + sb.deltaDisks() + ", new layout " + sb.newLayout() + ", new chunk " + sb.newChunk() * 512L / 1024
                    + "K): raidfive does not run an array mid-reshape; finish the reshape first: raid grow --continue "
                    + "with every member (a reshape that adds or removes members or changes chunk or layout), or Linux md "
                    + "(mdadm --assemble resumes it)";
        }
        if ((f & MD_FEATURE_JOURNAL) != 0 || sb.role() == ROLE_JOURNAL) {
            return member + (sb.role() == ROLE_JOURNAL ? " is the write-journal device of" : " belongs to")
                    + " an array with a write journal (raid5-cache, feature 0x200), which raidfive does not implement; "
                    + "run it with Linux md, or remove the journal there first (mdadm --grow --consistency-policy=resync)";
        }
        for (int i = 0; i < sb.maxDev(); i++) {
            if (sb.devRole(i) == ROLE_JOURNAL) {
                return member + " belongs to an array with a write-journal device (dev_roles[" + i + "] is journal), "
                        + "which raidfive does not implement; run it with Linux md";
            }
        }
        if ((f & MD_FEATURE_CLUSTERED) != 0) {
            return member + " belongs to a clustered md array (feature 0x100), which raidfive does not implement; "
                    + "run it with Linux md and its cluster stack";
        }
        if ((f & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)) != 0) {
            final String ppl = pplRefusal(sb, member);
            if (ppl != null) {
                return ppl;
            }
        }
        final int unknown = f & ~MD_FEATURE_ALL;
        if (unknown != 0) {
            return member + String.format(" has feature bits 0x%x that Linux md does not define", unknown);
        }
        return null;
    }

    /**
     * md's {@code ppl_init_log} rule for the array (where each member's area lies is
     * {@link MemberAreas}'s to check, as {@code ppl_validate_rdev} does per device).
     */
    private static String pplRefusal(final Superblock sb, final String member) {
        // A PPL beside a bitmap or a journal is refused by the decoder already, as md's super_1_load does.
        if (sb.raidDisks() > 64) {
            return member + "'s array has " + sb.raidDisks() + " members; md's partial parity log takes at most 64";
        }
        return null;
    }
}
