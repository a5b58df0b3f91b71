package org.raidfive.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayConfigException;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code raid detail}: the array as {@code mdadm --detail} shows it, from a read-only assembly
 * (nothing is written, no pass starts). Files the array refuses as stale are listed as faulty; an
 * array that cannot be assembled is described from its superblocks.
 */
@Command(header = "Show an array's state and members, like mdadm --detail.", name = "detail", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        description = {"Show the array the MEMBER files make up, like mdadm --detail: identity, geometry, state, "
                + "member counts and a table of members. Assembles read-only: the files are not changed.",
                "Exit codes as mdadm --detail --test: 0 healthy, 1 degraded, 2 failed or cannot be assembled, "
                + "4 a member cannot be opened or holds no usable superblock."})
final class DetailCommand extends Verb {
    @Option(names = "--json", description = "Print the report as JSON.")
    boolean json;

    @Parameters(paramLabel = "MEMBER", arity = "1..*", description = "Member files, in any order.")
    List<String> members;

    @Override
    public Integer call() throws Exception {
        Members.checkDistinct(members);
        Survey survey;
        try {
            survey = Survey.of(members);
        } catch (SuperblockException | IOException e) {
            throw new CliException(ExitCode.DETAIL_UNREADABLE, ErrorHandler.message(e), e);
        }
        DetailReport report;
        try (ArraySession session = ArraySession.readOnly(members)) {
            report = DetailReport.of(session.array().status(), survey.top(), List.of());
        } catch (ArrayConfigException refused) {
            report = withoutStale(survey, refused);
        }
        out().print(json ? Json.write(report.json(members)) : report.text(members));
        out().flush();
        return report.exitCode();
    }

    /** Assembles again without the stale files, listing them as faulty; else reports the superblocks. */
    private DetailReport withoutStale(Survey survey, ArrayConfigException refused) throws IOException {
        List<Survey.Entry> stale = new ArrayList<>();
        List<String> rest = new ArrayList<>();
        for (Survey.Entry e : survey.entries()) {
            if (e.verdict() == Survey.Verdict.STALE) {
                stale.add(e);
            } else {
                rest.add(e.spec());
            }
        }
        if (!stale.isEmpty() && !rest.isEmpty() && survey.specsWith(Survey.Verdict.FOREIGN).isEmpty()) {
            try (ArraySession session = ArraySession.readOnly(rest)) {
                return DetailReport.of(session.array().status(), survey.top(), stale);
            } catch (ArrayConfigException again) {
                return DetailReport.ofSuperblocks(survey, again.getMessage());
            }
        }
        return DetailReport.ofSuperblocks(survey, refused.getMessage());
    }
}
