package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code raid serve} process started through the real launcher: waits for its "serving URI"
 * line, and stops it with a signal as an operator would. Its stderr is collected line by line.
 */
final class Served implements AutoCloseable {
    private static final Pattern SERVING = Pattern.compile("^raid serve: serving (\\S+) \\(array size (\\d+) bytes");

    private final Process process;
    private final List<String> stderr = new ArrayList<>();
    private final CompletableFuture<byte[]> stdout;
    private final String uri;
    private final long size;
    private final Thread reader;

    private Served(
            Process process,
            String uri,
            long size,
            CompletableFuture<byte[]> stdout,
            List<String> lines,
            Thread reader) {
        this.process = process;
        this.uri = uri;
        this.size = size;
        this.stdout = stdout;
        this.reader = reader;
        synchronized (stderr) {
            stderr.addAll(lines);
        }
    }

    /** Starts {@code raid serve ARGS...} in {@code dir} and waits (up to 60 s) for the line naming the URI. */
    static Served start(Path dir, String... args) throws IOException, InterruptedException {
        return start(dir, null, args);
    }

    /** As {@link #start(Path, String...)}, with live counters in {@code runDir} (RAID_RUN_DIR) when not null. */
    static Served start(Path dir, Path runDir, String... args) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(List.of("serve"));
        all.addAll(List.of(args));
        // env --default-signal: SIGINT reaches the JVM even when the test runs with it ignored (a background job).
        List<String> prefix = new ArrayList<>(List.of("/usr/bin/env", "--default-signal=INT,TERM"));
        if (runDir != null) {
            prefix.add("RAID_RUN_DIR=" + runDir);
        }
        Process p =
                RaidLauncher.builder(dir, prefix, all.toArray(new String[0])).start();
        Tools.track(p);
        CompletableFuture<byte[]> out = RaidLauncher.drain(p.getInputStream());
        BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        List<String> early = new ArrayList<>();
        CompletableFuture<Matcher> found = new CompletableFuture<>();
        Served[] self = new Served[1];
        Thread reader = new Thread(
                () -> {
                    try {
                        String line;
                        while ((line = err.readLine()) != null) {
                            synchronized (early) {
                                if (self[0] != null) {
                                    self[0].addLine(line);
                                } else {
                                    early.add(line);
                                }
                            }
                            Matcher m = SERVING.matcher(line);
                            if (m.find()) {
                                found.complete(m);
                            }
                        }
                        found.completeExceptionally(new IOException("raid serve ended without serving"));
                    } catch (IOException e) {
                        found.completeExceptionally(e);
                    }
                },
                "raid-serve-stderr");
        reader.setDaemon(true);
        reader.start();
        Matcher m;
        try {
            m = found.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            reader.join(2000);
            synchronized (early) {
                fail("raid serve " + String.join(" ", args) + " did not start serving (exit "
                        + (p.isAlive() ? "-" : p.exitValue()) + "):\n" + String.join("\n", early));
            }
            throw new AssertionError(e);
        }
        synchronized (early) {
            Served s = new Served(p, m.group(1), Long.parseLong(m.group(2)), out, early, reader);
            self[0] = s;
            return s;
        }
    }

    private void addLine(String line) {
        synchronized (stderr) {
            stderr.add(line);
        }
    }

    String uri() {
        return uri;
    }

    long size() {
        return size;
    }

    Process process() {
        return process;
    }

    /** stderr so far, one line each. */
    String stderr() {
        synchronized (stderr) {
            return String.join("\n", stderr);
        }
    }

    /** Waits up to {@code seconds} for a stderr line containing {@code text}. */
    boolean awaitLine(String text, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (stderr().contains(text)) {
                return true;
            }
            Thread.sleep(50);
        }
        return false;
    }

    /** Sends SIGINT or SIGTERM and waits (up to 60 s) for the exit code; all of stderr is then in {@link #stderr()}. */
    int stop(String signal) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                .inheritIO()
                .start()
                .waitFor();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("raid serve did not stop within 60 s of SIG" + signal + ":\n" + stderr());
        }
        reader.join(5000);
        stdout.join();
        return process.exitValue();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                stop("TERM");
            } catch (IOException | InterruptedException e) {
                process.destroyForcibly();
                throw new UncheckedIOException(new IOException("stopping raid serve", e));
            }
        }
    }
}
