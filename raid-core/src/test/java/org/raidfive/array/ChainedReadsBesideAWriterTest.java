package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;

/**
 * Completion-based reads that chain (each callback starts the next read, as a queue depth does,
 * on the thread that completed the last one: the io_uring's loop for files) beside a writer of
 * the configuration lock, which waits for the reads in flight. A chained read must not wait for
 * that writer on the completing thread: the reads the writer waits for complete on that same
 * thread, and the array would hang.
 */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ChainedReadsBesideAWriterTest {
    private static final int CHUNK = 64 * 1024;
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    @Test
    void chainedReadsAndConfigurationWritersBothFinish() throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(FileDisk.createOrExtend(dir.resolve("m" + i + ".img"), 8L << 20, true));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            long seed = System.nanoTime();
            System.out.println("ChainedReadsBesideAWriterTest seed " + seed);
            byte[] image = LoadGenerator.fillRandom(array, seed);
            int chains = 16;
            CountDownLatch done = new CountDownLatch(chains);
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            for (int c = 0; c < chains; c++) {
                new ReadChain(array, image, new Random(seed + c), 400, errors, done).next();
            }
            Thread writer = new Thread(() -> {
                for (int i = 0; i < 50; i++) {
                    array.core.config.writeLock();
                    array.core.config.writeUnlock();
                }
            });
            writer.start();
            writer.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(writer.isAlive(), "the configuration writer got the lock 50 times beside the chained reads");
            assertTrue(done.await(60, TimeUnit.SECONDS), "every read chain finished");
            assertTrue(errors.isEmpty(), "errors: " + errors);
        } finally {
            for (MemberDisk d : disks) {
                d.close();
            }
        }
    }

    /** Reads {@code count} random blocks one after another, each started by the last one's callback. */
    private static final class ReadChain implements IoCallback {
        final Raid5Array array;
        final byte[] image;
        final Random random;
        final ConcurrentLinkedQueue<Throwable> errors;
        final CountDownLatch done;
        final ByteBuffer buffer = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK);
        int left;
        long offset;

        ReadChain(
                Raid5Array array,
                byte[] image,
                Random random,
                int count,
                ConcurrentLinkedQueue<Throwable> errors,
                CountDownLatch done) {
            this.array = array;
            this.image = image;
            this.random = random;
            this.left = count;
            this.errors = errors;
            this.done = done;
        }

        void next() {
            if (left-- == 0) {
                done.countDown();
                return;
            }
            offset = (long) random.nextInt(image.length / BLOCK) * BLOCK;
            array.readAsync(offset, buffer, 0, BLOCK, this, 0);
        }

        @Override
        public void ioDone(int tag, IOException error) {
            if (error != null) {
                errors.add(error);
                done.countDown();
                return;
            }
            byte[] got = new byte[BLOCK];
            buffer.get(0, got);
            assertArrayEqualsOrRecord(got);
        }

        private void assertArrayEqualsOrRecord(byte[] got) {
            try {
                assertArrayEquals(
                        java.util.Arrays.copyOfRange(image, (int) offset, (int) offset + BLOCK), got, "at " + offset);
            } catch (AssertionError e) {
                errors.add(e);
                done.countDown();
                return;
            }
            next();
        }
    }
}
