package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayStatus;
import org.raidfive.bench.Sizes;
import org.raidfive.disk.MemberDisk;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid add}: a hot spare. The spare's superblock is written at once; on a degraded array the
 * engine takes it into the missing slot right away (and starts recovery, which this command stops
 * again, checkpointed, as it closes): the rebuild itself runs in the foreground with
 * {@code raid rebuild}, where it shows progress and can be interrupted and resumed.
 */
@Command(
        header = "Add a hot spare.",
        name = "add",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Add --spare FILE to the array as a hot spare (created sparse, sized like the members, when "
                    + "absent). A degraded array takes it into the missing slot: then run raid rebuild with the members "
                    + "and the spare to rebuild onto it.",
            "A file holding data is refused unless --force. A member that failed or was removed earlier (stale) "
                    + "is taken back as a spare and rebuilt."
        })
final class AddCommand extends Verb {
    @Option(names = "--spare", required = true, paramLabel = "FILE", description = "The spare to add.")
    String spare;

    @Option(
            names = "--force",
            description = "Overwrite a spare file that holds data; also start an array that is "
                    + "dirty and degraded (md's --force: stripes written at the crash may be wrong, the RAID-5 write hole) "
                    + "and mark it clean.")
    boolean force;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.membersWithout(spare);
        MemberCommands.requireNotListed("--spare", spare, members);
        ArrayStatus status;
        try (ArraySession probe = session(members, ArraySession.READ_ONLY.withForce(force))) {
            status = probe.array().status();
        }
        MemberCommands.Joining kind = MemberCommands.classifyNewMember("--spare", spare, members, status, force);
        List<String> all = new ArrayList<>(members);
        all.add(spare);
        ArrayStatus after;
        if (kind == MemberCommands.Joining.STALE_MEMBER) {
            try (ArraySession session = session(
                    all, ArraySession.READ_WRITE.withTakeStaleAsSpare(true).withForce(force))) {
                after = session.array().status();
            }
        } else {
            boolean created = kind == MemberCommands.Joining.ABSENT;
            boolean added = false;
            try (ArraySession session = session(members, ArraySession.READ_WRITE.withForce(force))) {
                MemberDisk disk = Members.createOrExtend(spare, MemberCommands.memberFileSize(status));
                try {
                    session.array().addSpare(disk);
                    added = true;
                } finally {
                    if (!added) {
                        disk.close();
                    }
                }
                // A degraded array starts recovering onto the spare at once: stop it (checkpointed) for
                // raid rebuild to run in the foreground, and so that status() cannot race its end.
                Passes.stopAll(session.array());
                after = session.array().status();
            } finally {
                if (created && !added) {
                    deleteQuietly(spare);
                }
            }
        }
        say("added " + spare + " to " + after.name() + " as a spare"
                + (kind == MemberCommands.Joining.STALE_MEMBER
                        ? " (it was a stale member: its old data will be rebuilt)"
                        : kind == MemberCommands.Joining.ABSENT
                                ? " (created, " + Sizes.human(Files.size(Members.path(spare))) + ")"
                                : ""));
        if (after.degraded()) {
            say(after.name() + " is degraded: rebuild onto the spare with: raid rebuild " + source.again(all));
        }
        String note = source.unreachedNote(spare);
        if (note != null) {
            say(note);
        }
        return ExitCode.OK;
    }

    static void deleteQuietly(String spec) {
        try {
            Files.deleteIfExists(Members.path(spec));
        } catch (IOException e) {
            // best effort: the file was created by this command
        }
    }
}
