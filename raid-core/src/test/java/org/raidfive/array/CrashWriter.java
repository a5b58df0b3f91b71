package org.raidfive.array;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * The process {@link CrashRecoveryTest} kills: opens (or creates) an array of member files and writes
 * generations of self-describing 4 KiB blocks forever, flushing after each generation and then
 * printing {@code FLUSHED <gen>}. Which blocks a generation writes, and their bytes, follow from
 * the generation number alone, so the parent can tell what must have survived.
 */
public final class CrashWriter {
    static final int BLOCK = 4096;
    static final int BLOCKS_PER_GEN = 8;
    static final int MAGIC = 0x52414944;

    private CrashWriter() {}

    static int[] blocksOf(long gen, int blockCount) {
        Random r = new Random(gen * 1_000_003L);
        int[] out = new int[BLOCKS_PER_GEN];
        for (int i = 0; i < out.length; i++) {
            out[i] = r.nextInt(blockCount);
        }
        return out;
    }

    static void fillBlock(ByteBuffer buf, long gen, int block) {
        Random r = new Random(gen * 31 + block);
        byte[] payload = new byte[BLOCK - 24];
        r.nextBytes(payload);
        CRC32 crc = new CRC32();
        crc.update(payload);
        buf.putInt(0, MAGIC).putInt(4, block).putLong(8, gen).putLong(16, crc.getValue());
        buf.put(24, payload);
    }

    /** The generation a block holds, -1 for a never-written (zero) block; throws if it is torn or foreign. */
    static long generationOf(ByteBuffer buf, int block) {
        boolean zero = true;
        for (int i = 0; i < BLOCK && zero; i++) {
            zero = buf.get(i) == 0;
        }
        if (zero) {
            return -1;
        }
        if (buf.getInt(0) != MAGIC || buf.getInt(4) != block) {
            throw new AssertionError("block " + block + " holds foreign bytes");
        }
        byte[] payload = new byte[BLOCK - 24];
        buf.get(24, payload);
        CRC32 crc = new CRC32();
        crc.update(payload);
        if (crc.getValue() != buf.getLong(16)) {
            throw new AssertionError("block " + block + " is torn (crc mismatch, gen " + buf.getLong(8) + ")");
        }
        return buf.getLong(8);
    }

    static List<MemberDisk> open(Path dir, int members, long size, boolean create) throws IOException {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            Path p = dir.resolve("c" + i + ".img");
            disks.add(create ? FileDisk.createOrExtend(p, size, false) : FileDisk.open(p));
        }
        return disks;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int members = Integer.parseInt(args[1]);
        long memberSize = Long.parseLong(args[2]);
        long gen = Long.parseLong(args[3]);
        ConsistencyPolicy policy = args.length > 4 ? ConsistencyPolicy.parse(args[4]) : ConsistencyPolicy.RESYNC;
        PrintStream out = System.out;
        boolean exists = Files.exists(dir.resolve("c0.img"));
        List<MemberDisk> disks = open(dir, members, memberSize, !exists);
        Raid5Array array = exists
                ? Raid5Array.assemble(disks)
                : Raid5Array.create(
                        ArraySpec.builder()
                                .chunkSize(16 * 1024)
                                .assumeClean(true)
                                .consistencyPolicy(policy)
                                .bitmapChunk(policy == ConsistencyPolicy.BITMAP ? 64 * 1024 : 0)
                                .build(),
                        disks);
        int blockCount = (int) (array.size() / BLOCK);
        out.println("READY " + blockCount);
        out.flush();
        ByteBuffer buf = ByteBuffer.allocateDirect(BLOCK);
        while (true) {
            for (int block : blocksOf(gen, blockCount)) {
                fillBlock(buf, gen, block);
                array.write((long) block * BLOCK, buf, 0, BLOCK);
            }
            array.flush();
            out.println("FLUSHED " + gen);
            out.flush();
            gen++;
        }
    }

    /**
     * The test side of a writer child's protocol ({@code FLUSHED <gen>} after each flushed
     * generation, as CrashWriter and WriteHoleWriter print): hands every line of the child's output to
     * {@code onLine}, SIGKILLs the child once it has printed {@code killAfter} FLUSHED lines (after
     * {@code pauseNanos}, to land the kill inside the next generation's writes), and waits for it to die.
     *
     * @throws AssertionError if the child does not end within 30 s
     */
    public static void killAfterFlushes(
            Process child, int killAfter, long pauseNanos, java.util.function.Consumer<String> onLine)
            throws Exception {
        try (java.io.BufferedReader in = new java.io.BufferedReader(
                new java.io.InputStreamReader(child.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII))) {
            String line;
            int flushes = 0;
            while ((line = in.readLine()) != null) {
                onLine.accept(line);
                if (line.startsWith("FLUSHED ") && ++flushes == killAfter) {
                    if (pauseNanos > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(pauseNanos);
                    }
                    child.destroyForcibly(); // SIGKILL on Linux
                    break;
                }
            }
        }
        if (!child.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new AssertionError("the writer child did not die within 30 s of SIGKILL");
        }
    }
}
