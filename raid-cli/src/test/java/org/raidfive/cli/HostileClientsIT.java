package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code raid serve} against clients that try to lock others out: 200 connections that never
 * finish the handshake, 4 clients that pipeline reads and never take a reply, 8 that ask for
 * 32 MiB reads and never take them. A well-behaved fio job beside them completes, the server's
 * resident memory stays bounded, and a server full of working connections refuses the next one
 * with a logged reason.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostileClientsIT {
    /** The server's resident set must stay under this (it was 9.4 GB before the budget). */
    static final long RSS_BOUND = 1536L << 20;

    @TempDir
    Path dir;

    static long rss(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return -1;
    }

    private static InetSocketAddress address(String uri) {
        Matcher m = Pattern.compile("^nbd://([^:/]+):(\\d+)/.*$").matcher(uri);
        assertTrue(m.matches(), uri);
        return new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2)));
    }

    /** A client that pipelines {@code count} reads of {@code bytes} and never reads a reply. */
    private static NbdWire nonReader(String uri, int count, int bytes, long size) throws IOException {
        NbdWire w = NbdWire.connect(uri);
        assertEquals(NbdWire.REP_ACK, w.go("raid"));
        new Thread(
                        () -> {
                            try {
                                for (int i = 0; i < count; i++) {
                                    w.request(0, NbdWire.CMD_READ, i, (i * (long) bytes) % (size - bytes), bytes, null);
                                }
                            } catch (IOException e) {
                                // the server stopped reading (back-pressure) or closed us: what it should do
                            }
                        },
                        "non-reader")
                .start();
        return w;
    }

    @Test
    void aGoodClientCompletesBesideIdleHandshakesAndClientsThatNeverReadAndMemoryStaysBounded() throws Exception {
        Tools.assumeInstalled("fio", "fio");
        try (Served s = Served.start(
                dir, "--backend", "memory", "--disks", "4", "--size", "256M", "--executor", "pool", "--port", "0")) {
            long pid = s.process().pid();
            List<SocketChannel> idle = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                idle.add(SocketChannel.open(address(s.uri()))); // never a byte of handshake
            }
            Thread.sleep(1200); // silent past the grace in which a client of the same user is not evicted
            List<NbdWire> hostile = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                hostile.add(nonReader(s.uri(), 256, 1 << 20, s.size()));
            }
            for (int i = 0; i < 8; i++) {
                hostile.add(nonReader(s.uri(), 64, 32 << 20, s.size()));
            }
            AtomicLong peak = new AtomicLong();
            Thread watch = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        peak.accumulateAndGet(rss(pid), Math::max);
                        Thread.sleep(100);
                    } catch (IOException | InterruptedException e) {
                        return;
                    }
                }
            });
            watch.start();
            Thread.sleep(2000); // let the hostile clients fill whatever they can
            Tools.Result fio = Tools.run(
                    dir,
                    Duration.ofSeconds(120),
                    List.of(
                            "fio",
                            "--name=good",
                            "--ioengine=nbd",
                            "--uri=" + s.uri(),
                            "--rw=randread",
                            "--bs=4k",
                            "--iodepth=16",
                            "--runtime=8",
                            "--time_based",
                            "--size=64m",
                            "--output-format=terse",
                            "--terse-version=3"));
            watch.interrupt();
            watch.join();
            assertEquals(0, fio.exit(), "the good client completes:\n" + fio.output());
            String[] terse = fio.output().trim().split("\n");
            long ios = Long.parseLong(terse[terse.length - 1].split(";")[7]); // read IOPS
            assertTrue(ios > 100, "the good client got service: " + ios + " IOPS\n" + fio.output());
            assertTrue(
                    peak.get() < RSS_BOUND,
                    "server RSS peaked at " + (peak.get() >> 20) + " MiB, bound " + (RSS_BOUND >> 20) + " MiB");
            System.out.printf(
                    "good client beside 200 idle handshakes and 12 non-readers: %d IOPS, server RSS peak " + "%d MiB%n",
                    ios, peak.get() >> 20);
            for (SocketChannel c : idle) {
                c.close();
            }
            for (NbdWire w : hostile) {
                w.close();
            }
            assertTrue(s.process().isAlive());
            assertTrue(!s.stderr().contains("OutOfMemoryError") && !s.stderr().contains("\tat "), s.stderr());
        }
    }

    @Test
    void idleClientsCannotKeepANewOneOut() throws Exception {
        // one source may hold every slot here: what is tested is a full server's eviction of the idle
        try (Served s = Served.start(
                dir,
                "--backend",
                "memory",
                "--disks",
                "3",
                "--size",
                "16M",
                "--port",
                "0",
                "--max-connections-per-address",
                "64")) {
            List<NbdWire> idle = new ArrayList<>();
            for (int i = 0; i < 64; i++) { // --max-connections' default: every slot, past GO, then silent
                NbdWire w = NbdWire.connect(s.uri());
                assertEquals(NbdWire.REP_ACK, w.go("raid"));
                idle.add(w);
            }
            Thread.sleep(5_500);
            NbdWire late = NbdWire.connect(s.uri());
            assertEquals(
                    NbdWire.REP_ACK,
                    late.go("raid"),
                    "a newcomer gets in past " + idle.size() + " idle clients:\n" + s.stderr());
            late.request(0, NbdWire.CMD_READ, 1, 0, 4096, null);
            long[] reply = late.reply();
            assertEquals(0, reply[0], "and is served");
            late.close();
            assertTrue(s.awaitLine("evicted by a new connection: idle for", 10), s.stderr());
            for (NbdWire w : idle) {
                w.close();
            }
        }
    }

    /** A client past NBD_OPT_GO that sends a write header and then its 1 MiB payload a byte a second. */
    private static NbdWire trickler(String uri, String source) throws IOException {
        NbdWire w = NbdWire.connectFrom(uri, source);
        assertEquals(NbdWire.REP_ACK, w.go("raid"));
        w.request(0, NbdWire.CMD_WRITE, 7, 0, 1 << 20, null);
        new Thread(
                        () -> {
                            try {
                                for (int i = 0; i < (1 << 20); i++) {
                                    w.write(java.nio.ByteBuffer.wrap(new byte[] {(byte) i}));
                                    Thread.sleep(1000);
                                }
                            } catch (IOException | InterruptedException e) {
                                // closed by the server: what it should do
                            }
                        },
                        "trickler")
                .start();
        return w;
    }

    @Test
    void clientsTricklingWritePayloadsCannotHoldTheSlots() throws Exception {
        // one source may hold every slot here: what is tested is the trickle rule and the payload deadline
        try (Served s = Served.start(
                dir,
                "--backend",
                "memory",
                "--disks",
                "3",
                "--size",
                "16M",
                "--port",
                "0",
                "--max-connections-per-address",
                "64")) {
            List<NbdWire> tricklers = new ArrayList<>();
            for (int i = 0; i < 64; i++) { // every slot
                tricklers.add(trickler(s.uri(), null));
            }
            Thread.sleep(2_000); // past the first second, in which a payload is never called trickling
            NbdWire late = NbdWire.connect(s.uri());
            assertEquals(
                    NbdWire.REP_ACK, late.go("raid"), "a newcomer gets in past 64 trickling writers:\n" + s.stderr());
            late.request(0, NbdWire.CMD_READ, 1, 0, 4096, null);
            assertEquals(0, late.reply()[0], "and is served");
            late.close();
            assertTrue(s.awaitLine("-byte write payload trickling in for", 10), s.stderr());
            // The rest are closed by the payload deadline: 10 s (--payload-timeout) plus 1 s for 1 MiB.
            assertTrue(
                    s.awaitLine(
                            "1048576-byte write payload did not arrive within 11 s (--payload-timeout 10 "
                                    + "plus a second per MiB)",
                            30),
                    s.stderr());
            int closed = 0;
            for (NbdWire w : tricklers) {
                if (w.closedByServer()) {
                    closed++;
                }
            }
            assertEquals(64, closed, "every trickling writer is closed");
            assertTrue(s.process().isAlive());
        }
    }

    @Test
    void aSlowHandshakeThatProgressesGetsInBesideAFloodOfSilentOnes() throws Exception {
        try (Served s = Served.start(dir, "--backend", "memory", "--disks", "3", "--size", "16M", "--port", "0")) {
            // 40 silent connections a second, as the issue measured, from another user of the machine
            try (Attacker flood = Attacker.start(s.uri(), "silent", 40)) {
                Thread.sleep(1000); // the handshake slots are full of silent connections
                for (int round = 0; round < 3; round++) {
                    NbdWire slow = NbdWire.connectRaw(s.uri());
                    slow.greeting();
                    Thread.sleep(300); // 0.6 s in all, past the 0.4 s in which 16 silent ones arrive
                    slow.write(java.nio.ByteBuffer.allocate(4).putInt(3).flip());
                    Thread.sleep(300);
                    assertEquals(
                            NbdWire.REP_ACK,
                            slow.go("raid"),
                            "round " + round + ": the slow client gets in:\n" + s.stderr());
                    slow.request(0, NbdWire.CMD_READ, 1, 0, 4096, null);
                    assertEquals(0, slow.reply()[0], "and is served");
                    slow.close();
                }
            }
            assertTrue(
                    s.stderr().contains("evicted by a new connection: silent in the handshake")
                            || s.awaitLine("silent in the handshake", 5),
                    s.stderr());
        }
    }

    @Test
    void noClientThatHasItsGoReplyIsEvictedAsAHandshake() throws Exception {
        try (Served s = Served.start(
                dir,
                "--backend",
                "memory",
                "--disks",
                "3",
                "--size",
                "16M",
                "--port",
                "0",
                "--max-connections",
                "2",
                "--max-connections-per-address",
                "2")) {
            java.util.concurrent.atomic.AtomicInteger served = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger refusedAtConnect =
                    new java.util.concurrent.atomic.AtomicInteger();
            List<String> lostAfterGo = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 10; t++) {
                Thread thread = new Thread(() -> {
                    int done = 0;
                    while (done < 10) {
                        NbdWire w;
                        try {
                            w = NbdWire.connect(s.uri());
                            if (w.go("raid") != NbdWire.REP_ACK) {
                                w.close();
                                refusedAtConnect.incrementAndGet();
                                continue;
                            }
                        } catch (IOException | AssertionError e) { // refused before GO: try again
                            refusedAtConnect.incrementAndGet();
                            continue;
                        }
                        try (w) {
                            w.request(0, NbdWire.CMD_READ, 1, 0, 4096, null);
                            w.reply();
                            w.readExactly(4096);
                            served.incrementAndGet();
                        } catch (IOException | AssertionError e) {
                            lostAfterGo.add(e.toString());
                        }
                        done++;
                    }
                });
                threads.add(thread);
                thread.start();
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertEquals(
                    List.of(),
                    lostAfterGo,
                    "connections lost after their GO reply (served " + served + "):\n" + s.stderr());
            assertEquals(100, served.get());
            System.out.printf(
                    "100 clients through 2 slots: %d attempts refused before GO, none lost after it%n",
                    refusedAtConnect.get());
        }
    }

    @Test
    void oneUserOrAddressCannotHoldEverySlot() throws Exception {
        try (Served s = Served.start(
                dir, "--backend", "memory", "--disks", "3", "--size", "16M", "--port", "0", "--max-connections", "8")) {
            // Another user of this machine, from 127.0.0.1 as everyone local: told apart by its uid.
            try (Attacker idle = Attacker.start(s.uri(), "idle", 8)) {
                assertTrue(
                        s.awaitLine(
                                "refused: 4 connections from uid 65534 are open, none unused, the most one "
                                        + "source may hold (--max-connections-per-address 4)",
                                10),
                        s.stderr());
                List<NbdWire> mine = new ArrayList<>();
                for (int i = 0; i < 4; i++) { // this user's own half
                    NbdWire w = NbdWire.connect(s.uri());
                    assertEquals(
                            NbdWire.REP_ACK, w.go("raid"), "this user gets in beside the other's 8:\n" + s.stderr());
                    w.request(0, NbdWire.CMD_READ, 1, 0, 4096, null);
                    assertEquals(0, w.reply()[0]);
                    w.readExactly(4096);
                    mine.add(w);
                }
                for (NbdWire w : mine) {
                    w.close();
                }
            }
            Thread.sleep(1000); // the server notices the closes
            // Another loopback address is no way round the quota: 127.0.0.2 and 127.0.0.3 are this same user.
            List<NbdWire> busy = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                NbdWire w = NbdWire.connectFrom(s.uri(), "127.0.0.2");
                assertEquals(NbdWire.REP_ACK, w.go("raid"));
                busy.add(w);
            }
            NbdWire fifth = NbdWire.connectRaw(s.uri(), "127.0.0.3");
            assertTrue(
                    fifth.closedByServer(),
                    "a fifth connection of the same user, from another loopback address, " + "is refused");
            assertTrue(s.awaitLine("refused: 4 connections from uid 0 are open", 10), s.stderr());
            fifth.close();
            for (NbdWire w : busy) {
                w.close();
            }
        }
    }

    /**
     * bench/lockout_attacks.py as another user (nobody, through setpriv), as an attacker on a
     * shared machine is: a real process, on the same 127.0.0.1 as every local client.
     */
    static final class Attacker implements AutoCloseable {
        private final Process process;

        private Attacker(Process process) {
            this.process = process;
        }

        static Attacker start(String uri, String mode, int n) throws IOException {
            org.junit.jupiter.api.Assumptions.assumeTrue(
                    "root".equals(System.getProperty("user.name")),
                    "runs the attacker as another user: needs root (CI runs as root)");
            Matcher m = Pattern.compile("^nbd://([^:/]+):(\\d+)/.*$").matcher(uri);
            assertTrue(m.matches(), uri);
            String script = Files.readString(Path.of("..", "bench", "lockout_attacks.py"));
            Process p = new ProcessBuilder(
                            "setpriv",
                            "--reuid=65534",
                            "--regid=65534",
                            "--clear-groups",
                            "/usr/bin/python3",
                            "-c",
                            script,
                            m.group(1),
                            m.group(2),
                            mode,
                            Integer.toString(n))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            String ready = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
            assertEquals("READY", ready, "the attacker started");
            return new Attacker(p);
        }

        @Override
        public void close() throws IOException {
            process.getOutputStream().close(); // the attacker stops when its stdin closes
            try {
                if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void idleHandshakesTimeOutAndAFullServerRefusesWithAReason() throws Exception {
        try (Served s = Served.start(
                dir,
                "--backend",
                "memory",
                "--disks",
                "3",
                "--size",
                "16M",
                "--port",
                "0",
                "--max-connections",
                "4",
                "--max-connections-per-address",
                "4",
                "--handshake-timeout",
                "2")) {
            List<NbdWire> working = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                NbdWire w = NbdWire.connect(s.uri());
                assertEquals(NbdWire.REP_ACK, w.go("raid"));
                working.add(w);
            }
            NbdWire fifth = NbdWire.connectRaw(s.uri());
            assertTrue(fifth.closedByServer(), "a server full of working connections refuses the next");
            assertTrue(
                    s.awaitLine(
                            "refused: 4 connections are open, none idle for 5 s, the most allowed "
                                    + "(--max-connections 4)",
                            10),
                    s.stderr());
            for (NbdWire w : working) {
                w.close();
            }
            Thread.sleep(1000); // the server notices the four closes (until then it is still full)
            SocketChannel silent = SocketChannel.open(address(s.uri()));
            long start = System.nanoTime();
            silent.read(java.nio.ByteBuffer.allocate(18)); // the greeting
            int n = silent.read(java.nio.ByteBuffer.allocate(1)); // then nothing, until the server hangs up
            long waited = (System.nanoTime() - start) / 1_000_000;
            assertEquals(-1, n);
            assertTrue(waited >= 1500 && waited < 15_000, "closed after the 2 s handshake timeout: " + waited + " ms");
            silent.close();
        }
    }
}
