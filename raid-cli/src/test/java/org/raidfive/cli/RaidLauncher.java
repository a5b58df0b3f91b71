package org.raidfive.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real {@code raid} launcher script at the repository root as a subprocess, on the jar
 * {@code mvn package} built ({@code RAID_JAR}). The integration tests drive the command only through
 * this, as an operator's shell would.
 */
final class RaidLauncher {
    /** The module directory (failsafe passes it; else the working directory). */
    static final Path MODULE = Path.of(System.getProperty("raid.module.dir", System.getProperty("user.dir")))
            .toAbsolutePath();

    static final Path ROOT = MODULE.getParent();
    static final Path LAUNCHER = ROOT.resolve("raid");
    static final Path JAR = Path.of(
            System.getProperty("raid.jar", MODULE.resolve("target/raid.jar").toString()));
    /**
     * JVM flags for the many short runs: C1 only and the serial collector start fastest on a small
     * machine (the arrays here are small). The launcher adds the class-data archive the build made.
     */
    static final Path RUN_DIR = MODULE.resolve("target/raid-run");

    static final String JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";
    private static final long TIMEOUT_SECONDS = 120;

    private RaidLauncher() {}

    record Result(int exit, byte[] stdout, String stderr, List<String> args) {
        String out() {
            return new String(stdout, StandardCharsets.UTF_8);
        }

        /** stderr lines that are not progress reports of a pass. */
        List<String> messages() {
            return stderr.lines()
                    .filter(l -> !l.isBlank() && !l.matches("^(recover|resync|check|repair): .*"))
                    .toList();
        }

        String all() {
            return "raid " + String.join(" ", args) + "\nexit " + exit + "\n--- stdout\n"
                    + (stdout.length > 4096 ? "(" + stdout.length + " bytes)\n" : out()) + "--- stderr\n" + stderr;
        }
    }

    static void checkBuilt() {
        if (!Files.isExecutable(LAUNCHER)) {
            throw new IllegalStateException("no executable launcher at " + LAUNCHER);
        }
        if (!Files.isRegularFile(JAR)) {
            throw new IllegalStateException(JAR + " is missing: run the tests with mvn verify (after package)");
        }
    }

    static ProcessBuilder builder(Path cwd, List<String> prefix, String... args) {
        checkBuilt();
        List<String> command = new ArrayList<>(prefix);
        command.add(LAUNCHER.toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile());
        pb.environment().put("RAID_JAR", JAR.toString());
        pb.environment().put("RAID_JAVA_OPTS", JAVA_OPTS);
        pb.environment().put("RAID_DIRECT_MEMORY", "2g");
        // Live counters of the served arrays go here, not to the machine's /dev/shm/raidfive.
        pb.environment().put("RAID_RUN_DIR", RUN_DIR.toString());
        return pb;
    }

    static Result run(Path cwd, String... args) {
        return run(cwd, null, args);
    }

    /** Runs to completion, feeding {@code stdin} (or nothing). */
    static Result run(Path cwd, byte[] stdin, String... args) {
        return run(cwd, stdin, List.of(), args);
    }

    /** Runs {@code prefix... ./raid args...} to completion (e.g. under {@code bash -c 'ulimit ...'}). */
    static Result run(Path cwd, byte[] stdin, List<String> prefix, String... args) {
        try {
            Process p = builder(cwd, prefix, args).start();
            ByteArrayOutputStream outSoFar = new ByteArrayOutputStream();
            ByteArrayOutputStream errSoFar = new ByteArrayOutputStream();
            CompletableFuture<byte[]> out = drain(p.getInputStream(), outSoFar);
            CompletableFuture<byte[]> err = drain(p.getErrorStream(), errSoFar);
            try (OutputStream in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin);
                }
            } catch (IOException closedEarly) {
                // the command refused before reading all of stdin
            }
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                // a thread dump (SIGQUIT prints it on the child's stdout) says where it hangs
                new ProcessBuilder("kill", "-QUIT", Long.toString(p.pid()))
                        .start()
                        .waitFor();
                Thread.sleep(2000);
                p.destroyForcibly();
                throw new AssertionError("raid " + String.join(" ", args) + " did not finish in " + TIMEOUT_SECONDS
                        + " s\n--- stderr so far\n" + snapshot(errSoFar) + "\n--- stdout so far\n"
                        + snapshot(outSoFar));
            }
            return new Result(p.exitValue(), out.join(), new String(err.join(), StandardCharsets.UTF_8), List.of(args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static CompletableFuture<byte[]> drain(InputStream in) {
        return drain(in, new ByteArrayOutputStream());
    }

    private static String snapshot(ByteArrayOutputStream b) {
        synchronized (b) {
            return b.toString(StandardCharsets.UTF_8);
        }
    }

    /** Reads {@code in} to its end on a thread of its own, into {@code sink} (readable meanwhile, under its lock). */
    static CompletableFuture<byte[]> drain(InputStream in, ByteArrayOutputStream sink) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try (in) {
                        byte[] buf = new byte[65536];
                        int n;
                        while ((n = in.read(buf)) > 0) {
                            synchronized (sink) {
                                sink.write(buf, 0, n);
                            }
                        }
                        synchronized (sink) {
                            return sink.toByteArray();
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                },
                task -> {
                    Thread t = new Thread(task, "raid-launcher-drain");
                    t.setDaemon(true);
                    t.start();
                });
    }

    static List<String> list(List<Path> files) {
        return MemberFiles.names(files);
    }

    /** {@code head} followed by the file names, as an argument array. */
    static String[] args(List<String> head, List<Path> files) {
        List<String> all = new ArrayList<>(head);
        all.addAll(list(files));
        return all.toArray(new String[0]);
    }
}
