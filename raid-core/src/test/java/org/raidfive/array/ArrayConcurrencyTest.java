package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;

/**
 * Many threads writing into the same stripes at once. Each thread owns every T-th sector, so
 * writes from different threads interleave within stripes (exercising the stripe locks and the
 * parity updates) while the expected final content stays well defined.
 */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ArrayConcurrencyTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"left-symmetric", "right-asymmetric", "parity-last"})
    void overlappingStripeWritesFromManyThreadsLeaveDataAndParityRight(String layout) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ArrayConcurrencyTest " + layout + " seed " + seed);
        int chunk = 16 * 1024;
        List<MemberDisk> members = ArrayDataTest.memoryMembers(5, (1 << 20) + 64L * chunk);
        ArraySpec spec = ArraySpec.builder()
                .algorithm(Raid5Algorithm.parse(layout))
                .chunkSize(chunk)
                .assumeClean(true)
                .build();
        try (Raid5Array array = Raid5Array.create(spec, members)) {
            int size = (int) array.size();
            int sectors = size / 512;
            int threads = 6;
            byte[] image = new byte[size];
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    futures.add(pool.submit(() -> {
                        Random random = new Random(seed + id);
                        ByteBuffer buf = ByteBuffer.allocateDirect(512);
                        byte[] data = new byte[512];
                        for (int op = 0; op < 4000; op++) {
                            int sector = id + threads * random.nextInt(sectors / threads);
                            long off = (long) sector * 512;
                            if (random.nextInt(4) == 0) {
                                array.read(off, buf, 0, 512);
                                byte[] got = new byte[512];
                                buf.get(0, got);
                                synchronized (image) {
                                    assertArrayEquals(
                                            java.util.Arrays.copyOfRange(image, (int) off, (int) off + 512),
                                            got,
                                            "thread " + id + " reads back its own sector " + sector);
                                }
                            } else {
                                random.nextBytes(data);
                                buf.put(0, data);
                                array.write(off, buf, 0, 512);
                                synchronized (image) {
                                    System.arraycopy(data, 0, image, (int) off, 512);
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            ArrayOracle.assertArrayHolds(array, image);
            ArrayOracle.assertParityConsistent(
                    members,
                    array.status().members().get(0).dataOffset(),
                    array.layout().memberBytesUsed());
        }
    }
}
