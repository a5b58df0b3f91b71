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
        Process du = new ProcessBuilder("du", "--block-size=1", p.toString())
                .redirectErrorStream(true)
                .start();
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

    @Test
    void aFileThatShrankIsNeverGrownBackAndReadsPastItsEndFail() throws IOException {
        Path p = dir.resolve("shrinks.img");
        try (FileDisk d = FileDisk.createOrExtend(p, 1 << 20, false)) {
            d.write(0, java.nio.ByteBuffer.wrap(new byte[8192]), 0, 8192);
            try (java.nio.channels.FileChannel c =
                    java.nio.channels.FileChannel.open(p, java.nio.file.StandardOpenOption.WRITE)) {
                c.truncate(64 * 1024); // someone else truncates the member
            }
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4096);
            assertThrows(java.io.EOFException.class, () -> d.read(512 * 1024, b, 0, 4096), "never zeros");
            IOException e = assertThrows(IOException.class, () -> d.write(512 * 1024, b, 0, 4096));
            assertTrue(e.getMessage().contains("shrank"), e.getMessage());
            assertEquals(64 * 1024, Files.size(p), "not grown back");
            d.read(0, b, 0, 4096); // what is still there reads
        }
    }

    @Test
    void refreshSizeTakesTheRoomAFileGainedAndNeverShrinks() throws Exception {
        Path p = dir.resolve("growing");
        try (FileDisk d = FileDisk.createOrExtend(p, 1 << 20, false)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4096);
            assertThrows(java.io.EOFException.class, () -> d.write(3 << 19, b, 0, 4096), "past the end as opened");
            try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(p.toFile(), "rw")) {
                f.setLength(2 << 20); // someone extends the member
            }
            assertEquals(1 << 20, d.size(), "the size as learned until asked again");
            assertEquals(2 << 20, d.refreshSize());
            assertEquals(2 << 20, d.size());
            d.write(3 << 19, b, 0, 4096); // the new room takes writes
            try (java.nio.channels.FileChannel c =
                    java.nio.channels.FileChannel.open(p, java.nio.file.StandardOpenOption.WRITE)) {
                c.truncate(1 << 19);
            }
            assertEquals(2 << 20, d.refreshSize(), "a smaller file leaves the size as it was");
            IOException e = assertThrows(IOException.class, () -> d.write(3 << 19, b, 0, 4096));
            assertTrue(e.getMessage().contains("shrank"), e.getMessage());
        }
    }

    @Test
    void whatIsNotAFileOrBlockDeviceIsRefusedAtOnce() throws Exception {
        Path fifo = dir.resolve("pipe");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        long start = System.nanoTime();
        IOException e = assertThrows(IOException.class, () -> FileDisk.open(fifo));
        assertTrue(e.getMessage().contains("FIFO"), e.getMessage());
        assertThrows(IOException.class, () -> FileDisk.openReadOnly(fifo));
        assertThrows(IOException.class, () -> FileDisk.createOrExtend(fifo, 1 << 20, false));
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "refused without blocking");
        IOException chr = assertThrows(IOException.class, () -> FileDisk.open(Path.of("/dev/null")));
        assertTrue(chr.getMessage().contains("character device"), chr.getMessage());
        IOException d = assertThrows(IOException.class, () -> FileDisk.open(dir));
        assertTrue(d.getMessage().contains("directory"), d.getMessage());
    }

    @Test
    void closingOneOpenOfAFileKeepsAnotherOpensClaim() throws Exception {
        Path p = dir.resolve("claimed.img");
        try (FileDisk holder = FileDisk.createOrExtend(p, 1 << 20, false);
                DiskClaim claim = holder.claim(ClaimMode.EXCLUSIVE, "test holder")) {
            FileDisk.openReadOnly(p).close();
            FileDisk.open(p).close();
            try (FileDisk again = FileDisk.open(p)) {
                MemberInUseException e =
                        assertThrows(MemberInUseException.class, () -> again.claim(ClaimMode.SHARED, "second"));
                assertTrue(e.getMessage().contains("test holder"), e.getMessage());
            }
            assertTrue(
                    LockHolders.find(p) != null
                            && LockHolders.find(p).pid()
                                    == ProcessHandle.current().pid(),
                    "the OS lock is still this process's after other opens closed");
        }
        assertEquals(null, LockHolders.find(p), "released");
    }
}
