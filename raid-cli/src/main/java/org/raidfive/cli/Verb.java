package org.raidfive.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.AssemblyReport;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every verb shares: {@code -v}, the output streams, and the convention that data and reports
 * go to stdout while progress and messages about what was done go to stderr (as mdadm does).
 */
abstract class Verb implements Callable<Integer> {
    @Mixin
    Verbosity verbosity;

    @Spec
    CommandSpec spec;

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** {@code raid <verb>}. */
    String name() {
        return spec.qualifiedName();
    }

    /** One message line on stderr: {@code raid <verb>: <message>}. */
    void say(String message) {
        err().println(name() + ": " + message);
        err().flush();
    }

    private final Set<String> reported = new HashSet<>();

    /**
     * Assembles the array of {@code specs} for this command and says, once per command, what the
     * assembly left out or forced (a command that probes read-only first does not say it twice).
     */
    ArraySession session(List<String> specs, AssembleOptions options) throws IOException {
        ArraySession s = ArraySession.assemble(specs, options);
        report(s.array().assemblyReport());
        return s;
    }

    ArraySession readOnlySession(List<String> specs) throws IOException {
        return session(specs, ArraySession.READ_ONLY);
    }

    ArraySession readWriteSession(List<String> specs) throws IOException {
        return session(specs, ArraySession.READ_WRITE);
    }

    /** mdadm's words for what assembly did beyond the obvious; left-out members with how to get them back. */
    void report(AssemblyReport report) {
        for (AssemblyReport.Forced f : report.forced()) {
            line("forcing event count in " + f.member() + "(" + f.slot() + ") from "
                    + Long.toUnsignedString(f.fromEvents()) + " upto " + Long.toUnsignedString(f.toEvents())
                    + "; clearing its FAULTY flag");
        }
        if (report.resyncForced()) {
            line("marked the array dirty: a resync (raid rebuild) recomputes parity over what was being written");
        }
        for (AssemblyReport.LeftOut l : report.leftOut()) {
            line("leaving out " + l.disk().name() + ": " + l.reason() + "; raid add --spare "
                    + l.disk().name() + " to rebuild it");
        }
        for (String repaired : report.repaired()) {
            line(repaired);
        }
    }

    private void line(String message) {
        if (reported.add(message)) {
            say(message);
        }
    }

    /** {@code specs} and {@code one} more. */
    static List<String> with(List<String> specs, String one) {
        List<String> all = new ArrayList<>(specs);
        all.add(one);
        return all;
    }

    /** The member list as the operator would type it again. */
    static String join(List<String> specs) {
        StringBuilder s = new StringBuilder();
        for (String m : specs) {
            if (s.length() > 0) {
                s.append(' ');
            }
            s.append(m.matches("[A-Za-z0-9_./:@%+=,-]+") ? m : "'" + m.replace("'", "'\\''") + "'");
        }
        return s.toString();
    }
}
