package org.raidfive.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.raidfive.bench.Json;
import org.raidfive.stats.CountersFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid monitor}: a running array's events as they happen, in {@code mdadm --monitor}'s words,
 * read from another process (the events the array broadcasts in its counters file).
 */
@Command(
        name = "monitor",
        header = "Print a running array's events as they happen, like mdadm --monitor.",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Follows the events a running array (raid serve) broadcasts: Fail, DegradedArray, "
                    + "RebuildStarted, Rebuild20..Rebuild80, RebuildFinished, SpareActive (mdadm --monitor's words), and "
                    + "MemberRemoved, SpareAdded, ArrayFailed, Clean, Dirty. Each line: time, event, array, member, detail.",
            "Without MEMBER, --array or --file: every running array on this machine. An array that stops is "
                    + "reported as DeviceDisappeared; the command ends on SIGINT/SIGTERM (exit 0) or when no array is left.",
            "Exit codes: 0 stopped on request or every array stopped, 1 no running array found, 2 bad input."
        })
final class MonitorCommand extends Verb {
    @Mixin
    LiveArrays arrays;

    @Option(names = "--json", description = "One JSON object per event (JSON Lines).")
    boolean json;

    @Option(names = "--test", description = "First print a TestMessage for each array, as mdadm --monitor --test.")
    boolean test;

    @Option(
            names = "--delay",
            paramLabel = "MILLIS",
            defaultValue = "100",
            description = "How often to look for new events (default: ${DEFAULT-VALUE} ms).")
    long delayMillis;

    @Override
    public Integer call() throws Exception {
        if (delayMillis < 1) {
            throw CliException.usage("--delay must be at least 1 ms, got " + delayMillis);
        }
        List<Path> files = arrays.files();
        List<CountersFile> open = new ArrayList<>();
        for (Path p : files) {
            CountersFile f = LiveArrays.open(p);
            if (f.writerAlive()) {
                open.add(f);
            } else {
                f.close();
            }
        }
        if (open.isEmpty()) {
            say("no running array publishes events in " + LiveArrays.directory());
            return ExitCode.PROBLEM;
        }
        StopSignals signals = StopSignals.install(err(), name());
        try {
            if (test) {
                for (CountersFile f : open) {
                    emit(Instant.now(), "TestMessage", f.arrayName(), null, "monitoring " + f.path(), -1);
                }
            }
            long[] lost = new long[open.size()];
            while (!open.isEmpty()) {
                for (int i = 0; i < open.size(); i++) {
                    CountersFile f = open.get(i);
                    f.pollEvents(line -> print(f, line));
                    if (f.lostEvents() != lost[i]) {
                        say(f.arrayName() + ": " + (f.lostEvents() - lost[i]) + " bursts of events were missed "
                                + "(this monitor fell behind)");
                        lost[i] = f.lostEvents();
                    }
                    if (!f.writerAlive() || !Files.exists(f.path())) {
                        f.pollEvents(line -> print(f, line));
                        emit(
                                Instant.now(),
                                "DeviceDisappeared",
                                f.arrayName(),
                                null,
                                "raid serve (pid " + f.pid() + ") has stopped",
                                -1);
                        f.close();
                        open.remove(i);
                        long[] shorter = new long[open.size()];
                        System.arraycopy(lost, 0, shorter, 0, i);
                        System.arraycopy(lost, i + 1, shorter, i, open.size() - i);
                        lost = shorter;
                        i--;
                    }
                }
                out().flush();
                if (signals.await(delayMillis) != null) {
                    break;
                }
            }
            return ExitCode.OK;
        } finally {
            for (CountersFile f : open) {
                f.close();
            }
        }
    }

    /** One broadcast event line: sequence, epoch millis, mdadm's word, kind, member, detail (tab-separated). */
    private void print(CountersFile f, String line) {
        String[] p = line.split("\t", -1);
        if (p.length < 6) {
            return;
        }
        emit(
                Instant.ofEpochMilli(Long.parseLong(p[1])),
                p[2],
                f.arrayName(),
                p[4].isEmpty() ? null : p[4],
                p[5].isEmpty() ? null : p[5],
                Long.parseLong(p[0]));
    }

    private void emit(Instant time, String event, String array, String member, String detail, long sequence) {
        if (json) {
            Map<String, Object> o = Json.object();
            o.put("time", time.toString());
            o.put("event", event);
            o.put("array", array);
            o.put("member", member);
            o.put("detail", detail);
            if (sequence >= 0) {
                o.put("sequence", sequence);
            }
            out().print(Json.line(o));
        } else {
            out().println(time + " " + event + " " + array + (member == null ? "" : " " + member)
                    + (detail == null ? "" : ": " + detail));
        }
        out().flush();
    }
}
