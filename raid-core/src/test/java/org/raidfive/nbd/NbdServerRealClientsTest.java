package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.MemoryDisk;

/**
 * Our server driven by the real NBD clients (libnbd's nbdinfo and nbdcopy, qemu-img, fio's nbd
 * engine). Each test is skipped with a message if its tool is missing; CI installs them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdServerRealClientsTest {
    private static final long SIZE = 32L << 20;
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    Path tmp;

    private MemoryDisk disk;
    private NbdServer server;
    private String uri;

    /** The server configuration under test; subclasses vary it. */
    NbdServerConfig.Builder config() {
        return NbdServerConfig.builder().port(0);
    }

    @BeforeEach
    void start() throws IOException {
        disk = new MemoryDisk(SIZE);
        server = NbdServer.start(
                disk, config().description("raidfive test export").build());
        uri = "nbd://127.0.0.1:" + server.port() + "/";
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        disk.close();
    }

    @Test
    void nbdinfoReportsTheSize() throws Exception {
        ExternalTools.assumeInstalled("nbdinfo", "libnbd-bin");
        assertEquals(
                Long.toString(SIZE),
                ExternalTools.runOk(TOOL_TIMEOUT, "nbdinfo", "--size", uri).trim());
        String details = ExternalTools.runOk(TOOL_TIMEOUT, "nbdinfo", uri);
        assertTrue(details.contains("export-size: " + SIZE), details);
        assertTrue(
                details.contains("can_flush: true")
                        && details.contains("can_fua: true")
                        && details.contains("can_multi_conn: true")
                        && details.contains("block_size_maximum: 33554432"),
                details);
    }

    @Test
    void nbdinfoListsTheExport() throws Exception {
        ExternalTools.assumeInstalled("nbdinfo", "libnbd-bin");
        String list = ExternalTools.runOk(TOOL_TIMEOUT, "nbdinfo", "--list", uri);
        assertTrue(list.contains("export=\"raid\""), list);
        assertTrue(list.contains("raidfive test export"), list);
    }

    @Test
    void nbdinfoOverAUnixSocket() throws Exception {
        ExternalTools.assumeInstalled("nbdinfo", "libnbd-bin");
        Path socket = tmp.resolve("raid.sock");
        try (NbdServer unix = NbdServer.start(
                disk, NbdServerConfig.builder().unixSocket(socket).build())) {
            assertEquals(
                    Long.toString(SIZE),
                    ExternalTools.runOk(TOOL_TIMEOUT, "nbdinfo", "--size", unix.uri())
                            .trim());
        }
    }

    @Test
    void qemuImgConvertsAnImageInAndBackOut() throws Exception {
        ExternalTools.assumeInstalled("qemu-img", "qemu-utils");
        byte[] image = randomImage(16 << 20, 11);
        Path source = tmp.resolve("source.img");
        Files.write(source, image);
        ExternalTools.runOk(
                TOOL_TIMEOUT, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", source.toString(), uri);
        // Oracle one: the bytes on the served disk itself.
        assertArrayEquals(image, NbdServerProtocolTest.read(disk, 0, image.length));
        Path back = tmp.resolve("back.img");
        ExternalTools.runOk(TOOL_TIMEOUT, "qemu-img", "convert", "-f", "raw", "-O", "raw", uri, back.toString());
        // Oracle two: the image read back through qemu's NBD client.
        assertEquals(SIZE, Files.size(back));
        assertEquals(sha256(image), sha256(Arrays.copyOf(Files.readAllBytes(back), image.length)));
        assertTrue(NbdServerProtocolTest.isZero(disk, image.length, (int) (SIZE - image.length)));
    }

    @Test
    void nbdcopyCopiesInAndOutOverSeveralConnections() throws Exception {
        ExternalTools.assumeInstalled("nbdcopy", "libnbd-bin");
        byte[] image = randomImage((int) SIZE, 12);
        Path source = tmp.resolve("source.img");
        Files.write(source, image);
        ExternalTools.runOk(TOOL_TIMEOUT, "nbdcopy", "--connections=4", source.toString(), uri);
        assertArrayEquals(image, NbdServerProtocolTest.read(disk, 0, image.length));
        Path back = tmp.resolve("back.img");
        ExternalTools.runOk(TOOL_TIMEOUT, "nbdcopy", "--connections=4", uri, back.toString());
        assertEquals(sha256(image), sha256(Files.readAllBytes(back)));
    }

    @Test
    void fioRandomWritesThenAVerifyOnlyPassFindEveryBlock() throws Exception {
        ExternalTools.assumeInstalled("fio", "fio");
        assertTrue(ExternalTools.runOk(TOOL_TIMEOUT, "fio", "--enghelp").contains("nbd"), "fio has the nbd engine");
        List<String> job = List.of(
                "fio",
                "--name=nbdverify",
                "--ioengine=nbd",
                "--uri=" + uri,
                "--rw=randwrite",
                "--bs=4k",
                "--size=32m",
                "--iodepth=16",
                "--verify=crc32c",
                "--randseed=1234",
                "--verify_fatal=1",
                "--verify_state_save=0",
                "--group_reporting");
        ExternalTools.Result write = ExternalTools.run(TOOL_TIMEOUT, job);
        assertEquals(0, write.exitCode(), write.output());
        assertTrue(write.output().contains("err= 0"), write.output());

        List<String> verify = concat(job, "--verify_only");
        ExternalTools.Result check = ExternalTools.run(TOOL_TIMEOUT, verify);
        assertEquals(0, check.exitCode(), "a fresh connection reads back what fio wrote:\n" + check.output());

        // The verify pass is an oracle, not an echo: corrupt one block behind the server's back.
        long victim = 4096L * new Random().nextInt((int) (SIZE / 4096));
        ByteBuffer block = ByteBuffer.allocate(4096);
        disk.read(victim, block, 0, 4096);
        block.put(100, (byte) ~block.get(100));
        disk.write(victim, block, 0, 4096);
        ExternalTools.Result corrupted = ExternalTools.run(TOOL_TIMEOUT, verify);
        assertNotEquals(
                0,
                corrupted.exitCode(),
                "fio must detect the corrupted block at " + victim + ":\n" + corrupted.output());
    }

    private static List<String> concat(List<String> list, String extra) {
        String[] all = Arrays.copyOf(list.toArray(new String[0]), list.size() + 1);
        all[list.size()] = extra;
        return List.of(all);
    }

    private static byte[] randomImage(int size, long seed) {
        byte[] image = new byte[size];
        new Random(seed).nextBytes(image);
        Arrays.fill(image, 4 << 20, 5 << 20, (byte) 0); // a zero run: converters may send WRITE_ZEROES
        return image;
    }

    static String sha256(byte[] data) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }
}
