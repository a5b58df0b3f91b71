package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.raidfive.array.OnlineReshape;
import org.raidfive.array.ReshapeCounters;
import org.raidfive.array.ReshapeState;
import org.raidfive.array.SyncLimits;
import org.raidfive.bench.Sizes;
import org.raidfive.nbd.NbdServer;
import org.raidfive.nbd.NbdServerConfig;
import org.raidfive.stats.CountersFile;

/**
 * {@code raid serve} of an array whose members record a reshape under way (raidfive's or Linux
 * md's): the array is exported at the size md gives it during the reshape, each request mapped as
 * md maps it at the reshape's position, and, unless {@code --read-only}, the reshape continues in
 * the background meanwhile (md continues a reshape when it assembles the array) and clients' writes
 * are served (one into the batch being moved waits for it, as md holds the window being reshaped). When a grow ends, connections made from
 * then on are told the new size (NBD has no notice of a size change for those already open). An
 * array with a write-intent bitmap is
 * served read-only. A stop (Ctrl-C, SIGTERM, {@code raid stop}) answers the requests in flight,
 * stops the reshape at the next batch with its position checkpointed on every member, and marks
 * the members clean. The array is the library's {@link OnlineReshape}: {@code raid serve} adds the
 * export and the operator's lines.
 */
final class ServedReshape {
    private final ServeCommand verb;
    private final ArraySource source;
    private final List<String> members;

    ServedReshape(ServeCommand verb, ArraySource source, List<String> members) {
        this.verb = verb;
        this.source = source;
        this.members = members;
    }

    /** Serves until {@code signals} says stop; {@code readOnly}: the reshape waits, nothing is written. */
    int serve(NbdServerConfig config, StopSignals signals, SyncLimits limits, boolean readOnly) throws Exception {
        try (MemberSet set = Members.openAll(members, readOnly)) {
            // paused: the data moves once the export is up (a refused export writes nothing)
            OnlineReshape online = readOnly ? OnlineReshape.readOnly(set.disks()) : OnlineReshape.paused(set.disks());
            ReshapeState reshape = online.state();
            String name = reshape.name();
            String noWrites = readOnly ? null : reshape.whyNoWrites();
            NbdServer server;
            try {
                server = NbdServer.start(
                        online,
                        config.toBuilder()
                                .readOnly(readOnly || noWrites != null)
                                .description("raidfive RAID-5 " + name + ", mid-reshape")
                                .build());
            } catch (IOException e) {
                online.close();
                throw new CliException(ExitCode.USAGE, e.getMessage(), e);
            }
            verb.say("serving " + server.uri() + " (array size " + reshape.reshapingArrayBytes() + " bytes = "
                    + Sizes.human(reshape.reshapingArrayBytes()) + ", " + name + " mid-reshape at "
                    + percent(reshape, reshape.position()) + ", " + ReshapeRun.describe(reshape)
                    + (readOnly || noWrites != null ? ", read-only)" : ", read-write)"));
            if (noWrites != null) {
                verb.say(noWrites + ": clients' writes are refused (EPERM)");
            }
            if (reshape.missingMember() != null) {
                verb.say(
                        name + ": " + reshape.missingMember() + " is recorded faulty: its chunks are read from parity");
            }
            if (reshape.resyncDue()) {
                verb.say(name + " was written to mid-reshape and not stopped cleanly: it stays dirty, and its resync "
                        + "is due when the reshape has ended (raid serve runs it when it starts again)");
            }
            publishCounters(online, config);
            if (readOnly) {
                verb.say("--read-only: the reshape waits, as in md's read-only assembly; nothing is written");
            } else {
                online.start(limits, new Progress(reshape));
                online.completion().whenComplete((done, failure) -> {
                    if (failure != null) {
                        verb.say(name + ": the reshape stopped: " + failure.getMessage());
                        signals.trigger("the reshape failed");
                    } else if (done) {
                        verb.say(name + ": reshape done, " + reshape.newDisks() + " members, chunk "
                                + Sizes.chunk(reshape.newChunkBytes()) + ", array "
                                + Sizes.human(reshape.newArrayBytes())
                                + (reshape.newArrayBytes() > reshape.reshapingArrayBytes()
                                        ? "; new connections see the new size (those open keep "
                                                + Sizes.human(reshape.reshapingArrayBytes())
                                                + " until they reconnect)"
                                        : ""));
                    }
                });
                verb.say(name + ": the reshape continues in the background; "
                        + (noWrites == null ? "reads and writes" : "reads") + " are served throughout");
            }
            String why = signals.await();
            verb.say("stopping (" + why + "): answering the requests in flight, then stopping the reshape");
            int exit = ExitCode.OK;
            try {
                server.close();
            } catch (IOException e) {
                verb.say("closing the server failed: " + e.getMessage());
                exit = ExitCode.PROBLEM;
            }
            try {
                online.close(); // stops at the next batch, checkpointed; marks clean unless it failed
            } catch (IOException e) {
                verb.say("stopping the reshape failed: " + e.getMessage());
                return ExitCode.PROBLEM;
            }
            if (online.completion().isCompletedExceptionally()) {
                return ExitCode.PROBLEM; // the members stay dirty if written to: the resync is due
            }
            if (online.completion().join()) {
                verb.say("stopped; " + name + " reshaped (assemble or serve it as usual: " + "raid serve "
                        + source.again(members) + ")");
            } else {
                verb.say("stopped; " + name + " at " + percent(reshape, reshape.position())
                        + (readOnly
                                ? ", unchanged"
                                : " of its reshape, the position checkpointed on every member (raid serve or raid "
                                        + "grow --continue continues it: raid grow --continue " + source.again(members)
                                        + ")"));
            }
            return reshape.missingMember() != null ? ExitCode.PROBLEM : exit;
        }
    }

    /**
     * Live counters and events for raid stat, raid monitor and raid stop, in the run directory, as
     * raid serve publishes an array's; without them if they cannot be made.
     */
    private void publishCounters(OnlineReshape online, NbdServerConfig config) {
        Path file = CountersFile.pathFor(LiveArrays.directory(), online.state().uuid());
        ReshapeCounters counters;
        try {
            counters = online.publishCounters(file);
        } catch (IOException | IllegalStateException e) {
            verb.say("serving without live counters (raid stop will not find this server): " + e.getMessage());
            return;
        }
        verb.say("live counters and events in " + file + " (raid stat, raid monitor)");
        if (config.unixSocket() != null) {
            try {
                counters.recordServerSocket(config.unixSocket()); // for raid stop --socket
            } catch (IOException e) {
                verb.say("raid stop --socket will not find this server: " + e.getMessage());
            }
        }
    }

    private static String percent(ReshapeState r, long position) {
        return String.format(
                Locale.ROOT,
                "%.1f%%",
                r.sectorsTotal() == 0 ? 100 : 100.0 * r.sectorsDone(position) / r.sectorsTotal());
    }

    /** Says each tenth of the way, and a member left out, once; on the reshape's thread. */
    private final class Progress implements java.util.function.LongConsumer {
        private final ReshapeState reshape;
        private long tenth;
        private boolean toldMissing;

        Progress(ReshapeState reshape) {
            this.reshape = reshape;
            this.tenth = tenthOf(reshape.position());
            this.toldMissing = reshape.missingMember() != null;
        }

        private long tenthOf(long position) {
            return reshape.sectorsTotal() == 0 ? 10 : 10 * reshape.sectorsDone(position) / reshape.sectorsTotal();
        }

        @Override
        public void accept(long position) {
            ReshapeState r = reshape;
            if (!toldMissing && r.missingMember() != null) {
                toldMissing = true;
                verb.say(r.name() + ": " + r.missingMember() + " failed and is recorded faulty on the "
                        + "other members; the reshape goes on degraded, as md's does");
            }
            long t = tenthOf(position);
            if (t > tenth && t < 10) {
                tenth = t;
                verb.say(r.name() + ": reshape at " + percent(r, position));
            }
        }
    }
}
