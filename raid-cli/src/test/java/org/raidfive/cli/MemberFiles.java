package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** Test helpers for member files: checksums to prove a refused command changed nothing, and byte surgery. */
final class MemberFiles {
    private MemberFiles() {}

    static String sha256(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 20];
            int n;
            while ((n = in.read(buf)) > 0) {
                sha.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** sha256 of each existing file, plus absence of the others, by path. */
    static Map<Path, String> snapshot(List<Path> files) {
        Map<Path, String> m = new LinkedHashMap<>();
        for (Path f : files) {
            m.put(f, Files.exists(f) ? sha256(f) + " " + size(f) : "absent");
        }
        return m;
    }

    static void assertUnchanged(Map<Path, String> before, String context) {
        assertEquals(before, snapshot(new ArrayList<>(before.keySet())), "member files changed by: " + context);
    }

    private static long size(Path f) {
        try {
            return Files.size(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] random(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Flips every bit of one byte in place. */
    static void flipByte(Path file, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.flip();
            byte v = b.get(0);
            b.put(0, (byte) ~v);
            ch.write(b, offset);
        }
    }

    /** A little-endian int at {@code offset} (superblock fields). */
    static int readIntLe(Path file, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(b, offset);
            return b.getInt(0);
        }
    }

    static List<String> names(List<Path> files) {
        List<String> out = new ArrayList<>();
        for (Path f : files) {
            out.add(f.toString());
        }
        return out;
    }

    /** The member file's superblock, as raidfive reads it. */
    static org.raidfive.md.Superblock superblock(String member) throws Exception {
        try (org.raidfive.disk.FileDisk d = org.raidfive.disk.FileDisk.open(Path.of(member))) {
            java.nio.ByteBuffer block = java.nio.ByteBuffer.allocate(4096).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            d.read(org.raidfive.md.Superblock.SUPERBLOCK_OFFSET, block, 0, 4096);
            return org.raidfive.md.Superblock.decode(block, member);
        }
    }

    /** Writes {@code sb} over the member file's superblock (to stage what a crash or another tool leaves). */
    static void writeSuperblock(String member, org.raidfive.md.Superblock sb) throws Exception {
        try (org.raidfive.disk.FileDisk d = org.raidfive.disk.FileDisk.open(Path.of(member))) {
            java.nio.ByteBuffer block = java.nio.ByteBuffer.allocate(4096).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            sb.encode(block);
            d.write(org.raidfive.md.Superblock.SUPERBLOCK_OFFSET, block.clear(), 0, 4096);
        }
    }
}
