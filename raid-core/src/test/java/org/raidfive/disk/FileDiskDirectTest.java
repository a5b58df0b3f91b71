package org.raidfive.disk;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** FileDisk with O_DIRECT, on a directory of a filesystem that supports it (tmpfs does not). */
class FileDiskDirectTest extends MemberDiskContract {
    private Path dir;
    private int files;

    @BeforeEach
    void directory() throws IOException {
        Path base = Path.of(System.getProperty("java.io.tmpdir"));
        dir = Files.createTempDirectory(base, "filedisk-direct");
        dir.toFile().deleteOnExit();
        try (FileDisk probe = FileDisk.createOrExtend(dir.resolve("probe.img"), 1 << 20, true)) {
            probe.read(0, ByteBuffer.allocateDirect(8192).alignedSlice(4096), 0, 4096);
        } catch (IOException e) {
            assumeTrue(false, "O_DIRECT not supported under " + base + ": " + e);
        }
    }

    @Override
    protected MemberDisk create(long size) throws IOException {
        Path p = dir.resolve("member" + files++ + ".img");
        p.toFile().deleteOnExit();
        return FileDisk.createOrExtend(p, size, true);
    }

    @Override
    protected int alignment() {
        return FileDisk.DIRECT_ALIGNMENT;
    }

    @Test
    void misalignedDirectIoIsRefusedWithTheRule() throws IOException {
        MemberDisk d = disk(1 << 20);
        ByteBuffer b = ByteBuffer.allocateDirect(8192);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.read(512, b, 0, 4096));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("aligned to 4096"), e.getMessage());
    }
}
