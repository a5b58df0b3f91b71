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
        new Thread(() -> {
            try {
                for (int i = 0; i < count; i++) {
                    w.request(0, NbdWire.CMD_READ, i, (i * (long) bytes) % (size - bytes), bytes, null);
                }
            } catch (IOException e) {
                // the server stopped reading (back-pressure) or closed us: what it should do
            }
        }, "non-reader").start();
        return w;
    }

    @Test
    void aGoodClientCompletesBesideIdleHandshakesAndClientsThatNeverReadAndMemoryStaysBounded() throws Exception {
        Tools.assumeInstalled("fio", "fio");
        try (Served s = Served.start(dir, "--backend", "memory", "--disks", "4", "--size", "256M", "--executor",
                "pool", "--port", "0")) {
            long pid = s.process().pid();
            List<SocketChannel> idle = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                idle.add(SocketChannel.open(address(s.uri()))); // never a byte of handshake
            }
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
            Tools.Result fio = Tools.run(dir, Duration.ofSeconds(120), List.of("fio", "--name=good",
                    "--ioengine=nbd", "--uri=" + s.uri(), "--rw=randread", "--bs=4k", "--iodepth=16",
                    "--runtime=8", "--time_based", "--size=64m", "--output-format=terse", "--terse-version=3"));
            watch.interrupt();
            watch.join();
            assertEquals(0, fio.exit(), "the good client completes:\n" + fio.output());
            String[] terse = fio.output().trim().split("\n");
            long ios = Long.parseLong(terse[terse.length - 1].split(";")[7]); // read IOPS
            assertTrue(ios > 100, "the good client got service: " + ios + " IOPS\n" + fio.output());
            assertTrue(peak.get() < RSS_BOUND, "server RSS peaked at " + (peak.get() >> 20) + " MiB, bound "
                    + (RSS_BOUND >> 20) + " MiB");
            System.out.printf("good client beside 200 idle handshakes and 12 non-readers: %d IOPS, server RSS peak "
                    + "%d MiB%n", ios, peak.get() >> 20);
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
    void idleClientsCannotKeepANewOneOutWithTheDefaults() throws Exception {
        try (Served s = Served.start(dir, "--backend", "memory", "--disks", "3", "--size", "16M", "--port", "0")) {
            List<NbdWire> idle = new ArrayList<>();
            for (int i = 0; i < 64; i++) { // --max-connections' default: every slot, past GO, then silent
                NbdWire w = NbdWire.connect(s.uri());
                assertEquals(NbdWire.REP_ACK, w.go("raid"));
                idle.add(w);
            }
            Thread.sleep(5_500);
            NbdWire late = NbdWire.connect(s.uri());
            assertEquals(NbdWire.REP_ACK, late.go("raid"), "a newcomer gets in past " + idle.size() + " idle clients:\n"
                    + s.stderr());
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

    @Test
    void idleHandshakesTimeOutAndAFullServerRefusesWithAReason() throws Exception {
        try (Served s = Served.start(dir, "--backend", "memory", "--disks", "3", "--size", "16M", "--port", "0",
                "--max-connections", "4", "--handshake-timeout", "2")) {
            List<NbdWire> working = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                NbdWire w = NbdWire.connect(s.uri());
                assertEquals(NbdWire.REP_ACK, w.go("raid"));
                working.add(w);
            }
            NbdWire fifth = NbdWire.connectRaw(s.uri());
            assertTrue(fifth.closedByServer(), "a server full of working connections refuses the next");
            assertTrue(s.awaitLine("refused: 4 connections are open, none idle for 5 s, the most allowed "
                    + "(--max-connections 4)", 10), s.stderr());
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
