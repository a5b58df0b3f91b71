package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.nbd.NbdClient;
import org.raidfive.nbd.NbdClientConfig;

/**
 * {@code raid serve} on member files, driven by real NBD clients: fio's nbd engine writing and
 * verifying (crc32c), also after a member failed; a SIGTERM in the middle of I/O (every
 * acknowledged write is on the members, the array closed clean); qemu-img and nbdinfo over a Unix
 * socket; malformed and out-of-range requests sent by hand. Each test is skipped when its tool is
 * missing (CI installs fio, qemu-utils, libnbd-bin).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ServeIT {
    private static final Duration TOOL = Duration.ofSeconds(90);
    private static final List<String> MEMBERS = List.of("a.img", "b.img", "c.img", "d.img");

    @TempDir
    Path dir;

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    private RaidLauncher.Result ok(String... args) {
        RaidLauncher.Result r = RaidLauncher.run(dir, args);
        assertEquals(0, r.exit(), r.all());
        return r;
    }

    private void createArray() {
        ok(with(List.of("create", "--size", "24M", "--chunk", "64K"), MEMBERS));
    }

    /** fio's nbd engine: 4 KiB random writes over {@code size} from {@code offset}, crc32c in every block. */
    private static List<String> fioVerifyJob(String uri, String offset, String size, String... extra) {
        List<String> job = new ArrayList<>(List.of(
                "fio",
                "--name=verify",
                "--ioengine=nbd",
                "--uri=" + uri,
                "--rw=randwrite",
                "--bs=4k",
                "--offset=" + offset,
                "--size=" + size,
                "--iodepth=16",
                "--verify=crc32c",
                "--randseed=4242",
                "--verify_fatal=1",
                "--verify_state_save=0",
                "--group_reporting"));
        job.addAll(List.of(extra));
        return job;
    }

    private Tools.Result fio(List<String> job) throws IOException, InterruptedException {
        return Tools.run(dir, TOOL, job);
    }

    @Test
    void fioVerifiesWhatItWroteThenAgainWithAMemberFailed() throws Exception {
        Tools.assumeInstalled("fio", "fio");
        createArray();
        try (Served s = Served.start(dir, with(List.of("--port", "0"), MEMBERS))) {
            Tools.Result write = fio(fioVerifyJob(s.uri(), "0", "32m"));
            assertEquals(0, write.exit(), "fio wrote and verified 32 MiB:\n" + write.output());
            assertTrue(write.output().contains("err= 0"), write.output());
            assertEquals(0, s.stop("TERM"), s.stderr());
            assertTrue(s.stderr().contains("raid serve: stopped; raidfive:0 closed clean (whole)"), s.stderr());
        }
        RaidLauncher.Result detail = ok(with(List.of("detail"), MEMBERS));
        assertTrue(detail.out().contains("State : clean"), detail.out());

        ok(with(List.of("fail", "--member", "c.img"), MEMBERS));
        List<String> rest = List.of("d.img", "a.img", "b.img");
        try (Served s = Served.start(dir, with(List.of("--port", "0"), rest))) {
            assertTrue(
                    s.stderr().contains("3 of 4 members in sync") && s.stderr().contains("degraded"), s.stderr());
            Tools.Result verify = fio(fioVerifyJob(s.uri(), "0", "32m", "--verify_only"));
            assertEquals(0, verify.exit(), "degraded reads rebuild every block fio wrote:\n" + verify.output());
            assertEquals(1, s.stop("INT"), "exit 1: the array ended degraded\n" + s.stderr());
            assertTrue(
                    s.stderr().contains("stopped; raidfive:0 closed clean (degraded, 3 of 4 members in sync)"),
                    s.stderr());
        }
    }

    /**
     * SIGTERM while fio writes and 8 threads of our own NBD client write tagged blocks: serve answers
     * what is in flight and closes the array clean; every write a client saw acknowledged is on
     * the members (fio cannot say which of its writes were acknowledged, so the tagged writes are the
     * oracle), and data written before is intact (a fio verify-only pass).
     */
    @Test
    void sigtermDuringIoKeepsEveryAcknowledgedWrite() throws Exception {
        Tools.assumeInstalled("fio", "fio");
        createArray();
        Map<Long, Long> acked = new ConcurrentHashMap<>(); // block -> tag of its last acknowledged write
        try (Served s = Served.start(dir, with(List.of("--port", "0"), MEMBERS))) {
            Tools.Result before = fio(fioVerifyJob(s.uri(), "0", "16m"));
            assertEquals(0, before.exit(), before.output());

            // fio's nbd engine may spin on a connection the server closed: bounded, then killed.
            Process busy = Tools.start(
                    dir,
                    List.of(
                            "fio",
                            "--name=busy",
                            "--ioengine=nbd",
                            "--uri=" + s.uri(),
                            "--rw=randrw",
                            "--bs=4k",
                            "--offset=16m",
                            "--size=16m",
                            "--iodepth=16",
                            "--time_based",
                            "--runtime=60"),
                    dir.resolve("busy.log"));
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> writers = taggedWriters(s.uri(), 8, 32L << 20, 16L << 20, acked, stop);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (acked.size() < 500 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(acked.size() >= 500, "tagged writes are being acknowledged");
            assertTrue(
                    busy.isAlive(),
                    "fio is writing when the server is stopped:\n" + Files.readString(dir.resolve("busy.log")));
            assertEquals(0, s.stop("TERM"), s.stderr());
            assertTrue(s.stderr().contains("stopping (SIGTERM)"), s.stderr());
            assertTrue(s.stderr().contains("closed clean (whole)"), s.stderr());
            stop.set(true);
            for (Thread t : writers) {
                t.join(30_000);
            }
            if (!busy.waitFor(5, TimeUnit.SECONDS)) {
                busy.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        RaidLauncher.Result detail = ok(with(List.of("detail"), MEMBERS));
        assertTrue(detail.out().contains("State : clean"), detail.out());

        try (Served s = Served.start(dir, with(List.of("--port", "0", "--read-only"), MEMBERS))) {
            Tools.Result verify = fio(fioVerifyJob(s.uri(), "0", "16m", "--verify_only"));
            assertEquals(0, verify.exit(), "data written before the stop is intact:\n" + verify.output());
            try (NbdClient c = NbdClient.connect(s.uri(), NbdClientConfig.defaults())) {
                ByteBuffer block = ByteBuffer.allocate(4096);
                for (Map.Entry<Long, Long> e : acked.entrySet()) {
                    c.read(e.getKey() * 4096, block, 0, 4096);
                    assertEquals(e.getValue(), block.getLong(0), "tag of acknowledged block " + e.getKey());
                    assertEquals(~e.getValue(), block.getLong(4088), "tail of acknowledged block " + e.getKey());
                }
            }
            assertEquals(0, s.stop("TERM"), s.stderr());
        }
        System.out.println("sigterm: " + acked.size() + " acknowledged tagged blocks all on the members");
    }

    /**
     * {@code threads} writers over one NBD connection each, each on its own blocks of
     * {@code [offset, offset + length)}: a block holds its tag in its first and (inverted) last 8
     * bytes; {@code acked} records the tag of each block's last acknowledged write. A writer stops
     * at its first error (the server went away) or when {@code stop} is set.
     */
    private static List<Thread> taggedWriters(
            String uri, int threads, long offset, long length, Map<Long, Long> acked, AtomicBoolean stop)
            throws IOException {
        List<Thread> list = new ArrayList<>();
        long first = offset / 4096;
        long blocks = length / 4096;
        for (int t = 0; t < threads; t++) {
            NbdClient client = NbdClient.connect(uri, NbdClientConfig.defaults());
            int id = t;
            Thread w = new Thread(
                    () -> {
                        ByteBuffer b = ByteBuffer.allocate(4096);
                        Random r = new Random(id);
                        long seq = 0;
                        try (client) {
                            while (!stop.get()) {
                                long block = first + (r.nextLong(blocks / threads) * threads + id);
                                long tag = ((long) id << 48) | ++seq;
                                b.putLong(0, tag).putLong(4088, ~tag);
                                client.write(block * 4096, b, 0, 4096);
                                acked.put(block, tag);
                            }
                        } catch (IOException e) {
                            // the server stopped: this write was not acknowledged
                        }
                    },
                    "tagged-writer-" + t);
            w.setDaemon(true);
            w.start();
            list.add(w);
        }
        return list;
    }

    @Test
    void qemuImgAndNbdinfoOverAUnixSocket() throws Exception {
        Tools.assumeInstalled("qemu-img", "qemu-utils");
        Tools.assumeInstalled("nbdinfo", "libnbd-bin");
        createArray();
        byte[] image = MemberFiles.random(16 << 20, 5);
        Arrays.fill(image, 4 << 20, 5 << 20, (byte) 0); // a zero run: qemu-img may send WRITE_ZEROES
        Files.write(dir.resolve("image.raw"), image);
        try (Served s = Served.start(
                dir, with(List.of("--socket", dir.resolve("raid.sock").toString(), "--export", "disk0"), MEMBERS))) {
            assertTrue(s.uri().startsWith("nbd+unix:///disk0?socket="), s.uri());
            assertEquals(
                    Long.toString(s.size()),
                    Tools.runOk(dir, TOOL, "nbdinfo", "--size", s.uri()).trim());
            String list = Tools.runOk(dir, TOOL, "nbdinfo", "--list", s.uri());
            assertTrue(list.contains("export=\"disk0\"") && list.contains("raidfive RAID-5 raidfive:0"), list);
            assertTrue(list.contains("block_size_minimum: 512"), list);

            Tools.runOk(dir, TOOL, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", "image.raw", s.uri());
            Tools.runOk(dir, TOOL, "qemu-img", "convert", "-f", "raw", "-O", "raw", s.uri(), "back.raw");
            byte[] back = Files.readAllBytes(dir.resolve("back.raw"));
            assertEquals(s.size(), back.length);
            assertEquals(MemberFiles.sha256(image), MemberFiles.sha256(Arrays.copyOf(back, image.length)));
            assertEquals(0, s.stop("TERM"), s.stderr());
        }
        assertFalse(Files.exists(dir.resolve("raid.sock")), "the socket file is removed at the stop");
        // A third path to the same bytes: raid read on the member files.
        RaidLauncher.Result read = ok(with(List.of("read", "--offset", "0", "--length", "16M"), MEMBERS));
        assertArrayEquals(image, read.stdout());
    }

    @Test
    void malformedAndOutOfRangeRequestsAreAnsweredAndServingGoesOn() throws Exception {
        createArray();
        byte[] data = MemberFiles.random(8192, 6);
        try (Served s = Served.start(dir, with(List.of("--port", "0"), MEMBERS))) {
            long size = s.size();
            try (NbdWire w = NbdWire.connect(s.uri())) {
                assertEquals(NbdWire.REP_ACK, w.go("raid"));
                assertEquals(size, w.size);
                w.request(0, NbdWire.CMD_WRITE, 1, 0, data.length, data);
                assertEquals(0, w.reply()[0], "a plain write");
                w.request(0, NbdWire.CMD_READ, 2, size, 4096, null);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 2}, w.reply(), "read beyond the end");
                w.request(0, NbdWire.CMD_READ, 3, size - 4096, 8192, null);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 3}, w.reply(), "read across the end");
                w.request(0, NbdWire.CMD_READ, 4, -4096L, 4096, null);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 4}, w.reply(), "offset 2^64 - 4096");
                w.request(0, NbdWire.CMD_WRITE, 5, size - 512, 4096, new byte[4096]);
                assertArrayEquals(new long[] {NbdWire.ENOSPC, 5}, w.reply(), "write across the end, payload skipped");
                w.request(0, NbdWire.CMD_READ, 6, 100, 512, null);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 6}, w.reply(), "read not aligned to 512-byte sectors");
                w.request(0, NbdWire.CMD_WRITE, 7, 512, 100, new byte[100]);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 7}, w.reply(), "write of a partial sector");
                w.request(0, 42, 8, 0, 4096, null);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 8}, w.reply(), "unknown command");
                w.request(0x4000, NbdWire.CMD_READ, 9, 0, 4096, null);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 9}, w.reply(), "unknown flag");
                w.request(0, NbdWire.CMD_READ, 10, 0, 64 << 20, null);
                assertArrayEquals(new long[] {NbdWire.EINVAL, 10}, w.reply(), "read longer than the 32 MiB maximum");
                w.request(0, NbdWire.CMD_FLUSH, 11, 0, 0, null);
                assertEquals(0, w.reply()[0], "flush");
                w.request(0, NbdWire.CMD_READ, 12, 0, data.length, null);
                assertArrayEquals(new long[] {0, 12}, w.reply(), "still serving after the bad requests");
                assertArrayEquals(data, w.readExactly(data.length).array());
                w.write(ByteBuffer.allocate(28).putInt(0, 0xdeadbeef)); // a whole header with a bad request magic
                assertTrue(w.closedByServer(), "a request with a bad magic ends the connection");
            }
            try (NbdWire w = NbdWire.connect(s.uri())) {
                assertEquals(NbdWire.REP_ERR_UNKNOWN, w.go("nope"), "an unknown export name");
            }
            try (NbdWire w = NbdWire.connect(s.uri())) {
                assertEquals(NbdWire.REP_ACK, w.go(""), "the default export name selects the array");
                w.request(0, NbdWire.CMD_READ, 13, 0, data.length, null);
                assertArrayEquals(new long[] {0, 13}, w.reply(), "a new connection is served");
                assertArrayEquals(data, w.readExactly(data.length).array());
                w.request(0, NbdWire.CMD_DISC, 14, 0, 0, null);
            }
            assertEquals(0, s.stop("TERM"), s.stderr());
        }
        // --read-only: assembled read-only (the files stay byte for byte the same), writes refused.
        List<Path> files = MEMBERS.stream().map(dir::resolve).toList();
        Map<Path, String> before = MemberFiles.snapshot(files);
        try (Served s = Served.start(dir, with(List.of("--port", "0", "--read-only"), MEMBERS))) {
            assertTrue(s.stderr().contains("read-only"), s.stderr());
            try (NbdWire w = NbdWire.connect(s.uri())) {
                assertEquals(NbdWire.REP_ACK, w.go("raid"));
                assertNotEquals(0, w.transmissionFlags & 2, "NBD_FLAG_READ_ONLY advertised");
                w.request(0, NbdWire.CMD_WRITE, 1, 0, 4096, new byte[4096]);
                assertArrayEquals(new long[] {NbdWire.EPERM, 1}, w.reply(), "write to a read-only export");
                w.request(0, NbdWire.CMD_READ, 2, 0, data.length, null);
                assertArrayEquals(new long[] {0, 2}, w.reply());
                assertArrayEquals(data, w.readExactly(data.length).array());
            }
            assertEquals(0, s.stop("TERM"), s.stderr());
            assertTrue(s.stderr().contains("closed, read-only: the members are unchanged"), s.stderr());
        }
        MemberFiles.assertUnchanged(before, "raid serve --read-only");
    }
}
