package org.raidfive.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayConfigException;
import org.raidfive.array.AssemblyReport;
import org.raidfive.bench.Json;
import org.raidfive.disk.MemberInUseException;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid detail}: the array as {@code mdadm --detail} shows it, from a read-only assembly
 * (nothing is written, no pass starts). Files the assembly leaves out as stale are listed as faulty;
 * an array that cannot be assembled, or that another process holds open, is described from its
 * superblocks.
 */
@Command(
        header = "Show an array's state and members, like mdadm --detail.",
        name = "detail",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Show the array the MEMBER files make up, like mdadm --detail: identity, geometry, state, "
                    + "member counts and a table of members. Assembles read-only: the files are not changed.",
            "While another process (e.g. raid serve) holds the array, its superblocks are shown and the holder "
                    + "named: the live state is the holder's.",
            "Exit codes as mdadm --detail --test: 0 healthy, 1 degraded, 2 failed or cannot be assembled, "
                    + "4 a member cannot be opened or holds no usable superblock."
        })
final class DetailCommand extends Verb {
    @Option(names = "--json", description = "Print the report as JSON.")
    boolean json;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Option(
            names = "--scan",
            description = "Print the ARRAY line, as mdadm --detail --scan (with devices= under -v); "
                    + "without MEMBER or --array, one for each ARRAY of the config file.")
    boolean scan;

    @Option(names = "--brief", description = "Print only the ARRAY line, as mdadm --detail --brief.")
    boolean brief;

    @Override
    public Integer call() throws Exception {
        if (scan && source.array == null && source.given.isEmpty()) {
            return scanConfig();
        }
        members = source.members();
        Members.checkDistinct(members);
        Survey survey;
        try {
            survey = Survey.of(members);
        } catch (SuperblockException | IOException e) {
            throw new CliException(ExitCode.DETAIL_UNREADABLE, ErrorHandler.message(e), e);
        }
        DetailReport report;
        try (ArraySession session = ArraySession.assemble(members, ArraySession.READ_ONLY)) {
            report = DetailReport.of(session.array().status(), survey.top(), stale(survey, session));
        } catch (MemberInUseException held) {
            report = DetailReport.ofHeld(survey, heldBy(held));
        } catch (ArrayConfigException refused) {
            report = DetailReport.ofSuperblocks(survey, refused.getMessage());
        }
        if (scan || brief) {
            out().println(ArraySource.arrayLine(survey.top(), verbosity.level() > 0 ? members : null, false));
        } else {
            out().print(json ? Json.write(report.json(members)) : report.text(members));
        }
        out().flush();
        return report.exitCode();
    }

    /** An ARRAY line for each array of the config, from its members' superblocks; the worst exit. */
    private int scanConfig() throws Exception {
        ArrayConfig cfg = ArrayConfig.find(source.config);
        if (cfg == null || cfg.arrays().isEmpty()) {
            throw CliException.usage("--scan without MEMBER or --array lists the arrays of the config file, and "
                    + (cfg == null
                            ? "there is none (--config FILE, RAID_CONFIG, " + ArrayConfig.DEFAULT_PATHS + ")"
                            : cfg.file() + " has no ARRAY line"));
        }
        int exit = ExitCode.OK;
        for (ArrayConfig.Entry e : cfg.arrays()) {
            try {
                List<String> found =
                        ArraySource.resolve(e.uuid() != null ? e.uuid() : e.token(), cfg, new ArrayList<>());
                Survey survey = Survey.of(found);
                out().println(ArraySource.arrayLine(survey.top(), verbosity.level() > 0 ? found : null, false));
            } catch (Exception ex) {
                say(e.token() + ": " + ErrorHandler.message(ex));
                exit = ExitCode.USAGE;
            }
        }
        out().flush();
        return exit;
    }

    /** "another process (pid 1234: raid serve ...)" from the refusal, as short as it can be said. */
    static String heldBy(MemberInUseException held) {
        String m = held.getMessage();
        int at = m.indexOf(" is in use by ");
        if (at < 0) {
            return m;
        }
        String by = m.substring(at + " is in use by ".length());
        int end = by.indexOf("; it is a member of");
        return end < 0 ? by : by.substring(0, end);
    }

    /** The survey entries of the files assembly left out. */
    private static List<Survey.Entry> stale(Survey survey, ArraySession session) throws IOException {
        List<Survey.Entry> out = new ArrayList<>();
        for (AssemblyReport.LeftOut l : session.array().assemblyReport().leftOut()) {
            for (Survey.Entry e : survey.entries()) {
                if (session.disk(e.spec()) == l.disk()) {
                    out.add(e);
                }
            }
        }
        return out;
    }
}
