package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The real NBD tools (fio, nbdkit, nbdinfo, qemu-img) for the integration tests: each run is
 * bounded in time and runs in a scratch directory (fio leaves state files in its working
 * directory); a test is skipped, naming the package, when its tool is missing.
 */
final class Tools {
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly)));
    }

    private Tools() {}

    static void assumeInstalled(String tool, String aptPackage) {
        String path = System.getenv("PATH");
        boolean found = path != null
                && Arrays.stream(path.split(File.pathSeparator))
                        .anyMatch(dir -> Files.isExecutable(Path.of(dir, tool)));
        Assumptions.assumeTrue(found, tool + " is not installed (apt-get install " + aptPackage + ")");
    }

    record Result(int exit, String output) {}

    /** Runs to completion in {@code dir} (stdout and stderr merged); fails the test on timeout. */
    static Result run(Path dir, Duration timeout, List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "tool", ".log");
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        LIVE.add(p);
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                fail(String.join(" ", command) + " did not finish within " + timeout + ":\n" + Files.readString(log));
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            LIVE.remove(p);
            Files.deleteIfExists(log);
        }
    }

    /** The mdadm binary, or null where it is not installed. */
    static String mdadm() {
        for (String p : List.of("/usr/sbin/mdadm", "/sbin/mdadm", "/usr/bin/mdadm")) {
            if (java.nio.file.Files.isExecutable(Path.of(p))) {
                return p;
            }
        }
        return null;
    }

    /** True when a loop device can be attached here (root, /dev/loop-control, losetup). */
    static boolean canLoop() {
        try {
            Result r = run(
                    Path.of(System.getProperty("java.io.tmpdir")), Duration.ofSeconds(30), List.of("losetup", "-f"));
            return r.exit() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** A read-only loop device over {@code image}. */
    static String loopAttach(Path image) throws IOException, InterruptedException {
        return runOk(image.getParent(), Duration.ofSeconds(30), "losetup", "-r", "-f", "--show", image.toString())
                .trim();
    }

    static void loopDetach(String loop) throws IOException, InterruptedException {
        run(Path.of(System.getProperty("java.io.tmpdir")), Duration.ofSeconds(30), List.of("losetup", "-d", loop));
    }

    static String runOk(Path dir, Duration timeout, String... command) throws IOException, InterruptedException {
        Result r = run(dir, timeout, List.of(command));
        if (r.exit() != 0) {
            fail(String.join(" ", command) + " exited " + r.exit() + ":\n" + r.output());
        }
        return r.output();
    }

    /** Starts a long-running tool with its output in {@code log}; killed at JVM exit if still alive. */
    static Process start(Path dir, List<String> command, Path log) throws IOException {
        return track(new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start());
    }

    /** Kills {@code p} at JVM exit if it is still alive then (a test that timed out leaves no server behind). */
    static Process track(Process p) {
        LIVE.add(p);
        p.onExit().thenRun(() -> LIVE.remove(p));
        return p;
    }

    /** An {@code nbdkit -f} on a Unix socket {@code dir/NAME.sock}; SIGKILLed by {@link #close()}. */
    record Nbdkit(Process process, String uri) implements AutoCloseable {
        static Nbdkit unix(Path dir, String name, String... args) throws IOException, InterruptedException {
            assumeInstalled("nbdkit", "nbdkit");
            Path socket = dir.resolve(name + ".sock");
            List<String> command = new ArrayList<>(List.of("nbdkit", "-f", "-U", socket.toString()));
            command.addAll(List.of(args));
            Process p = start(dir, command, dir.resolve(name + ".log"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!Files.exists(socket)) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    fail("nbdkit " + String.join(" ", args) + " did not start:\n"
                            + Files.readString(dir.resolve(name + ".log")));
                }
                Thread.sleep(20);
            }
            return new Nbdkit(p, "nbd+unix:///?socket=" + socket);
        }

        void kill() throws InterruptedException {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            kill();
        }
    }
}
