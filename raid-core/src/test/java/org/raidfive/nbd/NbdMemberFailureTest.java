package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncLimits;
import org.raidfive.disk.MemberDisk;

/**
 * A RAID-5 array whose members are NBD exports of real {@code nbdkit} servers, failing the ways
 * remote disks fail: a server killed (SIGKILL: the connection drops), a server that answers EIO
 * (nbdkit's error filter, switched on by touching a file), a server that hangs (SIGSTOP: requests go
 * unanswered until the client's timeout). Each time the engine fails that member, the array runs
 * degraded and every byte written reads back (the oracle is a flat image of everything written).
 * Skipped without nbdkit.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdMemberFailureTest {
    private static final int CHUNK = 64 * 1024;
    private static final String MEMBER_SIZE = "16M";
    private static final NbdClientConfig CLIENT = NbdClientConfig.builder()
            .connectTimeout(Duration.ofSeconds(10))
            .requestTimeout(Duration.ofSeconds(5))
            .build();

    @TempDir
    Path tmp;

    private final List<Nbdkit> servers = new ArrayList<>();

    @AfterEach
    void killServers() {
        servers.forEach(Nbdkit::kill);
    }

    private Nbdkit nbdkit(String name, String... args) throws IOException, InterruptedException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        Nbdkit server = Nbdkit.unix(dir, args);
        servers.add(server);
        return server;
    }

    private List<MemberDisk> connect(List<Nbdkit> exports, NbdClientConfig config) throws IOException {
        List<MemberDisk> disks = new ArrayList<>();
        for (Nbdkit n : exports) {
            disks.add(NbdDisk.open(n.uri(), config));
        }
        return disks;
    }

    private static Raid5Array create(List<MemberDisk> disks) throws IOException {
        // nbdkit's memory plugin starts as zeros: parity already holds.
        return Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .syncLimits(SyncLimits.UNLIMITED)
                        .name("nbd:test")
                        .build(),
                disks);
    }

    /** Writes random bytes over the whole array, in 1 MiB pieces; returns them. */
    private static byte[] fill(Raid5Array array, long seed) throws IOException {
        byte[] image = new byte[(int) array.size()];
        new Random(seed).nextBytes(image);
        for (int at = 0; at < image.length; at += 1 << 20) {
            int n = Math.min(1 << 20, image.length - at);
            array.write(at, ByteBuffer.wrap(image, at, n), at, n);
        }
        return image;
    }

    /** Overwrites {@code count} random 4 KiB-aligned ranges of up to 256 KiB, keeping {@code image} in step. */
    private static void scribble(Raid5Array array, byte[] image, int count, long seed) throws IOException {
        Random r = new Random(seed);
        for (int i = 0; i < count; i++) {
            int length = 4096 * (1 + r.nextInt(64));
            int offset = 4096 * r.nextInt((image.length - length) / 4096);
            byte[] data = new byte[length];
            r.nextBytes(data);
            array.write(offset, ByteBuffer.wrap(data), 0, length);
            System.arraycopy(data, 0, image, offset, length);
        }
    }

    private static void assertHolds(Raid5Array array, byte[] image) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(1 << 20);
        for (int at = 0; at < image.length; at += 1 << 20) {
            int n = Math.min(1 << 20, image.length - at);
            array.read(at, buf, 0, n);
            byte[] got = new byte[n];
            buf.get(0, got);
            byte[] want = new byte[n];
            System.arraycopy(image, at, want, 0, n);
            assertArrayEquals(want, got, "array bytes at " + at + ".." + (at + n));
        }
    }

    private static MemberState stateOf(Raid5Array array, MemberDisk disk) {
        for (ArrayStatus.MemberStatus m : array.status().members()) {
            if (m.name().equals(disk.name())) {
                return m.state();
            }
        }
        return null; // no longer a member
    }

    @Test
    void killedServerDegradesTheArrayAndARebuildOntoAFreshExportRestoresIt() throws Exception {
        List<Nbdkit> exports = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            exports.add(nbdkit("m" + i, "memory", MEMBER_SIZE));
        }
        List<MemberDisk> disks = connect(exports, CLIENT);
        byte[] image;
        try (Raid5Array array = create(disks)) {
            image = fill(array, 1);
            exports.get(1).kill(); // SIGKILL: the socket drops under the client

            assertHolds(array, image); // the first read from the dead member fails it; parity rebuilds its data
            assertTrue(array.isDegraded(), "degraded after the server died");
            assertFalse(array.isFailed());
            assertEquals(MemberState.FAULTY, stateOf(array, disks.get(1)));
            scribble(array, image, 40, 2); // degraded writes
            assertHolds(array, image);

            Nbdkit fresh = nbdkit("spare", "memory", MEMBER_SIZE);
            MemberDisk spare = NbdDisk.open(fresh.uri(), CLIENT);
            array.addSpare(spare); // takes the faulty member's slot and recovers onto it
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended(), "recovery finished");
            assertTrue(array.syncProgress().complete(), "recovery completed: " + array.syncProgress());
            assertFalse(array.isDegraded(), "whole again");
            assertEquals(MemberState.IN_SYNC, stateOf(array, spare));
            assertHolds(array, image);
            array.startCheck(false);
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended(), "check finished");
            assertEquals(0, array.mismatchSectors(), "parity consistent after the rebuild over NBD");
            exports.set(1, fresh);
        }
        // The superblocks live on the exports: the array assembles again from fresh connections.
        try (Raid5Array again = Raid5Array.assemble(
                connect(List.of(exports.get(3), exports.get(1), exports.get(0), exports.get(2)), CLIENT))) {
            assertFalse(again.isDegraded());
            assertHolds(again, image);
        }
    }

    @Test
    void errorFilterFailsAMemberOnDemandWithNoDataLoss() throws Exception {
        Path errorFile = tmp.resolve("member2-fails");
        List<Nbdkit> exports = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            exports.add(
                    i == 2
                            ? nbdkit(
                                    "m" + i,
                                    "--filter=error",
                                    "memory",
                                    MEMBER_SIZE,
                                    "error=EIO",
                                    "error-rate=100%",
                                    "error-file=" + errorFile)
                            : nbdkit("m" + i, "memory", MEMBER_SIZE));
        }
        List<MemberDisk> disks = connect(exports, CLIENT);
        try (Raid5Array array = create(disks)) {
            byte[] image = fill(array, 3);
            Files.createFile(errorFile); // from now on member 2 answers every request with EIO
            scribble(array, image, 40, 4);
            assertHolds(array, image);
            assertTrue(array.isDegraded(), "member 2 failed on its first EIO");
            assertFalse(array.isFailed());
            assertEquals(MemberState.FAULTY, stateOf(array, disks.get(2)));
            Files.delete(errorFile); // the server is healthy again, but the member stays failed
            scribble(array, image, 10, 5);
            assertHolds(array, image);
            assertEquals(MemberState.FAULTY, stateOf(array, disks.get(2)));
        }
    }

    @Test
    void hungServerTimesOutAndTheTimedOutWriteIsNeverResent() throws Exception {
        Path log = tmp.resolve("member0.log");
        List<Nbdkit> exports = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            exports.add(
                    i == 0
                            ? nbdkit("m" + i, "--filter=log", "memory", MEMBER_SIZE, "logfile=" + log)
                            : nbdkit("m" + i, "memory", MEMBER_SIZE));
        }
        NbdClientConfig quick =
                NbdClientConfig.builder().requestTimeout(Duration.ofSeconds(1)).build();
        List<MemberDisk> disks = connect(exports, quick);
        try (Raid5Array array = create(disks)) {
            byte[] image = fill(array, 6);
            Thread.sleep(500); // idle: safemode marks the array clean, so nothing is pending on member 0
            long logged = Files.size(log);
            signal("STOP", exports.get(0).process());
            long t0 = System.nanoTime();
            byte[] stripe = new byte[3 * CHUNK];
            new Random(7).nextBytes(stripe);
            array.write(0, ByteBuffer.wrap(stripe), 0, stripe.length); // full stripe: a write to every member
            System.arraycopy(stripe, 0, image, 0, stripe.length);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(tookMillis >= 900 && tookMillis < 20_000, "the write waited for the 1 s timeout: " + tookMillis);
            assertTrue(array.isDegraded(), "the hung member is failed");
            assertEquals(MemberState.FAULTY, stateOf(array, disks.get(0)));

            signal("CONT", exports.get(0).process()); // the server wakes up and works through what it received
            scribble(array, image, 20, 8);
            assertHolds(array, image);
            Thread.sleep(500);
            List<String> after =
                    Files.readAllLines(log).stream().skip(lines(log, logged)).toList();
            long writes = after.stream().filter(l -> l.contains(" Write id=")).count();
            System.out.println("member 0 after it hung:\n" + String.join("\n", after));
            // At most the one request sent before the timeout; the client never resends and the
            // engine sends the failed member nothing more.
            assertTrue(writes <= 1, "writes reaching the hung server after it hung:\n" + String.join("\n", after));
        }
    }

    private static long lines(Path file, long bytes) throws IOException {
        byte[] head = Files.readAllBytes(file);
        long n = 0;
        for (int i = 0; i < Math.min(bytes, head.length); i++) {
            if (head[i] == '\n') {
                n++;
            }
        }
        return n;
    }

    private static void signal(String name, Process process) throws IOException, InterruptedException {
        ExternalTools.runOk(Duration.ofSeconds(10), "kill", "-" + name, Long.toString(process.pid()));
    }
}
