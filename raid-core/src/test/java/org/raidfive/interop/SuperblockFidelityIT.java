package org.raidfive.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.DataOffset;
import org.raidfive.md.MdTime;
import org.raidfive.md.Superblock;

/**
 * Minimal reproductions, without a VM, of two differences between the superblocks raidfive writes
 * and what Linux md and mdadm expect, found by {@link RaidfiveToMdIT} and {@link MdToRaidfiveIT}
 * against the real kernel (Linux 6.1, mdadm 4.2). Part of the md interop suite, so they run where
 * it runs.
 */
class SuperblockFidelityIT {
    @TempDir
    Path dir;

    /**
     * md_p.h describes {@code ctime} as 40 bits of seconds and 24 of microseconds, but mdadm writes
     * whole seconds ({@code time(0)}) and Linux 6.1 reads all 64 bits as seconds
     * ({@code super_1_validate}: {@code mddev->ctime = le64_to_cpu(sb->ctime)}). With microseconds
     * set, the kernel reports the array created in 2106 (GET_ARRAY_INFO clamps to U32_MAX), and
     * {@code mdadm --detail}, which only uses a member superblock whose ctime equals the kernel's
     * (Detail.c), prints no Name, UUID or Events for the array.
     */
    @Test
    void raidfiveWritesTheCreationTimeInWholeSecondsAsMdadmDoes() throws Exception {
        List<MemberDisk> disks = List.of(new MemoryDisk(4 << 20), new MemoryDisk(4 << 20), new MemoryDisk(4 << 20));
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(64 * 1024).assumeClean(true).build(), disks)) {
            ByteBuffer block = ByteBuffer.allocateDirect(Superblock.MAX_SUPERBLOCK_BYTES);
            disks.get(0).read(Superblock.SUPERBLOCK_OFFSET, block, 0, Superblock.MAX_SUPERBLOCK_BYTES);
            Superblock sb = Superblock.decode(block, "m0");
            assertEquals(
                    0,
                    MdTime.micros(sb.ctime()),
                    "ctime 0x" + Long.toHexString(sb.ctime()) + " carries "
                            + MdTime.micros(sb.ctime()) + " microseconds in its top 24 bits: Linux reads it as "
                            + Long.toUnsignedString(sb.ctime()) + " seconds");
        }
    }

    /**
     * mdadm 4.2 reserves an 8-sector bad block log 16 sectors after the superblock of every member
     * it creates here ({@code bblog_size 8, bblog_offset 16}), and the kernel keeps it. When raidfive
     * rewrites such a member's superblock (at every assembly) it writes {@code bblog_*} as 0: from
     * then on md cannot record a bad block on that member and fails the whole member on a write
     * error instead ({@code super_1_sync}: bad blocks with {@code bblog_offset == 0} -> md_error),
     * and mdadm --examine no longer shows the log. This takes a member as mdadm lays it out (an
     * array raidfive made, given mdadm's bad block log fields) through one raidfive assembly.
     */
    @Test
    void raidfiveKeepsTheBadBlockLogMdadmReservedOnAMember() throws Exception {
        List<Path> files = List.of(dir.resolve("a.img"), dir.resolve("b.img"), dir.resolve("c.img"));
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(64 * 1024).assumeClean(true).build(),
                Workbench.openNew(files, 8L << 20))) {
            array.flush();
        }
        for (Path f : files) {
            Superblock sb = ExamineCheck.decode(f);
            sb.bblogShift(0)
                    .bblogSize(DataOffset.BAD_BLOCK_LOG_SECTORS)
                    .bblogOffset(DataOffset.badBlockLogOffset(sb.size()));
            byte[] block = new byte[Superblock.MAX_SUPERBLOCK_BYTES];
            sb.encode(ByteBuffer.wrap(block));
            try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
                raf.seek(Superblock.SUPERBLOCK_OFFSET);
                raf.write(block);
            }
        }
        Raid5Array.assemble(Workbench.open(files)).close();
        Superblock after = ExamineCheck.decode(files.get(0));
        assertEquals(
                DataOffset.BAD_BLOCK_LOG_SECTORS + "/" + DataOffset.badBlockLogOffset(after.size()),
                after.bblogSize() + "/" + after.bblogOffset(),
                "bblog_size/bblog_offset after raidfive assembled " + "and closed the array (events " + after.events()
                        + ")");
    }
}
