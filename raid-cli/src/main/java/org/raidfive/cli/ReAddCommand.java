package org.raidfive.cli;

import java.util.List;
import org.raidfive.array.ArrayConfigException;
import org.raidfive.array.ReAddOutcome;
import org.raidfive.array.SyncProgress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid re-add}: a former member takes its slot back, as {@code mdadm --re-add}: with the
 * write-intent bitmap only the chunks written while it was away are recovered, else it is rebuilt in
 * full (saying why); the recovery runs in the foreground.
 */
@Command(
        header = "Take a former member back into its slot (fast with the write-intent bitmap).",
        name = "re-add",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Give --member, a former member whose slot is empty (it failed or was left out), its slot back "
                    + "and recover it in the foreground, as mdadm --re-add.",
            "With an internal write-intent bitmap, and when the member left no earlier than bits were last cleared, "
                    + "only the chunks written while it was away are recovered; otherwise it is rebuilt in full and the "
                    + "command says why. Ctrl-C stops; raid rebuild resumes (in full from the checkpoint)."
        })
final class ReAddCommand extends Verb {
    @Mixin
    SpeedOptions speed;

    @Option(names = "--member", required = true, paramLabel = "FILE", description = "The former member to take back.")
    String member;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.membersWithout(member);
        if (Members.indexOf(members, member) >= 0) {
            throw CliException.usage("--member " + member + " is among the members given: list the array without it");
        }
        try (ArraySession session = readWriteSession(members);
                SigintGuard guard = SigintGuard.install(
                        session,
                        err(),
                        "re-add",
                        "the member is back in its slot; finish its recovery with: raid rebuild "
                                + source.again(with(members, member)))) {
            ReAddOutcome o;
            try {
                o = session.array().reAdd(Members.open(member));
            } catch (ArrayConfigException e) {
                throw CliException.usage(e.getMessage());
            }
            say(
                    o.byBitmap()
                            ? "re-added " + member + " into slot " + o.slot() + ": recovering the " + o.dirtyChunks()
                                    + " of " + o.totalChunks() + " chunks the write-intent bitmap marks"
                            : "re-added " + member + " into slot " + o.slot() + ": full rebuild (" + o.fullRebuildWhy()
                                    + ")");
            session.array().setSyncLimits(speed.limits());
            SyncProgress p = Progress.on(err()).follow(session.array(), guard::stopped);
            if (guard.stopped()) {
                RebuildCommand.awaitShutdown();
                return ExitCode.PROBLEM;
            }
            if (p != null && !p.complete()) {
                throw new CliException(
                        ExitCode.PROBLEM, "recovery stopped: " + (p.error() == null ? "incomplete" : p.error()));
            }
            say(member + " is in sync");
            String note = source.unreachedNote(member);
            if (note != null) {
                say(note);
            }
        }
        return ExitCode.OK;
    }
}
