package org.raidfive.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileDiskTest extends MemberDiskContract {
    @TempDir
    Path dir;
    private int files;

    @Override
    protected MemberDisk create(long size) throws IOException {
        return FileDisk.createOrExtend(dir.resolve("member" + files++ + ".img"), size, false);
    }

    @Test
    void createsSparseFilesAndExtendsSmallerOnes() throws IOException {
        Path p = dir.resolve("sparse.img");
        try (FileDisk d = FileDisk.createOrExtend(p, 1L << 30, false)) {
            assertEquals(1L << 30, d.size());
        }
        long allocated = allocatedBytes(p);
        assertTrue(allocated < (1 << 20), "a new 1 GiB member is sparse, allocated " + allocated);
        try (FileDisk d = FileDisk.createOrExtend(p, 2L << 30, false)) {
            assertEquals(2L << 30, d.size());
        }
        try (FileDisk d = FileDisk.open(p)) {
            assertEquals(2L << 30, d.size(), "reopening keeps the size");
        }
        assertTrue(Files.readAttributes(p, PosixFileAttributes.class).isRegularFile());
    }

    private static long allocatedBytes(Path p) throws IOException {
        Process du = new ProcessBuilder("du", "--block-size=1", p.toString()).redirectErrorStream(true).start();
        String out = new String(du.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        return Long.parseLong(out.trim().split("\\s+")[0]);
    }

    @Test
    void readOnlyOpenReadsAndRefusesWrites() throws IOException {
        Path p = dir.resolve("ro.img");
        try (FileDisk d = FileDisk.createOrExtend(p, 1 << 20, false)) {
            d.write(4096, java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}), 0, 3);
        }
        try (FileDisk d = FileDisk.openReadOnly(p)) {
            byte[] got = new byte[3];
            d.read(4096, java.nio.ByteBuffer.wrap(got), 0, 3);
            assertEquals(2, got[1]);
            IOException e = assertThrows(IOException.class, () -> d.write(0, java.nio.ByteBuffer.allocate(1), 0, 1));
            assertTrue(e.getMessage().contains("read-only"), e.getMessage());
            d.flush();
        }
    }

    @Test
    void openingAMissingFileNamesIt() {
        Path p = dir.resolve("absent.img");
        NoSuchFileException e = assertThrows(NoSuchFileException.class, () -> FileDisk.open(p));
        assertTrue(e.getMessage().contains("absent.img"), e.getMessage());
    }
}
