package org.raidfive.array;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * The process {@link WriteHoleTest} kills: assembles the degraded array of member files in DIR (its
 * last member missing), then writes generations of {@link CrashWriter}'s self-describing 4 KiB blocks
 * with several threads at once, only to blocks on the members that are present, flushing after each
 * generation and printing {@code FLUSHED <gen>}. The members answer with different latencies, so the
 * data and parity writes of a stripe land at different moments and a kill finds stripes half-written.
 *
 * <p>Arguments: DIR MEMBERS GEN THREADS FORCE ({@code true} to assemble a dirty degraded array
 * without a log, which only force allows).
 */
public final class WriteHoleWriter {
    private WriteHoleWriter() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int members = Integer.parseInt(args[1]);
        long gen = Long.parseLong(args[2]);
        int threads = Integer.parseInt(args[3]);
        boolean force = Boolean.parseBoolean(args[4]);
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < members - 1; i++) {
            disks.add(new FaultyDisk(FileDisk.open(dir.resolve("c" + i + ".img")))
                    .latency(1000L * i, TimeUnit.MICROSECONDS));
        }
        Raid5Array array = Raid5Array.assemble(disks, AssembleOptions.DEFAULT.withForce(force));
        int[] blocks = WriteHoleTest.blocksOnPresentMembers(array.layout(), members - 1);
        PrintStream out = System.out;
        out.println("READY");
        out.flush();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        ByteBuffer[] buffers = new ByteBuffer[CrashWriter.BLOCKS_PER_GEN];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = ByteBuffer.allocateDirect(CrashWriter.BLOCK);
        }
        while (true) {
            long g = gen;
            int[] chosen = CrashWriter.blocksOf(g, blocks.length);
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < chosen.length; i++) {
                int block = blocks[chosen[i]];
                ByteBuffer buf = buffers[i];
                done.add(pool.submit(() -> {
                    CrashWriter.fillBlock(buf, g, block);
                    array.write((long) block * CrashWriter.BLOCK, buf, 0, CrashWriter.BLOCK);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            array.flush();
            out.println("FLUSHED " + gen);
            out.flush();
            gen++;
        }
    }
}
