package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.MemoryDisk;

/**
 * The server's defences, against raw sockets: the handshake timeout, the cap on connections in
 * the handshake (the oldest is evicted, a real client gets in), the payload budget (a client that
 * never reads its replies holds no more than its share, and others are still served), the reply
 * timeout, LIST hidden, and requests over the advertised maximum refused without being buffered.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdServerLimitsTest {
    private static final int SIZE = 64 << 20;

    private static NbdServer start(NbdServerConfig.Builder b) throws IOException {
        return NbdServer.start(new MemoryDisk(SIZE), b.port(0).build());
    }

    private static InetSocketAddress address(NbdServer s) {
        return new InetSocketAddress("127.0.0.1", s.port());
    }

    /** True once the server hung up (end of stream), reading at most {@code skip} bytes of greeting first. */
    private static boolean hungUp(SocketChannel c) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4096);
        while (true) {
            b.clear();
            int n;
            try {
                n = c.read(b);
            } catch (IOException reset) {
                return true;
            }
            if (n < 0) {
                return true;
            }
        }
    }

    @Test
    void anUnfinishedHandshakeIsCutOffAfterTheTimeout() throws Exception {
        try (NbdServer s = start(NbdServerConfig.builder().handshakeTimeout(Duration.ofMillis(500)));
                SocketChannel c = SocketChannel.open(address(s))) {
            long t0 = System.nanoTime();
            assertTrue(hungUp(c));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 400 && ms < 5000, "hung up after " + ms + " ms");
        }
    }

    @Test
    void idleHandshakesAreEvictedSoARealClientGetsIn() throws Exception {
        try (NbdServer s = start(NbdServerConfig.builder()
                .maxConnections(8)
                .maxConnectionsPerAddress(8)
                .maxHandshaking(4)
                .handshakeTimeout(Duration.ZERO))) {
            List<SocketChannel> idle = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                idle.add(SocketChannel.open(address(s)));
            }
            // Past the second in which a silent handshake is safe from newcomers of its own user (this one).
            Thread.sleep(1100);
            try (RawNbd good = new RawNbd(address(s))) {
                long[] export = good.go("raid");
                assertEquals(SIZE, export[0], "a real client completes its handshake beside 20 idle ones");
            }
            int dropped = 0;
            for (SocketChannel c : idle) {
                c.configureBlocking(false);
                ByteBuffer b = ByteBuffer.allocate(64);
                long deadline = System.nanoTime() + 200_000_000L;
                int n = 0;
                while (System.nanoTime() < deadline && (n = c.read(b)) >= 0) {
                    b.clear();
                    Thread.sleep(5);
                }
                if (n < 0) {
                    dropped++;
                }
                c.close();
            }
            assertTrue(dropped >= 16, "idle handshakes past 4 were refused or evicted: " + dropped + " of 20");
        }
    }

    @Test
    void aClientThatNeverReadsHoldsOnlyItsShareAndOthersAreServed() throws Exception {
        long budget = 16L << 20;
        try (NbdServer s = start(NbdServerConfig.builder()
                        .inFlightBudgetBytes(budget)
                        .connectionReserveBytes(1 << 20)
                        .maxInFlightBytesPerConnection(8L << 20)
                        .maxRequestBytes(4 << 20)
                        .replyTimeout(Duration.ZERO));
                RawNbd greedy = new RawNbd(address(s))) {
            greedy.go("raid");
            Thread sender = new Thread(() -> {
                try {
                    for (int i = 0; i < 1000; i++) {
                        greedy.sendRequest(0, NbdProtocol.CMD_READ, i, 0, 4 << 20);
                    }
                } catch (IOException stopped) {
                    // back-pressure: the server stopped reading us
                }
            });
            sender.setDaemon(true);
            sender.start();
            Thread.sleep(1000);
            assertTrue(
                    s.sharedBudgetInUse() <= 8L << 20,
                    "one connection holds at most its cap: " + s.sharedBudgetInUse());
            try (NbdDisk other = NbdDisk.open("nbd://127.0.0.1:" + s.port() + "/raid")) {
                ByteBuffer b = ByteBuffer.allocateDirect(4096);
                for (int i = 0; i < 100; i++) {
                    other.read(i * 4096L, b, 0, 4096);
                }
            }
            assertTrue(s.sharedBudgetInUse() <= budget);
        }
    }

    @Test
    void aClientThatStopsTakingRepliesIsDisconnectedAfterTheReplyTimeout() throws Exception {
        try (NbdServer s = start(NbdServerConfig.builder()
                        .replyTimeout(Duration.ofSeconds(1))
                        .requestExecution(RequestExecution.WORKER_POOL));
                RawNbd stalled = new RawNbd(address(s))) {
            stalled.go("raid");
            Thread sender = new Thread(() -> {
                try {
                    for (int i = 0; i < 10_000; i++) {
                        stalled.sendRequest(0, NbdProtocol.CMD_READ, i, 0, 1 << 20);
                    }
                } catch (IOException closed) {
                    // the server gave up on us
                }
            });
            sender.setDaemon(true);
            sender.start();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (s.connectionCount() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(0, s.connectionCount(), "closed once its replies had not moved for 1 s");
            assertEquals(0, s.sharedBudgetInUse(), "and what they held was given back");
        }
    }

    @Test
    void listCanBeHiddenAndOversizedRequestsAreRefusedUnbuffered() throws Exception {
        try (NbdServer s = start(NbdServerConfig.builder().listExports(false).maxRequestBytes(1 << 20));
                RawNbd c = new RawNbd(address(s))) {
            c.greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES);
            c.sendOption(NbdProtocol.OPT_LIST, new byte[0]);
            assertEquals(NbdProtocol.REP_ERR_POLICY, c.readOptionReply().type());
            c.sendOption(NbdProtocol.OPT_GO, RawNbd.goData("raid", NbdProtocol.INFO_BLOCK_SIZE));
            int max = -1;
            while (true) {
                RawNbd.OptionReply r = c.readOptionReply();
                if (r.type() == NbdProtocol.REP_ACK) {
                    break;
                }
                ByteBuffer d = ByteBuffer.wrap(r.data());
                if (d.getShort() == NbdProtocol.INFO_BLOCK_SIZE) {
                    d.getInt();
                    d.getInt();
                    max = d.getInt();
                }
            }
            assertEquals(1 << 20, max, "the maximum is advertised");
            c.sendRequest(0, NbdProtocol.CMD_READ, 7, 0, 32 << 20);
            RawNbd.Reply r = c.readReply();
            assertEquals(NbdProtocol.EINVAL, r.error());
            assertEquals(7, r.cookie());
        }
    }
}
