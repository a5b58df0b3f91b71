package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Our client against nbdkit: plain I/O, a server killed mid-I/O, injected errors, a hung server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdClientNbdkitTest {
    @TempDir
    Path tmp;

    @Test
    void readsWritesFlushTrimAndZeroesOverTcp() throws Exception {
        try (Nbdkit nbdkit = Nbdkit.tcp(tmp, "memory", "64M");
                NbdClient client = NbdClient.connect(nbdkit.uri(), NbdClientConfig.defaults())) {
            ExportInfo export = client.export();
            assertEquals(64L << 20, export.size());
            assertTrue(export.canFlush() && export.canTrim() && export.canWriteZeroes(), export.toString());
            byte[] data = new byte[1 << 20];
            new Random(1).nextBytes(data);
            client.write(3 << 20, ByteBuffer.wrap(data), 0, data.length, true);
            client.flush();
            ByteBuffer back = ByteBuffer.allocateDirect(data.length);
            client.read(3 << 20, back, 0, data.length);
            byte[] got = new byte[data.length];
            back.get(0, got);
            assertArrayEquals(data, got);
            client.writeZeroes((3 << 20) + 4096, 8192, false);
            client.trim(40 << 20, 1 << 20);
            client.read(3 << 20, back, 0, data.length);
            back.get(0, got);
            Arrays.fill(data, 4096, 4096 + 8192, (byte) 0);
            assertArrayEquals(data, got);
        }
    }

    @Test
    void nonFixedNewstyleServerIsReachedWithExportName() throws Exception {
        try (Nbdkit nbdkit = Nbdkit.unix(tmp, "--mask-handshake=0", "memory", "1M");
                NbdDisk disk = NbdDisk.open(nbdkit.uri(), NbdClientConfig.defaults())) {
            assertEquals(1 << 20, disk.size());
            disk.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}), 0, 3);
            ByteBuffer back = ByteBuffer.allocate(3);
            disk.read(0, back, 0, 3);
            assertArrayEquals(new byte[] {1, 2, 3}, back.array());
        }
    }

    @Test
    void killingTheServerMidIoFailsEveryCallPromptly() throws Exception {
        Nbdkit nbdkit = Nbdkit.unix(tmp, "memory", "64M");
        // A long request timeout: promptness must come from noticing the dead socket, not a timer.
        NbdClientConfig config =
                NbdClientConfig.builder().requestTimeout(Duration.ofSeconds(30)).build();
        try (NbdDisk disk = NbdDisk.open(nbdkit.uri(), config)) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<IOException>> workers = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int id = t;
                    workers.add(pool.submit(() -> {
                        Random random = new Random(id);
                        ByteBuffer buffer = ByteBuffer.allocateDirect(64 * 1024);
                        try {
                            while (true) {
                                long at = 65536L * random.nextInt(1024);
                                if (random.nextBoolean()) {
                                    disk.write(at, buffer, 0, buffer.capacity());
                                } else {
                                    disk.read(at, buffer, 0, buffer.capacity());
                                }
                            }
                        } catch (IOException e) {
                            return e;
                        }
                    }));
                }
                Thread.sleep(300);
                for (Future<IOException> worker : workers) {
                    assertFalse(worker.isDone(), "I/O was flowing before the kill");
                }
                long killed = System.nanoTime();
                nbdkit.kill();
                for (Future<IOException> worker : workers) {
                    IOException e = worker.get(5, TimeUnit.SECONDS);
                    assertFalse(e instanceof NbdTimeoutException, "failed by the dead socket, not a timeout: " + e);
                }
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                assertTrue(millis < 5000, "all callers failed " + millis + " ms after SIGKILL");
            } finally {
                pool.shutdownNow();
            }
            assertFalse(disk.client().isOpen());
            long start = System.nanoTime();
            assertThrows(IOException.class, () -> disk.read(0, ByteBuffer.allocate(8), 0, 8));
            assertThrows(IOException.class, () -> disk.flush());
            assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(200), "later calls fail fast");
        } finally {
            nbdkit.close();
        }
    }

    @Test
    void errorFilterFailsRequestsOnDemandAndTheConnectionSurvives() throws Exception {
        Path inject = tmp.resolve("inject");
        try (Nbdkit nbdkit =
                        Nbdkit.unix(tmp, "--filter=error", "memory", "64M", "error-rate=100%", "error-file=" + inject);
                NbdDisk disk = NbdDisk.open(nbdkit.uri(), NbdClientConfig.defaults())) {
            ByteBuffer data = ByteBuffer.allocate(4096);
            Arrays.fill(data.array(), (byte) 7);
            disk.write(8192, data, 0, 4096);

            Files.createFile(inject);
            NbdErrorException read = assertThrows(NbdErrorException.class, () -> disk.read(8192, data, 0, 4096));
            assertEquals("EIO", read.errorName());
            NbdErrorException write = assertThrows(NbdErrorException.class, () -> disk.write(0, data, 0, 4096));
            assertEquals(NbdProtocol.EIO, write.error());
            assertTrue(disk.client().isOpen(), "an error reply is not fatal");

            Files.delete(inject);
            ByteBuffer back = ByteBuffer.allocate(4096);
            disk.read(8192, back, 0, 4096);
            assertArrayEquals(data.array(), back.array(), "data written before the errors is intact");
        }
    }

    @Test
    void errorFilterChoosesTheErrorCode() throws Exception {
        try (Nbdkit nbdkit =
                        Nbdkit.unix(tmp, "--filter=error", "memory", "1M", "error=ENOSPC", "error-pwrite-rate=100%");
                NbdDisk disk = NbdDisk.open(nbdkit.uri(), NbdClientConfig.defaults())) {
            NbdErrorException e =
                    assertThrows(NbdErrorException.class, () -> disk.write(0, ByteBuffer.allocate(512), 0, 512));
            assertEquals(NbdProtocol.ENOSPC, e.error());
            disk.read(0, ByteBuffer.allocate(512), 0, 512);
        }
    }

    @Test
    void hungServerProducesATimeoutWithinTheConfiguredBound() throws Exception {
        try (Nbdkit nbdkit = Nbdkit.unix(tmp, "--filter=delay", "memory", "64M", "delay-read=30")) {
            NbdClientConfig config = NbdClientConfig.builder()
                    .requestTimeout(Duration.ofSeconds(1))
                    .build();
            try (NbdDisk disk = NbdDisk.open(nbdkit.uri(), config)) {
                disk.write(0, ByteBuffer.allocate(4096), 0, 4096); // writes are not delayed
                long start = System.nanoTime();
                IOException e = assertThrows(IOException.class, () -> disk.read(0, ByteBuffer.allocate(4096), 0, 4096));
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertInstanceOf(NbdTimeoutException.class, e);
                assertTrue(millis >= 900 && millis < 4000, "timed out after " + millis + " ms (timeout 1 s)");
                assertFalse(disk.client().isOpen(), "a timed-out connection is closed, never reused");
                start = System.nanoTime();
                try {
                    disk.write(0, ByteBuffer.allocate(4096), 0, 4096);
                    fail("a write after the timeout must fail, not be sent on a new connection");
                } catch (IOException expected) {
                    assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(200));
                }
            }
        }
    }
}
