package org.raidfive.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/** Checks the member-management verbs share. */
final class MemberCommands {
    private MemberCommands() {}

    /** The status row of {@code spec}'s disk in an assembled array. */
    static ArrayStatus.MemberStatus statusOf(ArraySession session, String spec) throws IOException {
        String name = session.disk(spec).name();
        for (ArrayStatus.MemberStatus m : session.array().status().members()) {
            if (m.name().equals(name)) {
                return m;
            }
        }
        throw CliException.usage(
                spec + " is not a member of " + session.array().status().name());
    }

    /** {@code --member FILE} must be one of the MEMBER files. */
    static void requireListed(String option, String spec, List<String> members) throws IOException {
        if (Members.indexOf(members, spec) < 0) {
            throw CliException.usage(
                    option + " " + spec + " is not one of the members given (" + String.join(", ", members) + ")");
        }
    }

    /** A new member file ({@code add --spare}, {@code replace --with}) must not already be listed. */
    static void requireNotListed(String option, String spec, List<String> members) throws IOException {
        if (Members.indexOf(members, spec) >= 0) {
            throw CliException.usage(option + " " + spec + " is also given as a member; give the current members "
                    + "and the new file separately");
        }
    }

    /** What a file that is to join the array holds. */
    enum Joining {
        ABSENT,
        BLANK,
        STALE_MEMBER,
        OVERWRITE
    }

    /**
     * Classifies a file that is to join the array {@code status} describes (as a spare or a
     * replacement): absent (to be created), blank, a stale member of this same array (re-added),
     * or something to overwrite (only with --force). Refuses a current member of this array and,
     * without --force, a file holding data.
     */
    static Joining classifyNewMember(
            String option, String spec, List<String> members, ArrayStatus status, boolean force) throws IOException {
        if (!Members.exists(spec)) {
            return Joining.ABSENT;
        }
        Members.checkExists(spec);
        Superblock sb = null;
        try {
            sb = SuperblockFile.readValid(spec);
        } catch (SuperblockException e) {
            // not a member of anything readable: judge by its bytes
        }
        if (sb != null && MdUuid.format(sb.setUuid()).equals(status.uuid())) {
            List<String> all = new ArrayList<>(members);
            all.add(spec);
            Survey survey;
            try {
                survey = Survey.of(all);
            } catch (SuperblockException e) {
                throw CliException.usage(e.getMessage());
            }
            if (survey.entry(all.size() - 1).verdict() == Survey.Verdict.STALE) {
                return Joining.STALE_MEMBER;
            }
            throw CliException.usage(option + " " + spec + " is already a member of " + status.name() + " ("
                    + ExamineReport.role(sb) + "); list it with the members instead");
        }
        String data = Members.dataFound(spec);
        if (data != null) {
            if (!force) {
                throw CliException.usage(data + "; use --force to overwrite it");
            }
            return Joining.OVERWRITE;
        }
        return Joining.BLANK;
    }

    /** Size for a new member file: as large as the largest current member. */
    static long memberFileSize(ArrayStatus status) {
        long size = 0;
        for (ArrayStatus.MemberStatus m : status.members()) {
            size = Math.max(size, m.diskBytes());
        }
        return size;
    }

    static String stateWord(MemberState s) {
        return s.name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }
}
