package org.raidfive.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code -v/--verbose}, accepted before or after the verb ({@code raid -v detail ...},
 * {@code raid detail -vv ...}); the count is kept on the top-level command. Quiet by default (only
 * errors from raid-core's log reach stderr), {@code -v} shows INFO and stack traces of errors,
 * {@code -vv} DEBUG, {@code -vvv} TRACE.
 */
public final class Verbosity {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    private int level;

    @Option(
            names = {"-v", "--verbose"},
            description = "Say more: -v logs what the engine does and shows stack "
                    + "traces of errors, -vv adds debug logs.")
    void setVerbose(boolean[] flags) {
        Verbosity top = top();
        top.level = Math.max(top.level, flags.length);
    }

    private Verbosity top() {
        Object root = mixee.root().userObject();
        return root instanceof RaidCommand r ? r.verbosity : this;
    }

    /** The level asked for anywhere on the command line. */
    int level() {
        return top().level;
    }

    /**
     * At the default level, also shows warnings of {@code logger} (e.g. the NBD server's refusals of
     * connections, which an operator running {@code raid serve} must see).
     */
    static void showWarnings(String logger, int level) {
        if (level <= 0 && LoggerFactory.getLogger(logger) instanceof Logger l) {
            l.setLevel(Level.WARN);
        }
    }

    /** Sets raid-core's log level for this run. */
    static void apply(int level) {
        Level l = level <= 0 ? Level.ERROR : level == 1 ? Level.INFO : level == 2 ? Level.DEBUG : Level.TRACE;
        if (LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME) instanceof Logger root) {
            root.setLevel(l);
        }
    }
}
