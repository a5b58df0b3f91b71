package org.raidfive.cli;

import java.util.List;
import java.util.Locale;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncAction;
import org.raidfive.array.SyncLimits;
import org.raidfive.array.SyncProgress;
import org.raidfive.bench.Sizes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid rebuild}: runs what the array needs, in the foreground, as md's recovery thread would:
 * recovery onto a rebuilding member or a spare, or a pending resync. Ctrl-C stops it at the next
 * stripe with the checkpoint (recovery_offset / resync_offset) on disk; running it again resumes.
 */
@Command(
        header = "Run or resume recovery (or a pending resync), with progress.",
        name = "rebuild",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Run or resume the array's recovery onto a spare or replacement (or a pending resync) in the "
                    + "foreground, with progress.",
            "Ctrl-C stops it cleanly with the progress checkpointed on the members; run the same command again to "
                    + "resume. Exit 0 when the array ends whole, 1 when it is still degraded or the pass failed."
        })
final class RebuildCommand extends Verb {
    @Mixin
    SpeedOptions speed;

    @Option(
            names = "--force",
            description = "Start an array that is dirty and degraded anyway (md's --force) and "
                    + "rebuild it: stripes written at the crash may rebuild wrong data (the RAID-5 write hole).")
    boolean force;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.members();
        SyncLimits limits = speed.limits();
        try (ArraySession probe = session(members, ArraySession.READ_ONLY.withForce(force))) {
            ArrayStatus s = probe.array().status();
            boolean rebuilding = s.members().stream().anyMatch(m -> m.state() == MemberState.REBUILDING);
            boolean spare = s.members().stream().anyMatch(m -> m.state() == MemberState.SPARE);
            boolean resyncPending = s.resyncPending();
            if (!rebuilding && !(s.degraded() && spare) && !resyncPending) {
                if (s.degraded()) {
                    throw new CliException(
                            ExitCode.PROBLEM,
                            s.name() + " is degraded and has no spare to rebuild onto;"
                                    + " add one first: raid add --spare FILE " + source.again(members));
                }
                say(s.name() + " is in sync: nothing to rebuild");
                return ExitCode.OK;
            }
        }
        ArrayStatus end;
        try (ArraySession session = session(
                        members, ArraySession.READ_WRITE.withSyncLimits(limits).withForce(force));
                SigintGuard guard = SigintGuard.install(
                        session,
                        err(),
                        "rebuild",
                        "progress is saved on the members. Resume with: raid rebuild " + source.again(members))) {
            Raid5Array array = session.array();
            Progress progress = Progress.on(err());
            while (!guard.stopped()) {
                // Nothing runs here, so status() is safe (see Passes: it must not race a finishing recovery).
                ArrayStatus before = array.status();
                SyncAction started = array.startSync();
                if (started == null) {
                    break;
                }
                say(describe(before, started));
                SyncProgress p = progress.follow(array, guard::stopped);
                // The engine chains the next pass as a recovery completes (another spare, a pending resync).
                while (!guard.stopped() && p != null && p.complete() && Passes.running(array)) {
                    say("then " + array.syncProgress().action());
                    p = progress.follow(array, guard::stopped);
                }
                if (guard.stopped()) {
                    break;
                }
                if (p != null && !p.complete()) {
                    throw new CliException(
                            ExitCode.PROBLEM,
                            p.action() + " stopped at "
                                    + String.format(Locale.ROOT, "%.1f%%", p.percent())
                                    + (p.error() == null ? "" : ": " + p.error()));
                }
            }
            if (guard.stopped()) {
                awaitShutdown();
            }
            end = array.status();
        }
        if (end.failed()) {
            throw new CliException(ExitCode.PROBLEM, end.name() + " has FAILED");
        }
        say(end.name() + " is " + end.state() + ": " + end.activeMembers() + " of " + end.raidDisks()
                + " members in sync" + (end.spareMembers() > 0 ? ", " + end.spareMembers() + " spare" : ""));
        return end.degraded() ? ExitCode.PROBLEM : ExitCode.OK;
    }

    /**
     * What the pass just started does, from the status taken before it started: recovery goes onto
     * the member already rebuilding, else onto a spare the array takes into the missing slot.
     */
    static String describe(ArrayStatus before, SyncAction started) {
        if (started == SyncAction.RECOVER) {
            for (ArrayStatus.MemberStatus m : before.members()) {
                if (m.state() == MemberState.REBUILDING) {
                    return "recovering slot " + m.slot() + " onto " + m.name()
                            + (m.replacement() ? " (replacement)" : "")
                            + (m.recoveryOffset() > 0 ? ", resuming at " + Sizes.human(m.recoveryOffset()) : "");
                }
            }
            List<String> spares = before.members().stream()
                    .filter(m -> m.state() == MemberState.SPARE)
                    .map(ArrayStatus.MemberStatus::name)
                    .toList();
            return "recovering the missing member onto " + (spares.size() == 1 ? spares.get(0) : "a spare");
        }
        return started == SyncAction.RESYNC ? "resyncing parity" : started.toString();
    }

    /** Ctrl-C arrived: the shutdown hook owns the array now; wait for the JVM to finish exiting. */
    static void awaitShutdown() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
