package org.raidfive.stats;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/** Run in a JVM without --add-opens: an array works; publishing its counters says what it needs. */
public final class CountersWithoutFlagsMain {
    private CountersWithoutFlagsMain() {}

    public static void main(String[] args) throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(new MemoryDisk(4L << 20));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(65536).assumeClean(true).build(), disks)) {
            array.write(0, ByteBuffer.allocate(4096), 0, 4096);
            System.out.println("io without flags: ok");
            try {
                array.publishCounters(Path.of(args[0]));
                System.out.println("counters published");
            } catch (IllegalStateException e) {
                System.out.println("refused: " + e.getMessage());
            }
            array.read(0, ByteBuffer.allocate(4096), 0, 4096);
            System.out.println("io after: ok");
        }
    }
}
