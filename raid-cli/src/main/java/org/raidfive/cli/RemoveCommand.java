package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid remove}: takes a faulty or spare member out of the array (md's hot-remove). A member
 * that {@code raid fail} marked faulty is stale to later assemblies, so it is loaded as a spare on
 * purpose ({@code takeStaleAsSpare}) just to be removed; the array's superblocks then no longer give
 * it a role.
 */
@Command(
        header = "Take a faulty or spare member out of the array.",
        name = "remove",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Take the --member file out of the array. Only a faulty (failed) or spare member can be "
                    + "removed; fail an active member first (raid fail)."
        })
final class RemoveCommand extends Verb {
    @Option(names = "--member", required = true, paramLabel = "FILE", description = "The faulty or spare member.")
    String member;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.membersWith(member);
        MemberCommands.requireListed("--member", member, members);
        int index = Members.indexOf(members, member);
        Survey survey;
        try {
            survey = Survey.of(members);
        } catch (SuperblockException e) {
            throw CliException.usage(e.getMessage());
        }
        Survey.Entry entry = survey.entry(index);
        List<String> rest = new ArrayList<>(members);
        rest.remove(index);
        String name;
        String was;
        if (entry.verdict() == Survey.Verdict.FOREIGN) {
            throw CliException.usage(member + " " + entry.why());
        } else if (entry.verdict() == Survey.Verdict.STALE) {
            for (Survey.Entry e : survey.entries()) {
                if (e != entry && e.verdict() == Survey.Verdict.STALE) {
                    throw CliException.usage(e.spec() + " is stale too (" + e.why() + "); remove one member at a time");
                }
            }
            try (ArraySession probe = readOnlySession(rest)) {
                name = probe.array().status().name();
            }
            was = "failed: " + entry.why();
            try (ArraySession session = session(members, ArraySession.READ_WRITE.withTakeStaleAsSpare(true))) {
                session.array().remove(session.disk(member));
            }
        } else {
            try (ArraySession probe = readOnlySession(members)) {
                ArrayStatus.MemberStatus m = MemberCommands.statusOf(probe, member);
                name = probe.array().status().name();
                if (m.state() != MemberState.SPARE && m.state() != MemberState.FAULTY) {
                    throw CliException.usage(
                            member + " is " + (m.state() == MemberState.IN_SYNC ? "active (in sync)" : "rebuilding")
                                    + " in " + name + "; only a faulty or spare member can be removed"
                                    + " (fail it first: raid fail --member " + member + " ...)");
                }
                was = MemberCommands.stateWord(m.state());
            }
            try (ArraySession session = readWriteSession(members)) {
                session.array().remove(session.disk(member));
            }
        }
        say("removed " + member + " from " + name + " (it was " + was + "); the members are now " + join(rest));
        if (source.array != null) {
            say("the config still names " + member + "; --array " + source.array
                    + " passes over it now (it is no longer a member)");
        }
        return ExitCode.OK;
    }
}
