package org.raidfive.disk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.uring.IoUring;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * File members on the backend {@link IoBackend} chose: io_uring where netty's own probe says it
 * runs, unless pinned to the threads ({@code -Draidfive.io.backend=threads}, as CI's second pass
 * runs the suite). The file's contents are checked with a plain {@link RandomAccessFile}, never
 * through the disk under test.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RingIoTest {
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    private static boolean ringExpected() {
        return IoBackend.pinned() != IoBackend.IO_THREADS && IoUring.isAvailable();
    }

    @Test
    void theBackendIsIoUringWhereItRunsAndThreadsWhenPinned() {
        assertEquals(
                ringExpected() ? IoBackend.IO_URING : IoBackend.IO_THREADS, IoBackend.active(), IoBackend.describe());
        assertTrue(IoBackend.describe().startsWith("member I/O: "), IoBackend.describe());
    }

    /**
     * Chains of completion-based writes and reads (each callback starts the next I/O of its chain,
     * as a queue depth does), 64 chains over two O_DIRECT files: every byte lands as in a flat image,
     * and on the ring every callback runs on its loop thread (no I/O thread took part).
     */
    @Test
    void chainedIoOnTwoFilesMatchesAFlatImage() throws Exception {
        long seed = System.nanoTime();
        System.out.println("RingIoTest seed " + seed);
        Random random = new Random(seed);
        int blocks = 512;
        Path[] paths = {dir.resolve("a.img"), dir.resolve("b.img")};
        FileDisk[] disks = new FileDisk[2];
        byte[][] image = new byte[2][blocks * BLOCK];
        for (int i = 0; i < 2; i++) {
            disks[i] = FileDisk.createOrExtend(paths[i], (long) blocks * BLOCK, true);
            random.nextBytes(image[i]);
        }
        ConcurrentHashMap<String, Boolean> threads = new ConcurrentHashMap<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        int chains = 64;
        CountDownLatch done = new CountDownLatch(chains);
        for (int c = 0; c < chains; c++) {
            new Chain(c, disks, image, blocks, threads, errors, done).next();
        }
        assertTrue(done.await(60, TimeUnit.SECONDS), "every chain finished");
        assertTrue(errors.isEmpty(), "errors: " + errors);
        if (ringExpected()) {
            assertEquals(1, threads.size(), "callbacks ran on " + threads.keySet());
            assertTrue(
                    threads.keySet().iterator().next().startsWith("member-io-uring"),
                    threads.keySet().toString());
        }
        for (FileDisk d : disks) {
            d.close();
        }
        for (int i = 0; i < 2; i++) {
            byte[] onDisk = new byte[blocks * BLOCK];
            try (RandomAccessFile f = new RandomAccessFile(paths[i].toFile(), "r")) {
                f.readFully(onDisk);
            }
            assertArrayEquals(image[i], onDisk, "file " + i + " against the flat image");
        }
    }

    /** Each chain writes its own blocks (chain c owns blocks b with b % 64 == c), then reads them back. */
    private static final class Chain implements IoCallback {
        final int id;
        final FileDisk[] disks;
        final byte[][] image;
        final int blocks;
        final ConcurrentHashMap<String, Boolean> threads;
        final ConcurrentLinkedQueue<Throwable> errors;
        final CountDownLatch done;
        final ByteBuffer buffer = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK);
        int step;
        int block;
        int disk;

        Chain(
                int id,
                FileDisk[] disks,
                byte[][] image,
                int blocks,
                ConcurrentHashMap<String, Boolean> threads,
                ConcurrentLinkedQueue<Throwable> errors,
                CountDownLatch done) {
            this.id = id;
            this.disks = disks;
            this.image = image;
            this.blocks = blocks;
            this.threads = threads;
            this.errors = errors;
            this.done = done;
        }

        /** Steps: write every owned block of both disks, then read each back and compare. */
        void next() {
            int perDisk = blocks / 64;
            int writes = 2 * perDisk;
            if (step >= 2 * writes) {
                done.countDown();
                return;
            }
            int i = step % writes;
            disk = i / perDisk;
            block = (i % perDisk) * 64 + id;
            if (step < writes) {
                buffer.put(0, image[disk], block * BLOCK, BLOCK);
                disks[disk].writeAsync((long) block * BLOCK, buffer, 0, BLOCK, this, 0);
            } else {
                disks[disk].readAsync((long) block * BLOCK, buffer, 0, BLOCK, this, 1);
            }
        }

        @Override
        public void ioDone(int tag, IOException error) {
            threads.put(Thread.currentThread().getName(), true);
            if (error != null) {
                errors.add(error);
                done.countDown();
                return;
            }
            if (tag == 1) {
                byte[] got = new byte[BLOCK];
                buffer.get(0, got);
                byte[] want = java.util.Arrays.copyOfRange(image[disk], block * BLOCK, (block + 1) * BLOCK);
                if (!java.util.Arrays.equals(want, got)) {
                    errors.add(new AssertionError(
                            "chain " + id + ": disk " + disk + " block " + block + " read back wrong"));
                    done.countDown();
                    return;
                }
            }
            step++;
            next();
        }
    }

    /**
     * The ring's steady state allocates nothing, even where C2 cannot scalar-replace a short-lived
     * object: in a fresh JVM with escape analysis off, 200,000 chained reads (each completion submits
     * the next on the loop thread) and 50,000 submitted from another thread, after a warm-up. The
     * loop thread allocates less than a byte per chained I/O and the submitter less than a byte per
     * I/O; for I/O submitted from outside the loop is allowed 4 bytes per I/O, because netty's loop
     * allocates about 32 bytes per wake-up (its task queue), not per I/O. The outside reads go in
     * batches of 32, each taken whole by one wake-up, so that the wake-ups do not depend on
     * scheduling: with a new read as each one completed, a loaded CI machine woke the loop often
     * enough to pass 8 bytes per I/O (405,472 B for 50,000; 38,942 wake-ups for 50,000 reads here
     * with two busy loops beside it). An object per I/O (16 bytes at the least; an SQE description
     * is 72) fails every bound.
     */
    @Test
    void steadyStateRingIoAllocatesNothing() throws Exception {
        assumeTrue(ringExpected(), "io_uring does not run here");
        Path file = dir.resolve("alloc.img");
        String line = java(AllocationMain.class, List.of("-Xmx256m", "-XX:-DoEscapeAnalysis"), file.toString());
        System.out.println("RingIo allocation, escape analysis off: " + line);
        String[] f = line.split(" ");
        assertEquals("bytes", f[0], line);
        long chained = Long.parseLong(f[1]);
        long submitter = Long.parseLong(f[2]);
        long loop = Long.parseLong(f[3]);
        assertTrue(chained < AllocationMain.CHAINED, "the loop thread allocated " + chained + " B for chained reads");
        assertTrue(submitter < AllocationMain.OUTSIDE, "the submitter allocated " + submitter + " B");
        assertTrue(loop < 4L * AllocationMain.OUTSIDE, "the loop allocated " + loop + " B for outside I/O");
    }

    /**
     * Prints "bytes CHAINED_LOOP SUBMITTER OUTSIDE_LOOP WAKE_UPS": bytes allocated by the ring's loop
     * thread over {@link #CHAINED} chained reads, then by a submitting thread and by the loop over
     * {@link #OUTSIDE} reads submitted from it in batches of 32, and the loop's drain tasks for them;
     * each after a warm-up of the same.
     */
    public static final class AllocationMain {
        static final int CHAINED = 200_000;
        static final int OUTSIDE = 50_000;

        public static void main(String[] args) throws Exception {
            com.sun.management.ThreadMXBean mx =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            try (FileDisk disk = FileDisk.createOrExtend(Path.of(args[0]), 64 * BLOCK, true)) {
                ByteBuffer buf = AlignedBuffers.allocate(BLOCK);
                long[] loopThread = new long[1];
                class Chain implements IoCallback {
                    int left;
                    CountDownLatch done;
                    IOException error;

                    void run(int n) throws Exception {
                        left = n;
                        done = new CountDownLatch(1);
                        disk.readAsync(0, buf, 0, BLOCK, this, 0);
                        if (!done.await(60, TimeUnit.SECONDS) || error != null) {
                            throw new IOException("chained reads did not finish", error);
                        }
                    }

                    @Override
                    public void ioDone(int tag, IOException e) {
                        loopThread[0] = Thread.currentThread().getId();
                        if (e != null) {
                            error = e;
                            done.countDown();
                        } else if (--left > 0) {
                            disk.readAsync((left % 64) * (long) BLOCK, buf, 0, BLOCK, this, 0);
                        } else {
                            done.countDown();
                        }
                    }
                }
                Chain chain = new Chain();
                chain.run(CHAINED); // warm-up: C2 compiles the submit and complete paths
                long before = mx.getThreadAllocatedBytes(loopThread[0]);
                chain.run(CHAINED);
                long chained = mx.getThreadAllocatedBytes(loopThread[0]) - before;

                AtomicInteger completed = new AtomicInteger();
                AtomicInteger failed = new AtomicInteger();
                AtomicInteger queued = new AtomicInteger();
                // The last completion of a batch holds the loop thread until the next batch is
                // queued, so that one drain task (one wake-up) takes each batch whole, however the
                // two threads are scheduled.
                IoCallback count = (tag, e) -> {
                    if (e != null) {
                        failed.incrementAndGet();
                    }
                    int n = completed.incrementAndGet();
                    if (n % 32 == 0 && n < OUTSIDE) {
                        while (queued.get() < Math.min(n + 32, OUTSIDE)) {
                            Thread.onSpinWait();
                        }
                    }
                };
                long submitter = 0;
                long loop = 0;
                long wakeUps = 0;
                for (int round = 0; round < 2; round++) { // the first round warms up
                    completed.set(0);
                    queued.set(0);
                    long mine = mx.getCurrentThreadAllocatedBytes();
                    long loopAt = mx.getThreadAllocatedBytes(loopThread[0]);
                    long drainsAt = RingChoice.RING.drains();
                    for (int i = 0; i < OUTSIDE; i++) {
                        if (i % 32 == 0) { // a batch of 32 starts once the last one completed
                            while (completed.get() < i) {
                                Thread.onSpinWait();
                            }
                        }
                        disk.readAsync((i % 64) * (long) BLOCK, buf, 0, BLOCK, count, i);
                        if ((i + 1) % 32 == 0 || i + 1 == OUTSIDE) {
                            queued.set(i + 1);
                        }
                    }
                    while (completed.get() < OUTSIDE) {
                        Thread.onSpinWait();
                    }
                    submitter = mx.getCurrentThreadAllocatedBytes() - mine;
                    loop = mx.getThreadAllocatedBytes(loopThread[0]) - loopAt;
                    wakeUps = RingChoice.RING.drains() - drainsAt;
                }
                System.out.println(
                        failed.get() > 0
                                ? "failed " + failed.get()
                                : "bytes " + chained + " " + submitter + " " + loop + " " + wakeUps);
            }
        }
    }

    /**
     * A file truncated under its disk: in one batch, the reads past the new end fail with
     * EOFException, and only they; the reads before it and those of another file complete with the
     * right bytes.
     */
    @Test
    void aReadPastAShrunkFileFailsAloneInItsBatch() throws Exception {
        int blocks = 64;
        Path shrunk = dir.resolve("shrunk.img");
        Path whole = dir.resolve("whole.img");
        byte[] content = new byte[blocks * BLOCK];
        new Random(5).nextBytes(content);
        Files.write(shrunk, content);
        Files.write(whole, content);
        try (FileDisk a = FileDisk.open(shrunk, true);
                FileDisk b = FileDisk.open(whole, true);
                RandomAccessFile f = new RandomAccessFile(shrunk.toFile(), "rw")) {
            f.setLength((long) (blocks / 2) * BLOCK);
            List<CompletableFuture<IOException>> outcomes = new ArrayList<>();
            List<ByteBuffer> buffers = new ArrayList<>();
            for (int i = 0; i < 2 * blocks; i++) {
                FileDisk d = i % 2 == 0 ? a : b;
                int blk = i / 2;
                ByteBuffer buf = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK);
                CompletableFuture<IOException> outcome = new CompletableFuture<>();
                d.readAsync((long) blk * BLOCK, buf, 0, BLOCK, (tag, error) -> outcome.complete(error), i);
                outcomes.add(outcome);
                buffers.add(buf);
            }
            for (int i = 0; i < 2 * blocks; i++) {
                IOException error = outcomes.get(i).get(30, TimeUnit.SECONDS);
                int blk = i / 2;
                if (i % 2 == 0 && blk >= blocks / 2) {
                    assertInstanceOf(java.io.EOFException.class, error, "block " + blk + " of the shrunk file");
                    assertTrue(error.getMessage().startsWith(shrunk.toString() + ": end of file"), error.getMessage());
                } else {
                    assertNull(error, "read " + i);
                    byte[] got = new byte[BLOCK];
                    buffers.get(i).get(0, got);
                    assertArrayEquals(java.util.Arrays.copyOfRange(content, blk * BLOCK, (blk + 1) * BLOCK), got);
                }
            }
        }
    }

    /**
     * Close with ring I/O in flight: every accepted write completes and is on the file, the
     * descriptor is not closed under one still queued.
     */
    @Test
    void closeWaitsForTheWritesInFlight() throws Exception {
        assumeTrue(ringExpected(), "on the I/O threads, close does not wait for completion-based I/O");
        int blocks = 256;
        Path p = dir.resolve("close.img");
        byte[] content = new byte[blocks * BLOCK];
        new Random(9).nextBytes(content);
        AtomicInteger ok = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        FileDisk d = FileDisk.createOrExtend(p, (long) blocks * BLOCK, true);
        for (int b = 0; b < blocks; b++) {
            ByteBuffer buf = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK);
            buf.put(0, content, b * BLOCK, BLOCK);
            d.writeAsync(
                    (long) b * BLOCK,
                    buf,
                    0,
                    BLOCK,
                    (tag, error) -> {
                        if (error == null) {
                            ok.incrementAndGet();
                        } else {
                            errors.add(error);
                        }
                    },
                    b);
        }
        d.close();
        assertEquals(blocks, ok.get() + errors.size(), "every write completed before close returned");
        assertTrue(errors.isEmpty(), "errors: " + errors);
        assertArrayEquals(content, Files.readAllBytes(p));
    }

    /**
     * The property is read once per process: a process started with an unknown value refuses to
     * open a file member with one line naming the property; one pinned to the threads says so.
     */
    @Test
    void aPinnedBackendIsHonouredInAFreshProcess() throws Exception {
        Path p = dir.resolve("pinned.img");
        Files.write(p, new byte[BLOCK]);
        assertEquals(
                "refused: raidfive.io.backend=bogus is not a member I/O backend: use io_uring, threads or auto",
                probe("bogus", p));
        assertEquals("IO_THREADS member I/O: I/O threads (raidfive.io.backend=threads)", probe("threads", p));
        if (IoUring.isAvailable()) {
            assertTrue(probe("io_uring", p).startsWith("IO_URING member I/O: io_uring"), probe("io_uring", p));
        }
        String withoutNetty = probe("auto", p, false);
        assertTrue(
                withoutNetty.startsWith(
                        "IO_THREADS member I/O: I/O threads (netty's io_uring transport is not on the class path"),
                withoutNetty);
    }

    private static String probe(String backend, Path file) throws Exception {
        return probe(backend, file, true);
    }

    /** Runs {@link ProbeMain} in a fresh JVM, with or without netty's jars on its class path. */
    private static String probe(String backend, Path file, boolean netty) throws Exception {
        StringBuilder classPath = new StringBuilder();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (netty || !entry.contains("netty-")) {
                classPath
                        .append(classPath.length() == 0 ? "" : java.io.File.pathSeparator)
                        .append(entry);
            }
        }
        Process process = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx64m",
                        "-D" + IoBackend.PROPERTY + "=" + backend,
                        "-cp",
                        classPath.toString(),
                        ProbeMain.class.getName(),
                        file.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line = in.readLine();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "probe finished");
            return line;
        }
    }

    /** Runs {@code main} in a fresh JVM with {@code jvmOptions} and this class path; its first line of output. */
    private static String java(Class<?> main, List<String> jvmOptions, String arg) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName(), arg));
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line = in.readLine();
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), main.getSimpleName() + " finished");
            return line;
        }
    }

    /** Opens a file member and reads it once; prints the backend, or the one-line refusal. */
    public static final class ProbeMain {
        public static void main(String[] args) {
            try (FileDisk d = FileDisk.open(Path.of(args[0]), true)) {
                ByteBuffer b = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK);
                CompletableFuture<IOException> r = new CompletableFuture<>();
                d.readAsync(0, b, 0, BLOCK, (tag, error) -> r.complete(error), 0);
                IOException error = r.get(30, TimeUnit.SECONDS);
                System.out.println(
                        error != null ? "read failed: " + error : IoBackend.active() + " " + IoBackend.describe());
            } catch (Exception e) {
                System.out.println("refused: " + e.getMessage());
            }
        }
    }
}
