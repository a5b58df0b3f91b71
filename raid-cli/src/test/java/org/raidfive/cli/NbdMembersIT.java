package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * NBD both ways, through the real launcher: an array whose members are four {@code nbdkit memory}
 * exports is created, written and read with nbd+unix:// URIs for members, then served with
 * {@code raid serve} to fio; one nbdkit is SIGKILLed under it and fio still verifies every block
 * (the member is failed, reads are rebuilt from parity); a fifth export is added as a spare and
 * the array rebuilt onto it. A grow over nbdkit exports that loses one mid-way never connects to it
 * again. Skipped without nbdkit (and fio, for the first).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdMembersIT {
    @TempDir
    Path dir;

    private final List<Tools.Nbdkit> servers = new ArrayList<>();

    @AfterEach
    void stopServers() throws InterruptedException {
        for (Tools.Nbdkit n : servers) {
            n.kill();
        }
    }

    private Tools.Nbdkit nbdkit(String name) throws Exception {
        return nbdkit(name, "24M");
    }

    private Tools.Nbdkit nbdkit(String name, String size) throws Exception {
        Tools.Nbdkit n = Tools.Nbdkit.unix(dir, name, "memory", size);
        servers.add(n);
        return n;
    }

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    private RaidLauncher.Result run(int exit, String... args) {
        RaidLauncher.Result r = RaidLauncher.run(dir, args);
        assertEquals(exit, r.exit(), r.all());
        return r;
    }

    @Test
    void anArrayOfNbdkitExportsIsCreatedServedDegradedAndRebuilt() throws Exception {
        Tools.assumeInstalled("fio", "fio");
        List<String> uris = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            uris.add(nbdkit("m" + i).uri());
        }
        RaidLauncher.Result created = run(0, with(List.of("create", "--chunk", "64K"), uris));
        assertTrue(created.stderr().contains("computing parity (initial resync)"), created.all());
        byte[] data = MemberFiles.random(4 << 20, 11);
        Files.write(dir.resolve("data.bin"), data);
        run(0, with(List.of("write", "--offset", "1M", "--input", "data.bin"), uris));
        List<String> shuffled = List.of(uris.get(2), uris.get(0), uris.get(3), uris.get(1));
        assertArrayEquals(
                data,
                run(0, with(List.of("read", "--offset", "1M", "--length", "4M"), shuffled))
                        .stdout());
        RaidLauncher.Result detail = run(0, with(List.of("detail"), uris));
        assertTrue(detail.out().contains("active sync") && detail.out().contains(uris.get(3)), detail.out());

        List<String> fio = List.of(
                "fio",
                "--name=nbdm",
                "--ioengine=nbd",
                "--rw=randwrite",
                "--bs=4k",
                "--offset=8m",
                "--size=16m",
                "--iodepth=16",
                "--verify=crc32c",
                "--randseed=99",
                "--verify_fatal=1",
                "--verify_state_save=0");
        try (Served s = Served.start(dir, with(List.of("--port", "0"), uris))) {
            List<String> write = new ArrayList<>(fio);
            write.add("--uri=" + s.uri());
            Tools.Result w = Tools.run(dir, Duration.ofSeconds(90), write);
            assertEquals(0, w.exit(), w.output());

            servers.get(2).kill(); // SIGKILL under the running server
            List<String> verify = new ArrayList<>(write);
            verify.add("--verify_only");
            Tools.Result v = Tools.run(dir, Duration.ofSeconds(90), verify);
            assertEquals(0, v.exit(), "every block reads back, member 2's rebuilt from parity:\n" + v.output());
            assertTrue(s.awaitLine(uris.get(2) + " failed (I/O error): marked faulty", 10), s.stderr());
            assertTrue(s.awaitLine("is degraded (3 of 4 members in sync)", 10), s.stderr());
            assertEquals(1, s.stop("TERM"), "degraded at the end: exit 1\n" + s.stderr());
            assertTrue(s.stderr().contains("closed clean (degraded, 3 of 4 members in sync)"), s.stderr());
        }
        List<String> live = List.of(uris.get(0), uris.get(1), uris.get(3));
        run(1, with(List.of("detail"), live));
        assertArrayEquals(
                data,
                run(0, with(List.of("read", "--offset", "1M", "--length", "4M"), live))
                        .stdout());

        String spare = nbdkit("spare").uri();
        run(0, with(List.of("add", "--spare", spare), live));
        List<String> all = new ArrayList<>(live);
        all.add(spare);
        run(0, with(List.of("rebuild"), all));
        run(0, with(List.of("check"), all));
        run(0, with(List.of("detail"), all));
        assertArrayEquals(
                data,
                run(0, with(List.of("read", "--offset", "1M", "--length", "4M"), all))
                        .stdout());
    }

    /**
     * A grow over NBD members that loses one (its nbdkit SIGKILLed once the reshape runs) finishes
     * degraded, exit 1, and never connects to the lost member again: a listener put at its socket
     * counts no connection, however long the grow's end takes. (The end once asked every member
     * whether it had become a spare, and a dead server's link took its connect timeout to say no.)
     * The three members left read the data.
     */
    @Test
    void aGrowOverNbdThatLosesAMemberNeverConnectsToItAgain() throws Exception {
        List<String> uris = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            uris.add(nbdkit("g" + i, "64M").uri());
        }
        String added = nbdkit("g4", "64M").uri();
        run(0, with(List.of("create", "--chunk", "64K", "--assume-clean"), uris));
        byte[] data = MemberFiles.random(16 << 20, 12);
        Files.write(dir.resolve("data.bin"), data);
        run(0, with(List.of("write", "--offset", "0", "--input", "data.bin"), uris));

        Process grow = RaidLauncher.builder(
                        dir,
                        List.of(),
                        with(List.of("grow", "--speed-limit-max", "16M", "--raid-devices", "5", "--add", added), uris))
                .start();
        RaidLauncher.drain(grow.getInputStream());
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        var errDone = RaidLauncher.drain(grow.getErrorStream(), err);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!err.toString().contains(": reshaping") && grow.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(err.toString().contains(": reshaping"), "the reshape runs: " + err);
        servers.get(1).kill();
        Path socket = dir.resolve("g1.sock");
        Files.deleteIfExists(socket); // left by the SIGKILLed nbdkit
        AtomicInteger connections = new AtomicInteger();
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(socket));
            Thread counter = new Thread(() -> {
                while (true) {
                    try (SocketChannel c = listener.accept()) {
                        connections.incrementAndGet();
                    } catch (java.io.IOException closed) {
                        return;
                    }
                }
            });
            counter.setDaemon(true);
            counter.start();
            boolean ended = grow.waitFor(120, TimeUnit.SECONDS);
            if (!ended) {
                grow.destroyForcibly();
            }
            assertTrue(ended, "the grow ends: " + err);
        }
        errDone.get(10, TimeUnit.SECONDS);
        String said = err.toString();
        assertEquals(1, grow.exitValue(), "degraded at the end: exit 1\n" + said);
        assertTrue(said.contains(uris.get(1) + " failed and is recorded faulty"), said);
        assertEquals(0, connections.get(), "connections to the lost member after it failed\n" + said);
        List<String> left = List.of(uris.get(0), uris.get(2), uris.get(3), added);
        assertArrayEquals(
                data,
                run(0, with(List.of("read", "--offset", "0", "--length", "16M"), left))
                        .stdout());
    }
}
