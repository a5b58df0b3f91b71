package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import org.raidfive.disk.MemberDisk;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid replace}: md's replace. The new file becomes the old member's replacement (rebuilding,
 * recovery offset 0) while the old one stays in service; {@code raid rebuild} copies the data and
 * then retires the old member.
 */
@Command(
        header = "Start replacing a member with a new file.",
        name = "replace",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Start replacing the in-sync --member FILE with --with FILE (created like the members when "
                    + "absent). The old member stays in service until raid rebuild (given the members and the new file) "
                    + "has copied everything; then it leaves the array."
        })
final class ReplaceCommand extends Verb {
    @Option(names = "--member", required = true, paramLabel = "FILE", description = "The in-sync member to replace.")
    String member;

    @Option(names = "--with", required = true, paramLabel = "FILE", description = "Its replacement.")
    String with;

    @Option(names = "--force", description = "Overwrite a replacement file that holds data.")
    boolean force;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.membersWithout(with);
        MemberCommands.requireListed("--member", member, members);
        MemberCommands.requireNotListed("--with", with, members);
        ArrayStatus status;
        try (ArraySession probe = readOnlySession(members)) {
            status = probe.array().status();
            ArrayStatus.MemberStatus m = MemberCommands.statusOf(probe, member);
            if (m.state() != MemberState.IN_SYNC || m.replacement()) {
                throw CliException.usage(member + " is " + MemberCommands.stateWord(m.state()) + " in " + status.name()
                        + "; only an in-sync member can be replaced");
            }
            for (ArrayStatus.MemberStatus o : status.members()) {
                if (o.state() == MemberState.REBUILDING) {
                    throw CliException.usage(status.name() + " is already rebuilding " + o.name()
                            + "; finish that with raid rebuild first");
                }
            }
        }
        MemberCommands.Joining kind = MemberCommands.classifyNewMember("--with", with, members, status, force);
        boolean created = kind == MemberCommands.Joining.ABSENT;
        boolean started = false;
        try (ArraySession session = readWriteSession(members)) {
            MemberDisk disk = Members.createOrExtend(with, MemberCommands.memberFileSize(status));
            try {
                session.array().replace(session.disk(member), disk);
                started = true;
            } finally {
                if (!started) {
                    disk.close();
                }
            }
        } finally {
            if (created && !started) {
                AddCommand.deleteQuietly(with);
            }
        }
        List<String> all = new ArrayList<>(members);
        all.add(with);
        say("replacing " + member + " with " + with + " in " + status.name() + "; finish with: raid rebuild "
                + source.again(all) + " (" + member + " leaves the array when it completes)");
        String note = source.unreachedNote(with);
        if (note != null) {
            say(note);
        }
        return ExitCode.OK;
    }
}
