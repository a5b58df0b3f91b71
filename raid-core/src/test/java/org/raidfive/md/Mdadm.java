package org.raidfive.md;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs the real mdadm as an independent reader of what we write (test code,
 * reusable by any package's tests). Tests that need it call
 * {@link #assumeInstalled()} so they are skipped, with a message saying how to
 * install it, where mdadm is missing; CI installs Debian's package.
 *
 * <p>Only read-only commands are meant here ({@code --examine} and friends):
 * they work on plain files and need neither root nor the md driver.
 */
public final class Mdadm {
    private static final String[] CANDIDATES = {"/usr/sbin/mdadm", "/sbin/mdadm", "/usr/bin/mdadm", "/bin/mdadm"};
    private static final long TIMEOUT_SECONDS = 30;

    private Mdadm() {}

    /** What one mdadm run did. */
    public record Result(int exitCode, String stdout, String stderr) {
        /** stdout then stderr, for assertion messages. */
        public String all() {
            return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }

    /** System property naming the mdadm to use instead of searching (e.g. a newer build; a missing path skips). */
    public static final String BINARY_PROPERTY = "raidfive.mdadm";

    /** The mdadm binary: {@value #BINARY_PROPERTY} if set, else the usual sbin paths, else PATH. */
    public static Optional<Path> binary() {
        final String override = System.getProperty(BINARY_PROPERTY);
        if (override != null) {
            return Optional.of(Paths.get(override)).filter(Files::isExecutable);
        }
        final List<Path> candidates = new ArrayList<>();
        for (final String c : CANDIDATES) {
            candidates.add(Paths.get(c));
        }
        final String path = System.getenv("PATH");
        if (path != null) {
            for (final String dir : path.split(java.io.File.pathSeparator)) {
                if (!dir.isEmpty()) {
                    candidates.add(Paths.get(dir, "mdadm"));
                }
            }
        }
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    /** Skips the calling test unless mdadm is installed. */
    public static Path assumeInstalled() {
        final Optional<Path> mdadm = binary();
        Assumptions.assumeTrue(
                mdadm.isPresent(),
                "mdadm is not installed (Debian: apt-get install mdadm); skipping the check against the real mdadm");
        return mdadm.get();
    }

    /** {@code mdadm --version} as printed (mdadm prints it on stderr). */
    public static String version() {
        final Result r = run("--version");
        return (r.stdout() + r.stderr()).trim();
    }

    /** Runs mdadm with {@code args}, no stdin, C locale, 30 s timeout. */
    public static Result run(final String... args) {
        final Path mdadm = assumeInstalled();
        final List<String> command = new ArrayList<>();
        command.add(mdadm.toString());
        command.addAll(List.of(args));
        final ProcessBuilder builder =
                new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(nullDevice()));
        builder.environment().put("LC_ALL", "C");
        builder.environment().put("TZ", "UTC");
        try {
            final Process process = builder.start();
            final CompletableFuture<String> out = drain(process.getInputStream());
            final CompletableFuture<String> err = drain(process.getErrorStream());
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(
                        "mdadm " + String.join(" ", args) + " did not finish in " + TIMEOUT_SECONDS + " s");
            }
            return new Result(process.exitValue(), out.join(), err.join());
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot run " + command, ex);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted running mdadm", ex);
        }
    }

    /** {@code mdadm --examine FILE}. */
    public static Result examine(final Path member) {
        return run("--examine", member.toString());
    }

    /**
     * {@code mdadm --examine FILE} as {@code "Key" -> "value"} (e.g. {@code "Raid Devices" -> "4"}),
     * in mdadm's order; fails the test with mdadm's output if it exits non-zero.
     */
    public static Map<String, String> examineFields(final Path member) {
        final Result r = examine(member);
        if (r.exitCode() != 0) {
            throw new AssertionError("mdadm --examine " + member + " failed:\n" + r.all());
        }
        final Map<String, String> fields = new LinkedHashMap<>();
        for (final String line : r.stdout().split("\n")) {
            final int colon = line.indexOf(" : ");
            if (colon > 0) {
                fields.put(
                        line.substring(0, colon).trim(),
                        line.substring(colon + 3).trim());
            }
        }
        return fields;
    }

    /** {@code mdadm --examine --export FILE} as {@code KEY -> value} (MD_LEVEL, MD_UUID, ...). */
    public static Map<String, String> examineExport(final Path member) {
        final Result r = run("--examine", "--export", member.toString());
        if (r.exitCode() != 0) {
            throw new AssertionError("mdadm --examine --export " + member + " failed:\n" + r.all());
        }
        final Map<String, String> fields = new LinkedHashMap<>();
        for (final String line : r.stdout().split("\n")) {
            final int eq = line.indexOf('=');
            if (eq > 0) {
                fields.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return fields;
    }

    /**
     * Writes a member image mdadm can examine: a sparse file of {@code memberBytes}
     * whose 4 KiB block at {@link Superblock#SUPERBLOCK_OFFSET} holds {@code sb}, then zeros.
     */
    public static Path writeMember(final Path file, final long memberBytes, final Superblock sb) {
        final byte[] block = new byte[Superblock.MAX_SUPERBLOCK_BYTES];
        sb.encode(ByteBuffer.wrap(block));
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(memberBytes);
            raf.seek(Superblock.SUPERBLOCK_OFFSET);
            raf.write(block);
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot write member image " + file, ex);
        }
        return file;
    }

    private static java.io.File nullDevice() {
        return new java.io.File("/dev/null");
    }

    private static CompletableFuture<String> drain(final InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                in.transferTo(bytes);
                return bytes.toString(StandardCharsets.UTF_8);
            } catch (final IOException ex) {
                throw new UncheckedIOException(ex);
            }
        });
    }
}
