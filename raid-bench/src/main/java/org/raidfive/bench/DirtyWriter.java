package org.raidfive.bench;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * For bench/bitmap-resync: opens the array of member files given, writes {@code PERCENT} of it as one
 * contiguous region from {@code START_PERCENT}, flushes, prints {@code DONE} and then waits, holding
 * the array open and dirty, for the SIGKILL that makes the next start a crash recovery.
 *
 * <p>Arguments: PERCENT START_PERCENT MEMBER...
 */
public final class DirtyWriter {
    private DirtyWriter() {}

    public static void main(String[] args) throws Exception {
        double percent = Double.parseDouble(args[0]);
        double startPercent = Double.parseDouble(args[1]);
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            disks.add(FileDisk.open(Path.of(args[i])));
        }
        Raid5Array array = Raid5Array.assemble(disks);
        long size = array.size();
        long start = (long) (size * startPercent / 100) / (1 << 20) * (1 << 20);
        long length = (long) (size * percent / 100) / (1 << 20) * (1 << 20);
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
        byte[] bytes = new byte[1 << 20];
        new Random(1).nextBytes(bytes);
        buf.put(0, bytes);
        for (long at = start; at < start + length; at += 1 << 20) {
            array.write(at, buf, 0, 1 << 20);
        }
        array.flush();
        System.out.println("DONE " + start + " " + length);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE); // killed here, the array still open and dirty
    }
}
