package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code raid stat} and {@code raid monitor} against a running {@code raid serve}, each in its own
 * process: a client (qemu-io) does known I/O, then a member file is truncated under the server so
 * that the next read of it fails. stat must show the I/O done and the member faulty; monitor must
 * print Fail and DegradedArray once each, in order, then the clean close and DeviceDisappeared,
 * and end by itself.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LiveCountersIT extends CliInTempDir {
    private static final Duration TOOL = Duration.ofSeconds(60);
    private static final List<String> MEMBERS = List.of("a.img", "b.img", "c.img", "d.img");

    @Test
    void statAndMonitorFollowAServedArrayFromOtherProcesses() throws Exception {
        Tools.assumeInstalled("qemu-io", "qemu-utils");
        RaidLauncher.Result created = RaidLauncher.run(
                dir, args(List.of("create", "--size", "16M", "--chunk", "64K", "--name", "live"), MEMBERS));
        assertEquals(0, created.exit(), created.all());
        Path sock = dir.resolve("live.sock");
        Process monitor = null;
        try (Served s = Served.start(dir, args(List.of("--socket", sock.toString()), MEMBERS))) {
            assertTrue(s.stderr().contains("live counters and events in"), s.stderr());
            monitor = RaidLauncher.builder(dir, List.of(), args(List.of("monitor", "--json", "--test"), MEMBERS))
                    .start();
            Tools.track(monitor);
            ByteArrayOutputStream events = new ByteArrayOutputStream();
            RaidLauncher.drain(monitor.getInputStream(), events);
            RaidLauncher.drain(monitor.getErrorStream());
            awaitOutput(events, "TestMessage");

            Tools.runOk(
                    dir,
                    TOOL,
                    "qemu-io",
                    "-f",
                    "raw",
                    s.uri(),
                    "-c",
                    "write -P 0x5a 0 1M",
                    "-c",
                    "read -P 0x5a 0 1M",
                    "-c",
                    "read -P 0x5a 0 1M");
            Thread.sleep(400); // two publications of the counters
            String stat = RaidLauncher.run(dir, args(List.of("stat", "--json"), MEMBERS))
                    .out();
            assertEquals(1, number(stat, "array", "writes"), stat);
            assertEquals(2, number(stat, "array", "reads"), stat);
            assertEquals(1 << 20, number(stat, "array", "write_bytes"), stat);
            assertEquals(2 << 20, number(stat, "array", "read_bytes"), stat);

            // The member shrinks under the server: its next read is an error, never zeros.
            try (FileChannel ch = FileChannel.open(dir.resolve("d.img"), StandardOpenOption.WRITE)) {
                ch.truncate(2 << 20);
            }
            Tools.runOk(dir, TOOL, "qemu-io", "-f", "raw", s.uri(), "-c", "read -P 0x5a 0 1M", "-c", "read 8M 4M");
            awaitOutput(events, "DegradedArray");
            Thread.sleep(400);
            RaidLauncher.Result text = RaidLauncher.run(dir, args(List.of("stat"), MEMBERS));
            assertEquals(0, text.exit(), text.all());
            String table = text.out();
            assertTrue(table.contains("live (") && table.contains("degraded"), table);
            assertTrue(table.lines().anyMatch(l -> l.startsWith("d.img [faulty]")), table);
            assertEquals(1, s.stop("TERM"), "raid serve exits 1 for a degraded array: " + s.stderr());

            assertTrue(monitor.waitFor(30, TimeUnit.SECONDS), "monitor did not end when the array stopped");
            assertEquals(0, monitor.exitValue());
            List<String> lines = events.toString(StandardCharsets.UTF_8).lines().toList();
            List<String> kinds = new ArrayList<>();
            for (String l : lines) {
                Matcher m = Pattern.compile("\"event\":\"(\\w+)\"").matcher(l);
                if (m.find()) {
                    kinds.add(m.group(1));
                }
            }
            assertEquals(1, kinds.stream().filter("Fail"::equals).count(), lines.toString());
            assertEquals(1, kinds.stream().filter("DegradedArray"::equals).count(), lines.toString());
            assertTrue(kinds.indexOf("Fail") < kinds.indexOf("DegradedArray"), lines.toString());
            String fail = lines.stream()
                    .filter(l -> l.contains("\"event\":\"Fail\""))
                    .findFirst()
                    .orElseThrow();
            assertTrue(fail.contains("d.img"), fail);
            assertEquals("TestMessage", kinds.get(0), lines.toString());
            assertEquals("DeviceDisappeared", kinds.get(kinds.size() - 1), lines.toString());
            assertTrue(kinds.indexOf("Dirty") < kinds.indexOf("Fail"), "the write's Dirty comes first: " + lines);
        } finally {
            if (monitor != null && monitor.isAlive()) {
                monitor.destroyForcibly();
            }
        }
        RaidLauncher.Result gone = RaidLauncher.run(dir, args(List.of("stat"), MEMBERS));
        assertEquals(1, gone.exit(), gone.all());
        assertTrue(gone.all().contains("is not running with live counters"), gone.all());
        assertFalse(
                Files.exists(RaidLauncher.RUN_DIR)
                        && Files.list(RaidLauncher.RUN_DIR)
                                .anyMatch(p -> p.toString().endsWith(".tmp")),
                "no temporary counters file left");
    }

    private static void awaitOutput(ByteArrayOutputStream out, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!out.toString(StandardCharsets.UTF_8).contains(what)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("monitor did not print " + what + " within 30 s: " + out);
            }
            Thread.sleep(20);
        }
    }

    /** The number {@code "stat": N} inside the {@code "scope": {...}} object of raid stat --json. */
    private static long number(String json, String scope, String stat) {
        int at = json.indexOf("\"" + scope + "\": {");
        assertTrue(at >= 0, "no " + scope + " in " + json);
        Matcher m = Pattern.compile("\"" + stat + "\": (\\d+)").matcher(json);
        assertTrue(m.find(at), "no " + stat + " in " + scope + ": " + json);
        return Long.parseLong(m.group(1));
    }
}
