package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/** Runs the real NBD tools (nbdkit, nbdinfo, qemu-img, fio) from tests, bounded in time. */
final class ExternalTools {
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly)));
    }

    private ExternalTools() {}

    static boolean onPath(String tool) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        return Arrays.stream(path.split(File.pathSeparator)).anyMatch(dir -> Files.isExecutable(Path.of(dir, tool)));
    }

    /** Skips the test (with the package to install) unless {@code tool} is on the PATH. */
    static void assumeInstalled(String tool, String aptPackage) {
        Assumptions.assumeTrue(onPath(tool), tool + " is not installed (apt-get install " + aptPackage + ")");
    }

    record Result(int exitCode, String output) {}

    /**
     * Runs a command to completion in a scratch directory (tools such as fio drop state files in
     * their working directory); output is stdout and stderr merged. Fails the test on timeout.
     */
    static Result run(Duration timeout, List<String> command) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("nbd-tool");
        Path log = dir.resolve("output.log");
        try {
            Process process = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            LIVE.add(process);
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                    fail(String.join(" ", command) + " did not finish within " + timeout + "; output:\n"
                            + Files.readString(log, StandardCharsets.UTF_8));
                }
                return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
            } finally {
                LIVE.remove(process);
            }
        } finally {
            try (var files = Files.list(dir)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    static Result run(Duration timeout, String... command) throws IOException, InterruptedException {
        return run(timeout, List.of(command));
    }

    /** Runs and fails the test, with the output, unless the exit code is 0. */
    static String runOk(Duration timeout, String... command) throws IOException, InterruptedException {
        Result result = run(timeout, command);
        if (result.exitCode() != 0) {
            fail(String.join(" ", command) + " exited " + result.exitCode() + "; output:\n" + result.output());
        }
        return result.output();
    }

    /** Starts a long-running process with output to {@code log}; killed at JVM exit if still alive. */
    static Process start(List<String> command, Path log) throws IOException {
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
        return process;
    }
}
