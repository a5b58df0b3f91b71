package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C during {@code raid rebuild}: SIGINT stops the pass with its checkpoint (the rebuilding
 * member's recovery_offset) on disk, and the next {@code raid rebuild} resumes and completes.
 */
@Timeout(180)
class RebuildInterruptIT {
    @TempDir
    Path dir;

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    @Test
    void ctrlCCheckpointsAndTheNextRebuildResumes() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/env")), "needs env --default-signal");
        List<String> m = List.of("a.img", "b.img", "c.img", "d.img");
        assertEquals(
                0,
                RaidLauncher.run(dir, with(List.of("create", "--size", "64M"), m))
                        .exit());
        byte[] data = MemberFiles.random(4 << 20, 9);
        assertEquals(
                0,
                RaidLauncher.run(dir, data, with(List.of("write", "--offset", "32M"), m))
                        .exit());
        assertEquals(
                0,
                RaidLauncher.run(dir, with(List.of("fail", "--member", "b.img"), m))
                        .exit());
        List<String> rest = List.of("a.img", "c.img", "d.img");
        assertEquals(
                0,
                RaidLauncher.run(dir, with(List.of("add", "--spare", "e.img"), rest))
                        .exit());
        List<String> now = List.of("a.img", "c.img", "d.img", "e.img");

        // SIGINT must reach the JVM even if this test runs with SIGINT ignored (a background job):
        // env --default-signal=INT restores the default disposition before the launcher starts.
        Process p = RaidLauncher.builder(
                        dir,
                        List.of("/usr/bin/env", "--default-signal=INT"),
                        with(List.of("rebuild", "--speed-limit-max", "2M"), now))
                .start();
        CompletableFuture<byte[]> out = RaidLauncher.drain(p.getInputStream());
        StringBuilder err = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                err.append(line).append('\n');
                if (line.startsWith("recover:")) {
                    break; // the pass runs
                }
            }
            Thread.sleep(2500);
            new ProcessBuilder("kill", "-INT", Long.toString(p.pid()))
                    .inheritIO()
                    .start()
                    .waitFor();
            while ((line = r.readLine()) != null) {
                err.append(line).append('\n');
            }
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "rebuild stopped after SIGINT:\n" + err);
        out.join();
        assertEquals(130, p.exitValue(), err.toString());
        assertTrue(err.toString().contains("raid rebuild: interrupted at "), err.toString());
        assertTrue(err.toString().contains("progress is saved"), err.toString());

        RaidLauncher.Result exam = RaidLauncher.run(dir, "examine", "--json", "e.img");
        long recovered = LifecycleIT.jsonLong(exam.out(), "recoveryOffsetSectors");
        long total = LifecycleIT.jsonLong(exam.out(), "usedDevSectors");
        assertTrue(
                recovered > 0 && recovered < total,
                "recovery offset " + recovered + " of " + total + "\n" + exam.out());
        assertEquals("clean", LifecycleIT.jsonString(exam.out(), "state"), "closed cleanly");
        RaidLauncher.Result detail = RaidLauncher.run(dir, with(List.of("detail"), now));
        assertEquals(1, detail.exit(), detail.all());
        assertTrue(detail.out().contains("Rebuild Status : "), detail.out());

        RaidLauncher.Result resumed = RaidLauncher.run(dir, with(List.of("rebuild"), now));
        assertEquals(0, resumed.exit(), resumed.all());
        assertTrue(resumed.stderr().contains("resuming at "), resumed.all());
        assertEquals(0, RaidLauncher.run(dir, with(List.of("detail"), now)).exit());
        assertEquals(0, RaidLauncher.run(dir, with(List.of("check"), now)).exit());
        RaidLauncher.Result read = RaidLauncher.run(
                dir, with(List.of("read", "--offset", "32M", "--length", "4M"), List.of("e.img", "c.img", "a.img")));
        assertEquals(MemberFiles.sha256(data), MemberFiles.sha256(read.stdout()), read.all());
    }
}
