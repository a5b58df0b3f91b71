package org.raidfive.cli;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncProgress;
import org.raidfive.bench.Json;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid check} and {@code raid repair}: md's scrub. Every stripe's parity is recomputed and
 * compared; the count of mismatched sectors is md's {@code mismatch_cnt} (counted per 4 KiB page).
 * Check assembles read-only and changes nothing; repair rewrites parity where it mismatches. An
 * array with a resync pending (not shut down cleanly) is resynced first by repair, as md's resync
 * takes precedence over a check; check refuses it, since it would count the stripes the crash tore.
 */
abstract class ScrubCommand extends Verb {
    @Option(names = "--json", description = "Print the result as JSON.")
    boolean json;

    @Mixin
    SpeedOptions speed;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    abstract boolean repair();

    @Override
    public Integer call() throws Exception {
        members = source.members();
        String verb = repair() ? "repair" : "check";
        long started = System.nanoTime();
        SyncProgress p;
        ArrayStatus status;
        boolean resyncedFirst = false;
        try (ArraySession session = session(
                        members,
                        (repair() ? ArraySession.READ_WRITE : ArraySession.READ_ONLY).withSyncLimits(speed.limits()));
                SigintGuard guard = SigintGuard.install(
                        session,
                        err(),
                        verb,
                        repair()
                                ? "parity fixed so far stays fixed; run raid repair again to finish"
                                : "nothing was changed; run raid check again")) {
            Raid5Array array = session.array();
            status = array.status();
            if (status.degraded()) {
                throw new CliException(
                        ExitCode.PROBLEM,
                        status.name() + " is degraded: parity cannot be checked; "
                                + "rebuild it first (raid add --spare FILE ..., raid rebuild ...)");
            }
            if (status.resyncPending()) {
                // md: a resync takes precedence over a check (md_check_recovery picks resync while
                // recovery_cp is not MaxSector); a check now would count the stripes the crash tore.
                if (!repair()) {
                    if (json) {
                        Map<String, Object> m = Json.object();
                        m.put("action", verb);
                        m.put("uuid", status.uuid());
                        m.put("name", status.name());
                        m.put("complete", false);
                        m.put("refused", "resync pending");
                        out().print(Json.write(m));
                        out().flush();
                    }
                    throw new CliException(
                            ExitCode.USAGE,
                            status.name() + " has a resync pending (it was not shut "
                                    + "down cleanly): the stripes written at the crash may not match until the resync "
                                    + "recomputes their parity, and md resyncs before it checks; run raid repair (it resyncs "
                                    + "first) or raid rebuild; nothing was checked");
                }
                say(status.name()
                        + " has a resync pending (it was not shut down cleanly): resyncing first, as md does");
                array.startSync();
                SyncProgress resync = Progress.on(err()).follow(array, guard::stopped);
                if (resync == null || !resync.complete()) {
                    if (guard.stopped()) {
                        RebuildCommand.awaitShutdown();
                    }
                    throw new CliException(
                            ExitCode.PROBLEM,
                            "the resync before the repair stopped"
                                    + (resync == null ? "" : String.format(Locale.ROOT, " at %.1f%%", resync.percent()))
                                    + (resync != null && resync.error() != null ? ": " + resync.error() : "")
                                    + "; run raid repair again");
                }
                resyncedFirst = true;
            }
            array.startCheck(repair());
            p = Progress.on(err()).follow(array, guard::stopped);
            if (guard.stopped()) {
                RebuildCommand.awaitShutdown();
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        if (p == null || !p.complete()) {
            throw new CliException(
                    ExitCode.PROBLEM,
                    verb + " stopped" + (p == null ? "" : String.format(Locale.ROOT, " at %.1f%%", p.percent()))
                            + (p != null && p.error() != null ? ": " + p.error() : ""));
        }
        long mismatches = p.mismatchSectors();
        if (json) {
            Map<String, Object> m = Json.object();
            m.put("action", verb);
            m.put("uuid", status.uuid());
            m.put("name", status.name());
            m.put("complete", true);
            m.put("mismatchSectors", mismatches);
            m.put("repaired", repair() ? mismatches : 0);
            m.put("resyncedFirst", resyncedFirst);
            m.put("memberBytes", p.totalBytes());
            m.put("seconds", seconds);
            out().print(Json.write(m));
        } else {
            out().println(verb + ": " + status.name() + ": " + mismatches + " mismatched sectors (mismatch_cnt)"
                    + (mismatches == 0
                            ? ", parity is consistent"
                            : repair() ? ", parity rewritten there" : ", run raid repair to rewrite parity"));
        }
        out().flush();
        return !repair() && mismatches > 0 ? ExitCode.PROBLEM : ExitCode.OK;
    }
}
