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
