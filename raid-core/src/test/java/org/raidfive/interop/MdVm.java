package org.raidfive.interop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The md-vm tool ({@code /work/shared/md-vm}: Debian's kernel with md and mdadm under qemu) as
 * test code sees it: where it is, preparing its cache once, and one boot with a guest script and
 * image files.
 *
 * <p>Found at {@code $MD_VM}, else {@code <repo>/../shared/md-vm/md-vm}; when it is not there the
 * calling test is skipped (a JUnit assumption) with a message saying so. Its first run builds a
 * cache and needs root and apt: {@link #locate()} runs {@code md-vm --prepare} once per JVM, and a
 * failure there fails the test (the suite was asked for, and cannot run).
 */
final class MdVm {
    /** Environment variable naming the md-vm executable. */
    static final String ENV = "MD_VM";

    private static final Duration PREPARE_TIMEOUT = Duration.ofMinutes(15);
    private static boolean prepared;

    private final Path executable;

    private MdVm(Path executable) {
        this.executable = executable;
    }

    /** What one boot printed and returned. */
    record Boot(String name, int exitCode, List<String> lines, String stderr, Duration elapsed, Path log) {
        String describe() {
            return name + ": md-vm exit " + exitCode + " after " + elapsed.toSeconds() + " s (console log " + log
                    + ")\n--- stderr\n" + stderr;
        }
    }

    /** md-vm, prepared; skips the calling test when it is absent. */
    static synchronized MdVm locate() {
        Path exe = configuredPath();
        if (!Files.isExecutable(exe)) {
            String why = "md-vm not found at " + exe + " (set " + ENV + " to the md-vm executable; it lives in"
                    + " md-vm/ of the shared tools): skipping the Linux md interoperability suite";
            System.err.println(why); // a class-level skip shows no message in failsafe's summary
            Assumptions.assumeTrue(false, why);
        }
        MdVm vm = new MdVm(exe);
        if (!prepared) {
            vm.prepare();
            prepared = true;
        }
        return vm;
    }

    /** {@code $MD_VM}, else {@code <repo>/../shared/md-vm/md-vm}. */
    static Path configuredPath() {
        String env = System.getenv(ENV);
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        return repoRoot().resolveSibling("shared").resolve("md-vm").resolve("md-vm");
    }

    /**
     * The repository root: {@code raidfive.repo} if set (the md-interop profile sets it), else the
     * nearest directory at or above the working directory that holds {@code raid-core/pom.xml}.
     */
    static Path repoRoot() {
        String prop = System.getProperty("raidfive.repo");
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop).toAbsolutePath().normalize();
        }
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("raid-core").resolve("pom.xml"))) {
                return d;
            }
        }
        return dir;
    }

    private void prepare() {
        List<String> command = List.of(executable.toString(), "--prepare");
        try {
            Path out = Files.createTempFile("md-vm-prepare", ".log");
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            if (!p.waitFor(PREPARE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroy();
                throw new AssertionError("md-vm --prepare did not finish in " + PREPARE_TIMEOUT + " (" + out + ")");
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            Files.delete(out);
            if (p.exitValue() != 0) {
                throw new AssertionError("md-vm --prepare failed (exit " + p.exitValue() + "); its first run needs"
                        + " root and apt:\n" + text);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted preparing md-vm", e);
        }
    }

    /** SIGTERM first: md-vm then stops its own qemu; SIGKILL if it does not go. */
    private static void stop(Process p) {
        p.destroy();
        try {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Boots once: writes {@code script} to {@code dir/<name>.sh}, runs it in the guest with
     * {@code images} as /dev/vda, /dev/vdb, ... and returns the guest's output lines. The console is
     * kept in {@code dir/<name>.console}. md-vm's own timeout is {@code timeout}; this waits a minute
     * longer before killing it (md-vm stops its VM on SIGTERM).
     */
    Boot boot(String name, String script, List<Path> images, boolean snapshot, Duration timeout, Path dir) {
        if (images.size() > 26) {
            throw new IllegalArgumentException(name + ": " + images.size() + " images, md-vm attaches at most 26");
        }
        try {
            Files.createDirectories(dir);
            Path scriptFile = dir.resolve(name + ".sh");
            Files.writeString(scriptFile, script, StandardCharsets.UTF_8);
            Path console = dir.resolve(name + ".console");
            Path stdout = dir.resolve(name + ".out");
            Path stderr = dir.resolve(name + ".err");
            List<String> command = new ArrayList<>(List.of(
                    executable.toString(),
                    "--timeout",
                    Long.toString(timeout.toSeconds()),
                    "--log",
                    console.toString()));
            if (snapshot) {
                command.add("--snapshot");
            }
            command.add(scriptFile.toString());
            for (Path image : images) {
                command.add(image.toAbsolutePath().toString());
            }
            long start = System.nanoTime();
            Process p = new ProcessBuilder(command)
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            boolean ended;
            try {
                ended = p.waitFor(timeout.toSeconds() + 60, TimeUnit.SECONDS);
            } finally {
                if (p.isAlive()) {
                    stop(p); // timed out, or this thread was interrupted: take the VM down with us
                }
            }
            if (!ended) {
                throw new AssertionError(
                        name + ": md-vm did not end within " + timeout + " + 60 s; stopped it (" + dir + ")");
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            return new Boot(
                    name,
                    p.exitValue(),
                    Files.readAllLines(stdout, StandardCharsets.UTF_8),
                    Files.readString(stderr, StandardCharsets.UTF_8),
                    elapsed,
                    console);
        } catch (IOException e) {
            throw new UncheckedIOException(name + ": cannot run md-vm", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(name + ": interrupted waiting for md-vm", e);
        }
    }
}
