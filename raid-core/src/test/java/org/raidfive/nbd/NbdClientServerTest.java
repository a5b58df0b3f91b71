package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemoryDisk;

/** Our client against our server: pipelining, durability commands, errors, shutdown, timeouts. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdClientServerTest {
    private static final long SIZE = 64L << 20;

    @TempDir
    Path tmp;

    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T resource) {
        cleanup.add(resource);
        return resource;
    }

    private InstrumentedDisk disk(long size) {
        return closeLater(new InstrumentedDisk(new MemoryDisk(size)));
    }

    private NbdServer serve(InstrumentedDisk disk, NbdServerConfig.Builder config) throws IOException {
        return closeLater(NbdServer.start(disk, config.port(0).build()));
    }

    private NbdClient client(NbdServer server) throws IOException {
        return closeLater(NbdClient.connect(server.uri(), NbdClientConfig.defaults()));
    }

    @Test
    void pipelinedConcurrentIoFromFourThreadsIsVerified() throws Exception {
        InstrumentedDisk disk = pipelinedConcurrentIo(RequestExecution.WORKER_POOL);
        assertTrue(
                disk.maxActive.get() > 1, "requests ran concurrently on the server (max " + disk.maxActive.get() + ")");
    }

    @Test
    void pipelinedConcurrentIoOnTheConnectionThreadIsVerified() throws Exception {
        InstrumentedDisk disk = pipelinedConcurrentIo(RequestExecution.CONNECTION_THREAD);
        assertEquals(1, disk.maxActive.get(), "one connection's requests run one at a time");
    }

    private InstrumentedDisk pipelinedConcurrentIo(RequestExecution execution) throws Exception {
        // 100 us per call: long enough that requests in flight together overlap on the server even on
        // a loaded 2-core machine (with bare memory they may finish before the next one starts).
        InstrumentedDisk disk = closeLater(new InstrumentedDisk(
                new org.raidfive.disk.FaultyDisk(new MemoryDisk(SIZE)).latency(100, TimeUnit.MICROSECONDS)));
        NbdServer server =
                serve(disk, NbdServerConfig.builder().workerThreads(4).requestExecution(execution));
        NbdClient client = client(server);
        long seed = seed();
        byte[] reference = new byte[(int) SIZE];
        long region = SIZE / 4;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int id = t;
                results.add(pool.submit(() -> {
                    Random random = new Random(seed + id);
                    ByteBuffer buffer = ByteBuffer.allocateDirect(64 * 1024);
                    byte[] data = new byte[64 * 1024];
                    int verified = 0;
                    for (int op = 0; op < 1500; op++) {
                        int length = 4096 * (1 + random.nextInt(16));
                        long position = id * region + 4096L * random.nextInt((int) ((region - length) / 4096));
                        if (random.nextInt(3) == 0) {
                            client.read(position, buffer, 0, length);
                            buffer.get(0, data, 0, length);
                            assertArrayEquals(
                                    Arrays.copyOfRange(reference, (int) position, (int) position + length),
                                    Arrays.copyOf(data, length),
                                    "thread " + id + " op " + op + " seed " + seed);
                            verified++;
                        } else {
                            random.nextBytes(data);
                            buffer.put(0, data, 0, length);
                            client.write(position, buffer, 0, length);
                            System.arraycopy(data, 0, reference, (int) position, length);
                        }
                    }
                    return verified;
                }));
            }
            for (Future<Integer> result : results) {
                assertTrue(result.get(50, TimeUnit.SECONDS) > 0);
            }
        } finally {
            pool.shutdownNow();
        }
        // Oracle through another path: the server's disk itself.
        assertArrayEquals(reference, readAll(disk.inner()), "seed " + seed);
        return disk;
    }

    /**
     * A callback that starts two reads where its own ended, on a client with two request slots: the
     * second finds none free while the other read's reply waits to be read by the very thread the
     * callback runs on. It must not wait there (the reader would time out its own connection); it is
     * sent once the slot frees.
     */
    @Test
    void aCallbackOnTheReaderThatFindsNoFreeSlotDoesNotStallTheConnection() throws Exception {
        NbdServer server = serve(disk(SIZE), NbdServerConfig.builder());
        NbdClient client = closeLater(NbdClient.connect(
                server.uri(),
                NbdClientConfig.builder()
                        .maxInFlight(2)
                        .requestTimeout(Duration.ofSeconds(3))
                        .build()));
        int reads = 200;
        CountDownLatch done = new CountDownLatch(reads);
        List<IOException> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicInteger started = new java.util.concurrent.atomic.AtomicInteger();
        IoCallback[] chain = new IoCallback[1];
        chain[0] = (tag, error) -> {
            if (error != null) {
                errors.add(error);
            }
            done.countDown();
            for (int k = 0; k < 2 && started.incrementAndGet() <= reads; k++) { // two where one ended
                client.readAsync(4096L * (tag + k), ByteBuffer.allocate(4096), 0, 4096, chain[0], tag + 1);
            }
        };
        started.set(2);
        client.readAsync(0, ByteBuffer.allocate(4096), 0, 4096, chain[0], 0);
        client.readAsync(4096, ByteBuffer.allocate(4096), 0, 4096, chain[0], 0);
        assertTrue(done.await(20, TimeUnit.SECONDS), "every read completed");
        assertTrue(errors.isEmpty(), () -> errors.size() + " reads failed, the first: " + errors.get(0));
        assertTrue(client.isOpen(), "the connection is still open: " + client.failure());
    }

    @Test
    void fuaWritesAndFlushReachTheDisk() throws IOException {
        InstrumentedDisk disk = disk(1 << 20);
        NbdServer server = serve(disk, NbdServerConfig.builder());
        NbdClient client = client(server);
        assertTrue(client.export().canFua()
                && client.export().canFlush()
                && client.export().canMultiConn());
        ByteBuffer data = ByteBuffer.allocate(4096);
        client.write(0, data, 0, 4096);
        assertEquals(0, disk.flushes.get(), "a plain write does not flush");
        client.write(0, data, 0, 4096, true);
        assertEquals(1, disk.flushes.get(), "FUA flushed before the reply");
        client.flush();
        assertEquals(2, disk.flushes.get());
        new NbdDisk(client).flush();
        assertEquals(3, disk.flushes.get());
    }

    @Test
    void writeZeroesAndTrimFollowTheConfiguredMode() throws IOException {
        byte[] pattern = new byte[4 << 20];
        new Random(3).nextBytes(pattern);
        for (TrimMode mode : TrimMode.values()) {
            InstrumentedDisk disk = disk(8 << 20);
            NbdServer server = serve(disk, NbdServerConfig.builder().trimMode(mode));
            NbdClient client = client(server);
            client.write(0, ByteBuffer.wrap(pattern), 0, pattern.length);
            long zeroAt = 12345;
            long zeroLength = (3 << 20) + 7; // several 1 MiB zero pieces, unaligned
            client.writeZeroes(zeroAt, zeroLength, true);
            byte[] expected = pattern.clone();
            Arrays.fill(expected, (int) zeroAt, (int) (zeroAt + zeroLength), (byte) 0);
            assertArrayEquals(expected, read(client, 0, pattern.length), "write-zeroes, " + mode);

            assertEquals(mode != TrimMode.UNSUPPORTED, client.export().canTrim());
            if (mode == TrimMode.UNSUPPORTED) {
                assertThrows(IllegalStateException.class, () -> client.trim(0, 4096));
                continue;
            }
            client.write(0, ByteBuffer.wrap(pattern), 0, pattern.length);
            client.trim(4096, 8192);
            byte[] afterTrim = pattern.clone();
            if (mode == TrimMode.ZERO) {
                Arrays.fill(afterTrim, 4096, 4096 + 8192, (byte) 0);
            }
            assertArrayEquals(afterTrim, read(client, 0, pattern.length), "trim, " + mode);
        }
        InstrumentedDisk disk = disk(1 << 20);
        NbdClient noZeroes = client(serve(disk, NbdServerConfig.builder().writeZeroes(false)));
        assertFalse(noZeroes.export().canWriteZeroes());
    }

    @Test
    void diskErrorsBecomeEioAndTheConnectionKeepsServing() throws IOException {
        InstrumentedDisk disk = disk(8 << 20);
        disk.failWithIoException(1 << 20, 2 << 20);
        disk.failWithRuntimeException(3 << 20, 4 << 20);
        NbdClient client = client(serve(disk, NbdServerConfig.builder()));
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        NbdErrorException read = assertThrows(NbdErrorException.class, () -> client.read(1 << 20, buffer, 0, 4096));
        assertEquals(NbdProtocol.EIO, read.error());
        assertEquals("EIO", read.errorName());
        NbdErrorException write =
                assertThrows(NbdErrorException.class, () -> client.write((1 << 20) + 4096, buffer, 0, 4096));
        assertEquals(NbdProtocol.EIO, write.error());
        NbdErrorException bug = assertThrows(NbdErrorException.class, () -> client.read(3 << 20, buffer, 0, 4096));
        assertEquals(NbdProtocol.EIO, bug.error());
        assertTrue(client.isOpen(), "an error reply fails only its request");
        buffer.put(0, (byte) 42);
        client.write(0, buffer, 0, 4096);
        client.read(0, buffer.put(0, (byte) 0), 0, 4096);
        assertEquals(42, buffer.get(0));
    }

    @Test
    void readOnlyExportRefusesWritesLocallyAndServesReads() throws IOException {
        InstrumentedDisk disk = disk(1 << 20);
        NbdDisk nbd = closeLater(NbdDisk.open(
                serve(disk, NbdServerConfig.builder().readOnly(true)).uri()));
        assertTrue(nbd.client().export().readOnly());
        IOException e = assertThrows(IOException.class, () -> nbd.write(0, ByteBuffer.allocate(8), 0, 8));
        assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        nbd.read(0, ByteBuffer.allocate(8), 0, 8);
        nbd.flush();
    }

    @Test
    void closingTheServerLetsInFlightRequestsFinishAndReply() throws Exception {
        InstrumentedDisk disk = disk(8 << 20);
        NbdServer server = NbdServer.start(
                disk, NbdServerConfig.builder().port(0).workerThreads(8).build());
        NbdClient client = client(server);
        disk.closeGate();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> writes = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                long at = i * 65536L;
                byte value = (byte) (i + 1);
                writes.add(pool.submit(() -> {
                    ByteBuffer data = ByteBuffer.allocate(65536);
                    Arrays.fill(data.array(), value);
                    // FUA: always run on a worker, so all eight are in flight at once.
                    client.write(at, data, 0, 65536, true);
                    return null;
                }));
            }
            awaitTrue(() -> disk.waitingAtGate.get() == 8, "8 writes held at the disk");
            int flushesBefore = disk.flushes.get();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(() -> {
                try {
                    server.close();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            Thread.sleep(300);
            assertFalse(closing.isDone(), "close() waits for in-flight requests");
            disk.openGate();
            closing.get(20, TimeUnit.SECONDS);
            for (Future<?> write : writes) {
                write.get(5, TimeUnit.SECONDS); // every in-flight write was acknowledged
            }
            assertTrue(disk.flushes.get() > flushesBefore, "close() flushed the disk");
            for (int i = 0; i < 8; i++) {
                byte[] expected = new byte[65536];
                Arrays.fill(expected, (byte) (i + 1));
                assertArrayEquals(expected, NbdServerProtocolTest.read((MemoryDisk) disk.inner(), i * 65536L, 65536));
            }
            long start = System.nanoTime();
            assertThrows(IOException.class, () -> client.read(0, ByteBuffer.allocate(8), 0, 8));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "fails promptly after the server left");
            server.awaitTermination();
        } finally {
            disk.openGate();
            pool.shutdownNow();
            server.close();
        }
    }

    @Test
    void manyConnectionsAtOnceShareTheDisk() throws Exception {
        InstrumentedDisk disk = disk(SIZE);
        NbdServer server = serve(disk, NbdServerConfig.builder());
        int connections = 8;
        List<NbdDisk> disks = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            disks.add(closeLater(NbdDisk.open(server.uri())));
        }
        awaitTrue(() -> server.connectionCount() == connections, "all connections registered");
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int i = 0; i < connections; i++) {
                NbdDisk nbd = disks.get(i);
                long base = i * (SIZE / connections);
                byte value = (byte) (i + 1);
                results.add(pool.submit(() -> {
                    ByteBuffer data = ByteBuffer.allocateDirect(256 * 1024);
                    for (int k = 0; k < data.capacity(); k++) {
                        data.put(k, value);
                    }
                    for (long at = base; at < base + (4 << 20); at += data.capacity()) {
                        nbd.write(at, data, 0, data.capacity());
                    }
                    nbd.flush();
                    return null;
                }));
            }
            for (Future<?> result : results) {
                result.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        // Visible across connections once each flush returned (CAN_MULTI_CONN).
        for (int i = 0; i < connections; i++) {
            ByteBuffer back = ByteBuffer.allocate(4 << 20);
            disks.get((i + 1) % connections).read(i * (SIZE / connections), back, 0, back.capacity());
            for (int k = 0; k < back.capacity(); k += 4093) {
                assertEquals((byte) (i + 1), back.get(k));
            }
        }
        for (NbdDisk nbd : disks) {
            nbd.close();
        }
        awaitTrue(() -> server.connectionCount() == 0, "connections closed after NBD_CMD_DISC");
    }

    @Test
    void connectionsBeyondTheLimitAreRefused() throws Exception {
        NbdServer server = serve(disk(1 << 20), NbdServerConfig.builder().maxConnections(1));
        NbdClient first = client(server);
        awaitTrue(() -> server.connectionCount() == 1, "first connection registered");
        assertThrows(IOException.class, () -> NbdClient.connect(server.uri(), NbdClientConfig.defaults()));
        first.read(0, ByteBuffer.allocate(512), 0, 512);
        first.close();
        awaitTrue(() -> server.connectionCount() == 0, "first connection gone");
        client(server).read(0, ByteBuffer.allocate(512), 0, 512);
    }

    @Test
    void defaultAndNamedExportsConnectAndOthersAreRefused() throws IOException {
        NbdServer server = serve(disk(1 << 20), NbdServerConfig.builder().exportName("array0"));
        assertEquals("array0", NbdUri.parse(server.uri()).exportName());
        closeLater(NbdClient.connect("nbd://127.0.0.1:" + server.port(), NbdClientConfig.defaults()));
        closeLater(NbdClient.connect("nbd://127.0.0.1:" + server.port() + "/array0", NbdClientConfig.defaults()));
        IOException e = assertThrows(
                IOException.class,
                () -> NbdClient.connect("nbd://127.0.0.1:" + server.port() + "/raid", NbdClientConfig.defaults()));
        assertTrue(e.getMessage().contains("NBD_REP_ERR_UNKNOWN"), e.getMessage());
    }

    @Test
    void transfersLargerThanTheServerMaximumAreSplit() throws IOException {
        InstrumentedDisk disk = disk(16 << 20);
        NbdServer server = serve(disk, NbdServerConfig.builder().maxRequestBytes(1 << 20));
        NbdDisk nbd = closeLater(NbdDisk.open(server.uri()));
        assertEquals(1 << 20, nbd.client().maxRequestBytes(), "the advertised maximum is used");
        byte[] data = new byte[(5 << 20) + 3];
        new Random(5).nextBytes(data);
        nbd.write(777, ByteBuffer.wrap(data), 0, data.length);
        ByteBuffer back = ByteBuffer.allocate(data.length);
        nbd.read(777, back, 0, data.length);
        assertArrayEquals(data, back.array());
        assertThrows(
                IllegalArgumentException.class, () -> nbd.client().read(0, ByteBuffer.allocate(2 << 20), 0, 2 << 20));
    }

    @Test
    void unixSocketServerReplacesAStaleSocketButNotALiveOne() throws IOException {
        Path socket = tmp.resolve("array.sock");
        try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            dead.bind(UnixDomainSocketAddress.of(socket)); // closing leaves the file behind
        }
        assertTrue(Files.exists(socket));
        InstrumentedDisk disk = disk(1 << 20);
        NbdServer server = closeLater(NbdServer.start(
                disk, NbdServerConfig.builder().unixSocket(socket).build()));
        assertEquals(-1, server.port());
        assertTrue(server.uri().startsWith("nbd+unix:///raid?socket="), server.uri());
        NbdClient client = client(server);
        assertEquals(1 << 20, client.size());
        IOException e = assertThrows(
                IOException.class,
                () -> NbdServer.start(
                        disk, NbdServerConfig.builder().unixSocket(socket).build()));
        assertTrue(e.getMessage().contains("already served"), e.getMessage());
        client.close();
        server.close();
        assertFalse(Files.exists(socket), "close() removes the socket file");
    }

    @Test
    void clientFallsBackToExportNameWhenGoIsUnsupported() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            CompletableFuture<List<Integer>> options = CompletableFuture.supplyAsync(() -> oldServer(listener));
            try (NbdClient client =
                    NbdClient.connect("nbd://127.0.0.1:" + port + "/legacy", NbdClientConfig.defaults())) {
                assertEquals(1 << 20, client.size());
                ByteBuffer buffer = ByteBuffer.allocate(512);
                buffer.put(0, (byte) 9);
                client.read(0, buffer, 0, 512);
                assertEquals(0x5A, buffer.get(0));
            }
            assertEquals(List.of(NbdProtocol.OPT_GO, NbdProtocol.OPT_EXPORT_NAME), options.get(10, TimeUnit.SECONDS));
        }
    }

    /**
     * A callback on the connection's reader that starts a request while another thread is stuck
     * sending (a large write the server has not read yet) must not wait for that sender: the reader
     * alone reads the replies, and a server that stops reading requests until its replies are read
     * would never take the write. A scripted server holds a 4 MiB write half-read, replies to a read,
     * and checks how long the callback that starts the next read holds the reader; then it reads
     * everything and replies, and every request completes.
     */
    @Test
    void aCallbackOnTheReaderNeverWaitsForAnotherSender() throws Exception {
        Path socket = tmp.resolve("scripted.sock");
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<RawPeer> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    RawPeer peer = new RawPeer(listener.accept());
                    exportNameHandshake(peer, 64L << 20);
                    return peer;
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            NbdClient client = closeLater(NbdClient.connect(
                    "nbd+unix:///legacy?socket=" + socket,
                    NbdClientConfig.builder()
                            .requestTimeout(Duration.ofSeconds(10))
                            .build()));
            try (RawPeer server = accepted.get(10, TimeUnit.SECONDS)) {
                CompletableFuture<Long> callbackNanos = new CompletableFuture<>();
                CompletableFuture<IOException> secondRead = new CompletableFuture<>();
                client.readAsync(
                        0,
                        ByteBuffer.allocate(4096),
                        0,
                        4096,
                        (tag, error) -> {
                            long start = System.nanoTime();
                            client.readAsync(
                                    8192, ByteBuffer.allocate(4096), 0, 4096, (t2, e2) -> secondRead.complete(e2), 0);
                            callbackNanos.complete(System.nanoTime() - start);
                        },
                        0);
                ByteBuffer first = server.read(28);
                long firstCookie = first.getLong(8);

                int big = 4 << 20;
                CompletableFuture<IOException> write = new CompletableFuture<>();
                Thread writer = new Thread(() -> client.writeAsync(
                        4L << 20, ByteBuffer.allocateDirect(big), 0, big, (tag, error) -> write.complete(error), 0));
                writer.start();
                ByteBuffer writeHeader = server.read(28);
                long writeCookie = writeHeader.getLong(8);
                server.read(64 * 1024); // some of the payload: the socket fills, the writer stays in its send
                Thread.sleep(200);

                server.write(ByteBuffer.allocate(16 + 4096)
                        .putInt(NbdProtocol.SIMPLE_REPLY_MAGIC)
                        .putInt(0)
                        .putLong(firstCookie)
                        .clear());
                long held = TimeUnit.NANOSECONDS.toMillis(callbackNanos.get(20, TimeUnit.SECONDS));
                assertTrue(held < 1000, "the callback held the reader " + held + " ms, waiting for the writer");

                server.read(big - 64 * 1024); // the rest of the write, then the read the callback started
                ByteBuffer second = server.read(28);
                assertEquals(NbdProtocol.CMD_READ, second.getShort(6), "the callback's read follows the write");
                server.write(ByteBuffer.allocate(16)
                        .putInt(NbdProtocol.SIMPLE_REPLY_MAGIC)
                        .putInt(0)
                        .putLong(writeCookie)
                        .flip());
                server.write(ByteBuffer.allocate(16 + 4096)
                        .putInt(NbdProtocol.SIMPLE_REPLY_MAGIC)
                        .putInt(0)
                        .putLong(second.getLong(8))
                        .clear());
                assertNull(write.get(10, TimeUnit.SECONDS), "the write completed");
                assertNull(secondRead.get(10, TimeUnit.SECONDS), "the callback's read completed");
                writer.join();
            }
        }
    }

    /**
     * Many chains of reads, each started by the callback of the one before (on the reader): the
     * requests the reader hands on are sent from other threads, sometimes two draining at once,
     * and every read must come back with its own bytes, none lost, none sent twice.
     */
    @Test
    void chainsOfReadsStartedOnTheReaderEachGetTheirOwnBytes() throws Exception {
        int size = 16 << 20;
        byte[] pattern = new byte[size];
        long seed = seed();
        System.out.println("chainsOfReadsStartedOnTheReaderEachGetTheirOwnBytes seed " + seed);
        new Random(seed).nextBytes(pattern);
        InstrumentedDisk disk = disk(size);
        disk.write(0, ByteBuffer.wrap(pattern), 0, size);
        NbdClient client = client(serve(disk, NbdServerConfig.builder()));
        int chains = 32;
        int each = 400;
        CountDownLatch done = new CountDownLatch(chains);
        List<String> wrong = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int c = 0; c < chains; c++) {
            Random random = new Random(seed + c);
            ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
            int[] left = {each};
            long[] at = {0};
            IoCallback[] chain = new IoCallback[1];
            chain[0] = (tag, error) -> {
                if (error != null) {
                    wrong.add(error.toString());
                    done.countDown();
                    return;
                }
                for (int i = 0; i < 4096; i += 512) {
                    if (buffer.get(i) != pattern[(int) at[0] + i]) {
                        wrong.add("chain " + tag + " at " + at[0] + " byte " + i);
                        break;
                    }
                }
                if (--left[0] == 0) {
                    done.countDown();
                    return;
                }
                at[0] = 4096L * random.nextInt(size / 4096);
                client.readAsync(at[0], buffer, 0, 4096, chain[0], tag);
            };
            at[0] = 4096L * random.nextInt(size / 4096);
            client.readAsync(at[0], buffer, 0, 4096, chain[0], c);
        }
        assertTrue(done.await(40, TimeUnit.SECONDS), "every chain ended");
        assertTrue(wrong.isEmpty(), () -> wrong.size() + " reads wrong, the first: " + wrong.get(0));
        assertTrue(client.isOpen(), "the connection is still open: " + client.failure());
    }

    /** What a client said in {@link #exportNameHandshake}: its flags, the options it tried, the export it named. */
    private record Handshake(int clientFlags, List<Integer> options, String exportName) {}

    /**
     * The server half of a handshake that knows only NBD_OPT_EXPORT_NAME (every other option is
     * refused as unsupported, and the reply carries the 124 zero bytes): an export of {@code size}.
     */
    private static Handshake exportNameHandshake(RawPeer peer, long size) throws IOException {
        peer.write(ByteBuffer.allocate(18)
                .putLong(NbdProtocol.NBDMAGIC)
                .putLong(NbdProtocol.IHAVEOPT)
                .putShort((short) NbdProtocol.FLAG_FIXED_NEWSTYLE)
                .flip());
        int clientFlags = peer.read(4).getInt();
        List<Integer> options = new ArrayList<>();
        while (true) {
            ByteBuffer header = peer.read(16);
            header.getLong();
            int option = header.getInt();
            int length = header.getInt();
            byte[] data = new byte[length];
            peer.read(length).get(data);
            options.add(option);
            if (option == NbdProtocol.OPT_EXPORT_NAME) {
                peer.write(ByteBuffer.allocate(134)
                        .putLong(size)
                        .putShort((short) (NbdProtocol.FLAG_HAS_FLAGS | NbdProtocol.FLAG_SEND_FLUSH))
                        .clear());
                return new Handshake(clientFlags, options, new String(data, java.nio.charset.StandardCharsets.UTF_8));
            }
            peer.write(ByteBuffer.allocate(20)
                    .putLong(NbdProtocol.OPTION_REPLY_MAGIC)
                    .putInt(option)
                    .putInt(NbdProtocol.REP_ERR_UNSUP)
                    .putInt(0)
                    .flip());
        }
    }

    /** A server that knows only NBD_OPT_EXPORT_NAME (and sends the 124 zero bytes). */
    private static List<Integer> oldServer(ServerSocketChannel listener) {
        try (RawPeer peer = new RawPeer(listener.accept())) {
            Handshake handshake = exportNameHandshake(peer, 1 << 20);
            assertEquals(NbdProtocol.FLAG_C_FIXED_NEWSTYLE, handshake.clientFlags(), "no NO_ZEROES: not offered");
            assertEquals("legacy", handshake.exportName());
            ByteBuffer request = peer.read(28);
            request.position(8);
            long cookie = request.getLong();
            ByteBuffer reply = ByteBuffer.allocate(16 + 512)
                    .putInt(NbdProtocol.SIMPLE_REPLY_MAGIC)
                    .putInt(0)
                    .putLong(cookie);
            reply.put(16, (byte) 0x5A);
            peer.write(reply.clear());
            peer.read(28); // NBD_CMD_DISC
            return handshake.options();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    @Test
    void silentServerTimesOutTheHandshake() throws IOException {
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            NbdClientConfig config = NbdClientConfig.builder()
                    .connectTimeout(Duration.ofMillis(300))
                    .build();
            long start = System.nanoTime();
            NbdTimeoutException e =
                    assertThrows(NbdTimeoutException.class, () -> NbdClient.connect("nbd://127.0.0.1:" + port, config));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(millis >= 250 && millis < 3000, "timed out after " + millis + " ms: " + e.getMessage());
        }
    }

    @Test
    void hungServerYieldsTimeoutThenEveryCallFailsFast() throws Exception {
        InstrumentedDisk disk = disk(1 << 20);
        NbdServer server = serve(disk, NbdServerConfig.builder().drainTimeout(Duration.ofSeconds(1)));
        NbdClient client = closeLater(NbdClient.connect(
                server.uri(),
                NbdClientConfig.builder().requestTimeout(Duration.ofMillis(500)).build()));
        disk.closeGate();
        try {
            long start = System.nanoTime();
            assertThrows(NbdTimeoutException.class, () -> client.read(0, ByteBuffer.allocate(4096), 0, 4096));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(millis >= 450 && millis < 3000, "timed out after " + millis + " ms");
            assertFalse(client.isOpen());
            start = System.nanoTime();
            IOException later = assertThrows(IOException.class, () -> client.write(0, ByteBuffer.allocate(8), 0, 8));
            assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(200), "later calls fail fast");
            assertTrue(later.getMessage().contains("closed"), later.getMessage());
        } finally {
            disk.openGate();
        }
    }

    @Test
    void interruptedCallerFailsAloneAndTheConnectionStaysUsable() throws Exception {
        InstrumentedDisk disk = disk(1 << 20);
        NbdClient client = client(serve(disk, NbdServerConfig.builder()));
        Thread.currentThread().interrupt();
        try {
            // Interrupted while waiting to send: the request is abandoned before it reaches the wire.
            client.read(0, ByteBuffer.allocate(512), 0, 512);
        } catch (java.io.InterruptedIOException expected) {
            // acceptable: the send lock is taken interruptibly
        } finally {
            assertTrue(Thread.interrupted(), "the interrupt status is preserved");
        }
        assertTrue(client.isOpen(), "an interrupt does not close the connection");
        client.read(0, ByteBuffer.allocate(512), 0, 512);
    }

    private static byte[] read(NbdClient client, long at, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        for (int done = 0; done < length; done += client.maxRequestBytes()) {
            int n = Math.min(client.maxRequestBytes(), length - done);
            client.read(at + done, buffer, done, n);
        }
        return buffer.array();
    }

    interface Condition {
        boolean holds() throws Exception;
    }

    static void awaitTrue(Condition condition, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(5);
        }
    }

    /** Blocking socket helper for fake servers. */
    private static final class RawPeer implements AutoCloseable {
        private final SocketChannel channel;

        RawPeer(SocketChannel channel) {
            this.channel = channel;
        }

        ByteBuffer read(int n) throws IOException {
            ByteBuffer buffer = ByteBuffer.allocate(n);
            while (buffer.hasRemaining()) {
                if (channel.read(buffer) < 0) {
                    throw new java.io.EOFException();
                }
            }
            return buffer.flip();
        }

        void write(ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    static long seed() {
        String fixed = System.getProperty("nbd.seed");
        long seed = fixed != null ? Long.parseLong(fixed) : System.nanoTime();
        System.out.println("seed=" + seed + " (rerun with -Dnbd.seed=" + seed + ")");
        return seed;
    }

    static byte[] readAll(org.raidfive.disk.MemberDisk disk) throws java.io.IOException {
        byte[] image = new byte[Math.toIntExact(disk.size())];
        java.nio.ByteBuffer chunk = java.nio.ByteBuffer.allocateDirect(1 << 20);
        for (long at = 0; at < disk.size(); at += chunk.capacity()) {
            int n = (int) Math.min(chunk.capacity(), disk.size() - at);
            disk.read(at, chunk, 0, n);
            chunk.get(0, image, (int) at, n);
        }
        return image;
    }
}
