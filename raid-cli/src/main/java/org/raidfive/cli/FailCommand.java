package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code raid fail}: marks a member faulty, as {@code mdadm --fail}; the array goes on degraded. */
@Command(
        header = "Mark a member faulty.",
        name = "fail",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Mark the --member file faulty; the array goes on degraded without it.",
            "The other members' superblocks record the failure; the failed file is left as it was and is stale "
                    + "from now on: leave it out of later commands (or re-add it with raid add --spare).",
            "Failing a member of an array that is already degraded would fail the array: refused unless --force."
        })
final class FailCommand extends Verb {
    @Option(names = "--member", required = true, paramLabel = "FILE", description = "The member to mark faulty.")
    String member;

    @Option(names = "--force", description = "Fail the member even if that fails the array.")
    boolean force;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.membersWith(member);
        MemberCommands.requireListed("--member", member, members);
        try (ArraySession probe = readOnlySession(members)) {
            ArrayStatus status = probe.array().status();
            ArrayStatus.MemberStatus m = MemberCommands.statusOf(probe, member);
            if (m.state() == MemberState.IN_SYNC && status.degraded() && !m.replacement() && !force) {
                throw CliException.usage("failing " + member + " would fail " + status.name() + ": it is already "
                        + "degraded (" + status.activeMembers() + " of " + status.raidDisks()
                        + " members in sync); use "
                        + "--force to fail it anyway");
            }
        }
        ArrayStatus after;
        try (ArraySession session = readWriteSession(members)) {
            session.array().fail(session.disk(member));
            after = session.array().status();
        }
        say("marked " + member + " faulty in " + after.name() + "; the array is "
                + (after.failed() ? "FAILED" : after.degraded() ? "degraded" : "still whole"));
        if (!after.failed()) {
            List<String> rest = new ArrayList<>(members);
            rest.remove(Members.indexOf(members, member));
            say((source.array != null
                            ? "--array " + source.array + " leaves " + member + " out from now on (stale): "
                            : "leave " + member + " out from now on: ")
                    + "raid detail " + source.again(rest)
                    + "; then add a spare (raid add --spare FILE " + source.again(rest) + ") and run raid rebuild");
        }
        return after.failed() ? ExitCode.PROBLEM : ExitCode.OK;
    }
}
