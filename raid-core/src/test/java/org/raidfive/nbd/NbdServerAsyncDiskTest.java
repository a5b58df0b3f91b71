package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemoryDisk;

/**
 * A disk with its own completion-based I/O (an array over file or NBD members) is served without a
 * worker waiting for each plain read or write: the requests a client pipelines are all at the disk
 * at once, whatever the worker count, and each reply goes when the disk completes it, on the
 * disk's thread. The disk here holds every completion-based read and write until the test
 * releases it on a thread of its own; the client is raidfive's NBD client (pipelined).
 */
@Timeout(60)
class NbdServerAsyncDiskTest {
    private static final int SIZE = 16 << 20;
    private static final int BLOCK = 4096;
    private static final int DEPTH = 32;

    /** Holds each completion-based read and write until {@link #release}; blocking calls go straight on. */
    static final class HeldDisk extends ForwardingDisk implements AsyncDisk {
        final LinkedBlockingQueue<Runnable> held = new LinkedBlockingQueue<>();
        volatile long failFrom = -1;

        /** The disk under it, for the test's own reads and writes. */
        final MemoryDisk memory;

        HeldDisk() {
            this(new MemoryDisk(SIZE));
        }

        private HeldDisk(MemoryDisk memory) {
            super(memory);
            this.memory = memory;
        }

        @Override
        public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
            held.add(() -> complete(position, callback, tag, () -> inner.read(position, dst, dstOffset, length)));
        }

        @Override
        public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
            held.add(() -> complete(position, callback, tag, () -> inner.write(position, src, srcOffset, length)));
        }

        private interface Io {
            void run() throws IOException;
        }

        private void complete(long position, IoCallback callback, int tag, Io io) {
            IOException error = null;
            try {
                if (position == failFrom) {
                    throw new IOException("held disk: a failure injected at " + position);
                }
                io.run();
            } catch (IOException e) {
                error = e;
            }
            callback.ioDone(tag, error);
        }

        /** Completes {@code n} held I/Os, in the order they came, on a new thread. */
        Thread release(int n) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < n; i++) {
                    try {
                        held.take().run();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            t.start();
            return t;
        }

        /** Waits until {@code n} I/Os are held; false if they are not within 5 s. */
        boolean awaitHeld(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (held.size() < n) {
                if (System.nanoTime() > deadline) {
                    return false;
                }
                Thread.sleep(5);
            }
            return true;
        }

        @Override
        public void flushAsync(IoCallback callback, int tag) {
            callback.ioDone(tag, null);
        }
    }

    private static NbdServer serve(HeldDisk disk) throws IOException {
        return NbdServer.start(
                disk, NbdServerConfig.builder().port(0).workerThreads(2).build());
    }

    private static NbdDisk client(NbdServer server) throws IOException {
        return NbdDisk.open("nbd://127.0.0.1:" + server.port() + "/raid");
    }

    /** Starts {@code n} pipelined requests of one block each at blocks 0, 3, 6, ...; one future each. */
    private static List<CompletableFuture<IOException>> pipeline(
            NbdDisk client, boolean write, List<ByteBuffer> buffers) {
        List<CompletableFuture<IOException>> outcomes = new ArrayList<>();
        for (int i = 0; i < buffers.size(); i++) {
            CompletableFuture<IOException> outcome = new CompletableFuture<>();
            IoCallback done = (tag, error) -> outcome.complete(error);
            if (write) {
                client.writeAsync(3L * i * BLOCK, buffers.get(i), 0, BLOCK, done, i);
            } else {
                client.readAsync(3L * i * BLOCK, buffers.get(i), 0, BLOCK, done, i);
            }
            outcomes.add(outcome);
        }
        return outcomes;
    }

    /**
     * 32 pipelined writes, then 32 reads, are all held at the disk at once with 2 workers (waiting
     * workers would let at most 3 through: 2 and the connection's reader), and the reads return
     * what the writes wrote.
     */
    @Test
    void pipelinedRequestsAreAllAtTheDiskAtOnce() throws Exception {
        long seed = System.nanoTime();
        System.out.println("NbdServerAsyncDiskTest seed " + seed);
        Random random = new Random(seed);
        HeldDisk disk = new HeldDisk();
        try (NbdServer server = serve(disk);
                NbdDisk client = client(server)) {
            List<ByteBuffer> written = new ArrayList<>();
            for (int i = 0; i < DEPTH; i++) {
                byte[] block = new byte[BLOCK];
                random.nextBytes(block);
                written.add(ByteBuffer.wrap(block));
            }
            List<CompletableFuture<IOException>> writes = pipeline(client, true, written);
            assertTrue(disk.awaitHeld(DEPTH), "only " + disk.held.size() + " of " + DEPTH + " writes reached the disk");
            disk.release(DEPTH).join();
            for (CompletableFuture<IOException> w : writes) {
                assertNull(w.get(10, TimeUnit.SECONDS));
            }

            List<ByteBuffer> read = new ArrayList<>();
            for (int i = 0; i < DEPTH; i++) {
                read.add(ByteBuffer.allocate(BLOCK));
            }
            List<CompletableFuture<IOException>> reads = pipeline(client, false, read);
            assertTrue(disk.awaitHeld(DEPTH), "only " + disk.held.size() + " of " + DEPTH + " reads reached the disk");
            disk.release(DEPTH).join();
            for (int i = 0; i < DEPTH; i++) {
                assertNull(reads.get(i).get(10, TimeUnit.SECONDS));
                assertArrayEquals(written.get(i).array(), read.get(i).array(), "block " + 3 * i);
                ByteBuffer direct = ByteBuffer.allocate(BLOCK);
                disk.memory.read(3L * i * BLOCK, direct, 0, BLOCK);
                assertArrayEquals(written.get(i).array(), direct.array(), "on the disk, block " + 3 * i);
            }
        }
    }

    /** A completion with an error is an EIO reply to that request alone; the connection goes on. */
    @Test
    void aFailedCompletionIsAnErrorReplyToThatRequestAlone() throws Exception {
        HeldDisk disk = new HeldDisk();
        disk.failFrom = 3L * 5 * BLOCK;
        try (NbdServer server = serve(disk);
                NbdDisk client = client(server)) {
            List<ByteBuffer> read = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                read.add(ByteBuffer.allocate(BLOCK));
            }
            List<CompletableFuture<IOException>> reads = pipeline(client, false, read);
            assertTrue(disk.awaitHeld(8));
            disk.release(8).join();
            for (int i = 0; i < 8; i++) {
                IOException error = reads.get(i).get(10, TimeUnit.SECONDS);
                if (i == 5) {
                    assertInstanceOf(IOException.class, error, "the failed read");
                } else {
                    assertNull(error, "read " + i);
                }
            }
            Thread releaser = disk.release(1);
            ByteBuffer again = ByteBuffer.allocate(BLOCK);
            client.read(0, again, 0, BLOCK);
            releaser.join();
        }
    }

    /**
     * A stop answers the requests still at the disk: the server's close waits for their
     * completions, and every client gets its data rather than a closed connection.
     */
    @Test
    void closeAnswersTheRequestsStillAtTheDisk() throws Exception {
        HeldDisk disk = new HeldDisk();
        byte[] pattern = new byte[BLOCK];
        new Random(7).nextBytes(pattern);
        for (int i = 0; i < 8; i++) {
            disk.memory.write(3L * i * BLOCK, ByteBuffer.wrap(pattern), 0, BLOCK);
        }
        NbdServer server = serve(disk);
        try (NbdDisk client = client(server)) {
            List<ByteBuffer> read = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                read.add(ByteBuffer.allocate(BLOCK));
            }
            List<CompletableFuture<IOException>> reads = pipeline(client, false, read);
            assertTrue(disk.awaitHeld(8));
            CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> {
                try {
                    server.close();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Thread.sleep(300); // a close that did not wait would have closed the connection by now
            assertEquals(8, disk.held.size(), "nothing was completed yet");
            disk.release(8).join();
            closed.get(30, TimeUnit.SECONDS);
            for (int i = 0; i < 8; i++) {
                assertNull(reads.get(i).get(10, TimeUnit.SECONDS), "read " + i);
                assertArrayEquals(pattern, read.get(i).array(), "read " + i);
            }
        }
    }
}
