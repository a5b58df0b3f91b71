package org.raidfive.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the {@code raid} command line in-process with captured stdout and stderr. */
final class Cli {
    private Cli() {}

    record Result(int exit, String out, String err) {
        /** Everything, for assertion messages. */
        String all() {
            return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }

        /** The stderr lines that are not progress lines. */
        java.util.List<String> errLines() {
            return err.lines().filter(l -> !l.isBlank()).toList();
        }
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        picocli.CommandLine cmd = RaidCommand.newCommandLine();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int exit = cmd.execute(args);
        return new Result(exit, out.toString(), err.toString());
    }
}
