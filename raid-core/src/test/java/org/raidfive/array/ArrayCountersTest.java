package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.MemoryDisk;

/**
 * Live counters as another process sees them: a separate JVM maps the counters file and reads
 * values that match the I/O this one did, counted independently (the test's own tally of requests,
 * and a wrapper that counts each member's data-area I/O).
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ArrayCountersTest {
    private static final int CHUNK = 16384;
    private static final long MEMBER = (2 << 20) + 64L * CHUNK;

    @Test
    void anotherProcessReadsCountersThatMatchTheIoDone(@TempDir Path dir) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ArrayCountersTest seed " + seed);
        Random random = new Random(seed);
        List<DataAreaTally> members = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            members.add(new DataAreaTally(new MemoryDisk(MEMBER, "t" + i), Long.MAX_VALUE));
        }
        Path file = dir.resolve("array.counters");
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .name("counted")
                        .build(),
                members)) {
            for (DataAreaTally m : members) {
                m.dataOffset(array.core.table.slots[0].dataOffsetBytes);
            }
            ArrayCounters counters = array.publishCounters(file);
            assertEquals(file, counters.path());
            long reads = 0;
            long writes = 0;
            long readBytes = 0;
            long writeBytes = 0;
            ByteBuffer buf = ByteBuffer.allocateDirect(64 * 1024);
            int sectors = (int) (array.size() / 512);
            for (int i = 0; i < 500; i++) {
                int len = 512 * (1 + random.nextInt(128));
                long offset = 512L * random.nextInt(sectors - len / 512);
                if (random.nextBoolean()) {
                    array.write(offset, buf, 0, len);
                    writes++;
                    writeBytes += len;
                } else {
                    array.read(offset, buf, 0, len);
                    reads++;
                    readBytes += len;
                }
            }
            array.fail(members.get(2));
            Thread.sleep(4 * ArrayCounters.TICK_MILLIS);

            Map<String, Long> seen = dump(file);
            assertEquals(reads, seen.get("array reads"), "array reads: " + seen);
            assertEquals(writes, seen.get("array writes"));
            assertEquals(readBytes, seen.get("array read_bytes"));
            assertEquals(writeBytes, seen.get("array write_bytes"));
            assertEquals(0L, seen.get("array errors"));
            assertEquals(2L, seen.get("array state"), "degraded");
            assertEquals(0L, seen.get("array active_aligned_reads"));
            for (int i = 0; i < 4; i++) {
                DataAreaTally m = members.get(i);
                String s = m.name() + " ";
                assertEquals(m.reads.get(), seen.get(s + "reads"), s + "reads: " + seen);
                assertEquals(m.writes.get(), seen.get(s + "writes"), s + "writes");
                assertEquals(m.readBytes.get(), seen.get(s + "read_bytes"), s + "read_bytes");
                assertEquals(m.writeBytes.get(), seen.get(s + "write_bytes"), s + "write_bytes");
                assertEquals(0L, seen.get(s + "nr_pending"));
                assertEquals(i == 2 ? 3L : 0L, seen.get(s + "state"), s + "state");
                assertEquals((long) i, seen.get(s + "slot"));
            }
            assertTrue(seen.get("array events") >= 2, "the failure's events were counted: " + seen);
        }
        assertFalse(Files.exists(file), "closing the array removes its counters file");
    }

    @Test
    void countingIsOffUntilPublishedAndAfterwards(@TempDir Path dir) throws Exception {
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(),
                new ArrayList<>(ArrayDataTest.memoryMembers(4, MEMBER)))) {
            assertEquals(null, array.core.stats, "an unwatched array counts nothing");
            ArrayCounters counters = array.publishCounters(dir.resolve("c"));
            assertThrows(IllegalStateException.class, () -> array.publishCounters(dir.resolve("d")));
            assertTrue(array.core.stats != null && array.core.table.slots[0].stats != null);
            counters.close();
            assertEquals(null, array.core.stats);
            assertEquals(null, array.core.table.slots[0].stats);
            assertFalse(Files.exists(dir.resolve("c")));
        }
    }

    /**
     * The flags Agrona needs are needed only where counters are on: in a JVM without them an array
     * runs, and publishing its counters is refused in one line that names the flags, leaving the
     * array running and no file behind.
     */
    @Test
    void withoutTheFlagsArraysRunAndPublishingSaysWhatItNeeds(@TempDir Path dir) throws Exception {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path file = dir.resolve("x.counters");
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        cp,
                        "org.raidfive.stats.CountersWithoutFlagsMain",
                        file.toString())
                .redirectErrorStream(true)
                .start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("io without flags: ok") && out.contains("io after: ok"), out);
        assertTrue(
                out.contains("refused: live counters need this JVM to run with --add-opens "
                        + "java.base/jdk.internal.misc=ALL-UNNAMED"),
                out);
        assertFalse(Files.exists(file), "a refused publish leaves no file");
        try (var left = Files.list(dir)) {
            assertEquals(0, left.count(), "nor a temporary one");
        }
    }

    /** Reads the counters file in a fresh JVM: "scope stat" to value. */
    static Map<String, Long> dump(Path file) throws Exception {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--add-opens",
                        "java.base/jdk.internal.misc=ALL-UNNAMED",
                        "--add-opens",
                        "java.base/java.nio=ALL-UNNAMED",
                        "-cp",
                        cp,
                        "org.raidfive.stats.CountersDumpMain",
                        file.toString())
                .redirectErrorStream(true)
                .start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        Map<String, Long> values = new HashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.split("\t");
            if (f.length == 3 && !f[1].equals("name")) {
                values.put(f[0] + " " + f[1], Long.parseLong(f[2].trim()));
            }
        }
        return values;
    }
}
