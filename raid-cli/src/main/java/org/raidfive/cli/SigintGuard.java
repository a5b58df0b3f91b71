package org.raidfive.cli;

import java.io.PrintWriter;
import java.util.Locale;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncProgress;

/**
 * Ctrl-C during a foreground pass: a shutdown hook stops the pass at the next stripe (its
 * checkpoint, md's recovery_offset or resync_offset, goes to disk), closes the array cleanly and
 * says how to resume. The command's thread asks {@link #stopped()} so it goes quiet meanwhile.
 * Closing the guard after a normal end removes the hook.
 */
final class SigintGuard implements AutoCloseable {
    private final Thread hook;
    private volatile boolean stopped;

    private SigintGuard(Raid5Array array, AutoCloseable closer, PrintWriter err, String verb, String afterText) {
        this.hook = new Thread(
                () -> {
                    stopped = true;
                    try {
                        SyncProgress p = array.syncProgress();
                        array.stopSync();
                        SyncProgress at = array.syncProgress();
                        closer.close();
                        SyncProgress shown = at != null ? at : p;
                        err.println();
                        err.println("raid " + verb + ": interrupted"
                                + (shown == null
                                        ? ""
                                        : String.format(
                                                Locale.ROOT, " at %.1f%% of %s", shown.percent(), shown.action()))
                                + "; " + afterText);
                    } catch (Exception e) {
                        err.println("raid " + verb + ": interrupted; closing the array failed: " + e.getMessage());
                    }
                    err.flush();
                },
                "raid-sigint");
    }

    static SigintGuard install(ArraySession session, PrintWriter err, String verb, String afterText) {
        return install(session.array(), session, err, verb, afterText);
    }

    /** Guards {@code array}; {@code closer} closes it (and whatever else must be closed) idempotently. */
    static SigintGuard install(Raid5Array array, AutoCloseable closer, PrintWriter err, String verb, String afterText) {
        SigintGuard g = new SigintGuard(array, closer, err, verb, afterText);
        Runtime.getRuntime().addShutdownHook(g.hook);
        return g;
    }

    boolean stopped() {
        return stopped;
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs or ran: it owns the close
        }
    }
}
