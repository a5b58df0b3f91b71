package org.raidfive.array;

import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * md's bad-block decisions, in one place: whether sectors a member cannot give are recorded in its
 * bad block log (md's {@code rdev_set_badblocks}: the array goes on) or the member is failed (md's
 * {@code md_error}), what a read that nothing can correct reports, and what a rebuild target gets
 * where a survivor lists bad blocks. The list itself is the member's ({@link Member#hasBadBlocks});
 * it reaches the disk through {@link ArrayHooks#badBlocksRecorded} before the I/O that found it
 * returns.
 */
final class BadBlockPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(BadBlockPolicy.class);

    private final ArrayCore core;

    BadBlockPolicy(ArrayCore core) {
        this.core = core;
    }

    /**
     * {@code m} cannot give {@code [memberOffset, +n)}: recorded as bad blocks where md would record
     * them (the array is writable, the member keeps a log and is in sync), else the member is failed.
     */
    void recordOrFail(Member m, long memberOffset, int n, IOException cause) throws IOException {
        if (!core.readOnly && m.canRecordBadBlocks() && m.state == MemberState.IN_SYNC) {
            m.recordBadBlocks(memberOffset, n);
            core.hooks.badBlocksRecorded(m);
            return;
        }
        core.memberFailed(m, cause);
    }

    /**
     * The member's sectors cannot be read and the stripe has nothing left to rebuild them from: md
     * records them as bad blocks where the member keeps a log (the data there is lost, the array goes
     * on) and fails the member where it does not. Either way this read fails: this always throws.
     * {@code error} is null when the sectors were already listed as bad.
     */
    IOException notCorrectable(Member m, long stripe, long memberOffset, int n, IOException error) throws IOException {
        if (error == null) {
            throw new IOException(core.name + ": sectors at member offset " + memberOffset + " of " + m.name()
                    + " are listed as bad blocks and stripe " + stripe + " has no other copy of them: "
                    + "that data is lost");
        }
        recordOrFail(m, memberOffset, n, error);
        if (m.state != MemberState.FAULTY) {
            throw new IOException(
                    core.name + ": read error not correctable on " + m.name() + " (stripe " + stripe
                            + " is degraded); recorded as bad blocks: " + error.getMessage(),
                    error);
        }
        throw core.stripeLost(stripe);
    }

    /**
     * md's recovery over a survivor's bad block: the rebuild target cannot get those sectors, so
     * they are recorded as bad there too. True when {@code target} took them (it keeps a log).
     */
    boolean inherit(Member target, Member survivor, long memberOffset, int len) throws IOException {
        if (!target.canRecordBadBlocks()) {
            return false;
        }
        target.recordBadBlocks(memberOffset, len);
        core.hooks.badBlocksRecorded(target);
        LOG.warn(
                "{}: {} lists bad blocks at member offset {}: recorded as bad on {} too",
                core.name,
                survivor.name(),
                memberOffset,
                target.name());
        return true;
    }
}
