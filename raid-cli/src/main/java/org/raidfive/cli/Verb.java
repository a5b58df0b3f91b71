package org.raidfive.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
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

    private final java.util.Set<String> reported = new java.util.HashSet<>();

    /**
     * Assembles the array of {@code specs} for this command and says, once per command, what the
     * assembly left out or forced (a command that probes read-only first does not say it twice).
     */
    ArraySession session(java.util.List<String> specs, org.raidfive.array.AssembleOptions options)
            throws java.io.IOException {
        ArraySession s = ArraySession.assemble(specs, options);
        report(s.array().assemblyReport());
        return s;
    }

    ArraySession readOnlySession(java.util.List<String> specs) throws java.io.IOException {
        return session(specs, ArraySession.READ_ONLY);
    }

    ArraySession readWriteSession(java.util.List<String> specs) throws java.io.IOException {
        return session(specs, ArraySession.READ_WRITE);
    }

    /** mdadm's words for what assembly did beyond the obvious; left-out members with how to get them back. */
    void report(org.raidfive.array.AssemblyReport report) {
        for (org.raidfive.array.AssemblyReport.Forced f : report.forced()) {
            line("forcing event count in " + f.member() + "(" + f.slot() + ") from "
                    + Long.toUnsignedString(f.fromEvents()) + " upto " + Long.toUnsignedString(f.toEvents())
                    + "; clearing its FAULTY flag");
        }
        if (report.resyncForced()) {
            line("marked the array dirty: a resync (raid rebuild) recomputes parity over what was being written");
        }
        for (org.raidfive.array.AssemblyReport.LeftOut l : report.leftOut()) {
            line("leaving out " + l.disk().name() + ": " + l.reason() + "; raid add --spare " + l.disk().name()
                    + " to rebuild it");
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
    static java.util.List<String> with(java.util.List<String> specs, String one) {
        java.util.List<String> all = new java.util.ArrayList<>(specs);
        all.add(one);
        return all;
    }

    /** The member list as the operator would type it again. */
    static String join(java.util.List<String> specs) {
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
