package org.raidfive.interop;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * Where one suite keeps its files: {@code target/md-interop/<suite>/} holds the generated guest
 * scripts and console logs (kept for reading after a failure) and {@code images/} the member and
 * data images, made fresh for each run and deleted by {@link #deleteImages} (unless
 * {@code MD_INTEROP_KEEP} is set).
 */
final class Workbench {
    private final Path dir;
    private final Path images;

    private Workbench(Path dir) {
        this.dir = dir;
        this.images = dir.resolve("images");
    }

    static Workbench of(String suite) {
        String base = System.getProperty("raidfive.interop.out");
        Path root = base != null && !base.isBlank() ? Path.of(base) : Path.of("target", "md-interop");
        Workbench w = new Workbench(root.resolve(suite).toAbsolutePath());
        w.deleteImagesNow();
        try {
            Files.createDirectories(w.images);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w;
    }

    Path dir() {
        return dir;
    }

    /** A fresh sparse image of {@code bytes}. */
    Path image(String name, long bytes) {
        Path p = images.resolve(name + ".img");
        try {
            Files.deleteIfExists(p);
            try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
                f.setLength(bytes);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    List<Path> images(String prefix, int count, long bytes) {
        List<Path> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            list.add(image(prefix + "-" + i, bytes));
        }
        return list;
    }

    /** An image holding {@code data}. */
    Path dataImage(String name, byte[] data) {
        Path p = images.resolve(name + ".img");
        try {
            Files.write(p, data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    /** Fills the whole image with seeded random bytes (what a used disk holds before an array is made on it). */
    static void fillWithGarbage(Path image, long seed) {
        Random random = new Random(seed);
        byte[] block = new byte[1 << 20];
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            for (long pos = 0; pos < f.length(); pos += block.length) {
                random.nextBytes(block);
                f.seek(pos);
                f.write(block, 0, (int) Math.min(block.length, f.length() - pos));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<MemberDisk> open(List<Path> images) throws IOException {
        List<MemberDisk> disks = new ArrayList<>();
        for (Path p : images) {
            disks.add(FileDisk.open(p));
        }
        return disks;
    }

    /** Fresh sparse files of {@code bytes} each, opened as members. */
    static List<MemberDisk> openNew(List<Path> files, long bytes) throws IOException {
        List<MemberDisk> disks = new ArrayList<>();
        for (Path p : files) {
            disks.add(FileDisk.createOrExtend(p, bytes, false));
        }
        return disks;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    void deleteImages() {
        if (System.getenv("MD_INTEROP_KEEP") == null) {
            deleteImagesNow();
        }
    }

    private void deleteImagesNow() {
        if (!Files.exists(images)) {
            return;
        }
        try (Stream<Path> files = Files.walk(images)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
