package org.raidfive.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.raidfive.bench.Json;
import org.raidfive.stats.CountersFile;
import org.raidfive.stats.Stat;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid stat}: a running array's live counters, read from another process (its counters
 * file): /proc/mdstat's state line and iostat's table, per array and per member.
 */
@Command(
        name = "stat",
        header = "Show a running array's live counters, like /proc/mdstat and iostat.",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Reads the counters a running array publishes (raid serve does) from another process: state, "
                    + "the pass's progress, and per array and per member reads, writes, bytes, errors, corrected reads, "
                    + "I/O in flight (md's nr_pending, active_aligned_reads) and stripe lock waits.",
            "Without MEMBER, --array or --file: every running array on this machine.",
            "Totals since the array started; with --watch, rates over each interval, as iostat.",
            "Exit codes: 0 shown, 1 no running array found, 2 bad input."
        })
final class StatCommand extends Verb {
    @Mixin
    LiveArrays arrays;

    @Option(
            names = "--json",
            description =
                    "Print JSON: one document for one array; with several arrays or " + "--watch, one object per line.")
    boolean json;

    @Option(
            names = "--watch",
            paramLabel = "SECONDS",
            arity = "0..1",
            fallbackValue = "1",
            description = "Print again every SECONDS (default 1) with the rates of the interval, until interrupted.")
    Double watch;

    @Option(names = "--count", paramLabel = "N", description = "With --watch: stop after N reports.")
    Integer count;

    private boolean severalArrays;

    @Override
    public Integer call() throws Exception {
        if (watch != null && !(watch > 0)) {
            throw CliException.usage("--watch takes a positive number of seconds, got " + watch);
        }
        if (count != null && (count < 1 || watch == null)) {
            throw CliException.usage(count < 1 ? "--count must be at least 1" : "--count goes with --watch");
        }
        List<Path> files = arrays.files();
        if (files.isEmpty()) {
            say("no running array publishes live counters in " + LiveArrays.directory());
            return ExitCode.PROBLEM;
        }
        List<CountersFile> open = new ArrayList<>();
        try {
            for (Path p : files) {
                CountersFile f = LiveArrays.open(p);
                if (!f.writerAlive()) {
                    say(p + ": left by process " + f.pid() + ", which is gone (a stale file)");
                    f.close();
                    continue;
                }
                open.add(f);
            }
            if (open.isEmpty()) {
                return ExitCode.PROBLEM;
            }
            severalArrays = open.size() > 1;
            if (watch == null) {
                for (CountersFile f : open) {
                    print(f, snapshot(f), null, 0);
                }
                out().flush();
                return ExitCode.OK;
            }
            StopSignals signals = StopSignals.install(err(), name());
            List<Map<String, Map<Stat, Long>>> last = new ArrayList<>();
            long lastNanos = System.nanoTime();
            for (CountersFile f : open) {
                last.add(snapshot(f));
            }
            for (int report = 0; count == null || report < count; report++) {
                if (signals.await((long) (watch * 1000)) != null) {
                    break;
                }
                long now = System.nanoTime();
                double seconds = (now - lastNanos) / 1e9;
                lastNanos = now;
                for (int i = 0; i < open.size(); i++) {
                    Map<String, Map<Stat, Long>> s = snapshot(open.get(i));
                    print(open.get(i), s, last.get(i), seconds);
                    last.set(i, s);
                }
                out().flush();
            }
            return ExitCode.OK;
        } finally {
            for (CountersFile f : open) {
                f.close();
            }
        }
    }

    /** scope ("array" or a member's name) to its counters. */
    static Map<String, Map<Stat, Long>> snapshot(CountersFile f) {
        Map<String, Map<Stat, Long>> s = new LinkedHashMap<>();
        for (CountersFile.Counter c : f.read()) {
            s.computeIfAbsent(c.scope(), k -> new LinkedHashMap<>()).put(c.stat(), c.value());
        }
        return s;
    }

    private void print(
            CountersFile f, Map<String, Map<Stat, Long>> now, Map<String, Map<Stat, Long>> before, double seconds) {
        Map<Stat, Long> a = now.getOrDefault("array", Map.of());
        if (json) {
            Map<String, Object> o = Json.object();
            o.put("array", f.arrayName());
            o.put("uuid", f.arrayUuid());
            o.put("pid", f.pid());
            o.put("state", arrayState(a));
            if (before != null) {
                o.put("interval_seconds", seconds);
            }
            Map<String, Object> scopes = Json.object();
            for (Map.Entry<String, Map<Stat, Long>> e : now.entrySet()) {
                Map<String, Object> v = Json.object();
                for (Map.Entry<Stat, Long> c : e.getValue().entrySet()) {
                    v.put(
                            c.getKey().label(),
                            c.getKey() == Stat.STATE && !e.getKey().equals("array")
                                    ? memberState(c.getValue())
                                    : c.getKey() == Stat.STATE ? arrayState(a) : c.getValue());
                }
                if (before != null) {
                    Map<Stat, Long> b = before.getOrDefault(e.getKey(), Map.of());
                    v.put("reads_per_second", rate(e.getValue(), b, Stat.READS, seconds));
                    v.put("writes_per_second", rate(e.getValue(), b, Stat.WRITES, seconds));
                    v.put("read_bytes_per_second", rate(e.getValue(), b, Stat.READ_BYTES, seconds));
                    v.put("write_bytes_per_second", rate(e.getValue(), b, Stat.WRITE_BYTES, seconds));
                }
                scopes.put(e.getKey(), v);
            }
            o.put("counters", scopes);
            // One array: one JSON document. Several, or --watch: one object per line (JSON Lines).
            out().print(before == null && !severalArrays ? Json.write(o) : Json.line(o));
            return;
        }
        StringBuilder head = new StringBuilder(
                f.arrayName() + " (" + f.arrayUuid() + ", raid serve pid " + f.pid() + "): " + arrayState(a));
        long total = a.getOrDefault(Stat.SYNC_TOTAL_BYTES, 0L);
        if (total > 0) {
            long pos = a.getOrDefault(Stat.SYNC_POSITION_BYTES, 0L);
            head.append(String.format(
                    Locale.ROOT,
                    ", %s %.1f%% (%d/%d MiB) at %.1f MiB/s",
                    a.getOrDefault(Stat.RESHAPING, 0L) == 1 ? "reshape" : "pass",
                    100.0 * pos / total,
                    pos >> 20,
                    total >> 20,
                    a.getOrDefault(Stat.SYNC_RATE, 0L) / 1048576.0));
        }
        head.append(", ").append(a.getOrDefault(Stat.EVENTS, 0L)).append(" events");
        out().println(head);
        if (before == null) {
            out().printf(
                            "%-28s %12s %12s %10s %10s %7s %9s %8s%n",
                            "", "reads", "writes", "read MiB", "write MiB", "errors", "corrected", "pending");
        } else {
            out().printf(
                            "%-28s %10s %10s %10s %10s %7s %8s%n",
                            "", "r/s", "w/s", "rMiB/s", "wMiB/s", "errors", "pending");
        }
        for (Map.Entry<String, Map<Stat, Long>> e : now.entrySet()) {
            Map<Stat, Long> v = e.getValue();
            boolean array = e.getKey().equals("array");
            String label = array ? "array" : e.getKey() + " [" + memberState(v.getOrDefault(Stat.STATE, 0L)) + "]";
            long pending = array ? v.getOrDefault(Stat.ACTIVE_ALIGNED_READS, 0L) : v.getOrDefault(Stat.NR_PENDING, 0L);
            if (before == null) {
                out().printf(
                                Locale.ROOT,
                                "%-28s %12d %12d %10.1f %10.1f %7d %9s %8d%n",
                                shorten(label),
                                v.getOrDefault(Stat.READS, 0L),
                                v.getOrDefault(Stat.WRITES, 0L),
                                v.getOrDefault(Stat.READ_BYTES, 0L) / 1048576.0,
                                v.getOrDefault(Stat.WRITE_BYTES, 0L) / 1048576.0,
                                v.getOrDefault(Stat.ERRORS, 0L),
                                array ? "-" : Long.toString(v.getOrDefault(Stat.CORRECTED_READ_SECTORS, 0L)),
                                pending);
            } else {
                Map<Stat, Long> b = before.getOrDefault(e.getKey(), Map.of());
                out().printf(
                                Locale.ROOT,
                                "%-28s %10.0f %10.0f %10.1f %10.1f %7d %8d%n",
                                shorten(label),
                                rate(v, b, Stat.READS, seconds),
                                rate(v, b, Stat.WRITES, seconds),
                                rate(v, b, Stat.READ_BYTES, seconds) / 1048576.0,
                                rate(v, b, Stat.WRITE_BYTES, seconds) / 1048576.0,
                                v.getOrDefault(Stat.ERRORS, 0L),
                                pending);
            }
        }
        out().println();
    }

    private static double rate(Map<Stat, Long> now, Map<Stat, Long> before, Stat s, double seconds) {
        return seconds <= 0 ? 0 : (now.getOrDefault(s, 0L) - before.getOrDefault(s, 0L)) / seconds;
    }

    private static String shorten(String s) {
        return s.length() <= 28 ? s : "..." + s.substring(s.length() - 25);
    }

    static String arrayState(Map<Stat, Long> a) {
        long s = a.getOrDefault(Stat.STATE, 0L);
        return s == 3 ? "FAILED" : s == 2 ? "degraded" : s == 1 ? "active" : "clean";
    }

    static String memberState(long code) {
        switch ((int) code) {
            case 0:
                return "in sync";
            case 1:
                return "rebuilding";
            case 2:
                return "spare";
            case 3:
                return "faulty";
            default:
                return "removed";
        }
    }
}
