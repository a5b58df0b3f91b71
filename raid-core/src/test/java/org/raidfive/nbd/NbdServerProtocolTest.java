package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.MemoryDisk;

/**
 * The server against raw bytes: malformed, out-of-range and unsupported requests and options get
 * the protocol's error answers, the stream stays in step, and correct data is served afterwards.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdServerProtocolTest {
    private static final long SIZE = 16L << 20;

    private MemoryDisk disk;
    private NbdServer server;

    /** The server configuration under test; subclasses vary it. */
    NbdServerConfig.Builder config() {
        return NbdServerConfig.builder().port(0);
    }

    @BeforeEach
    void start() throws IOException {
        disk = new MemoryDisk(SIZE);
        server = NbdServer.start(disk, config().description("test array").build());
    }

    @AfterEach
    void stop() throws IOException {
        long start = System.nanoTime();
        server.close();
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        disk.close();
        // Every request must have been returned: a leaked one would make close() wait the drain timeout.
        assertTrue(millis < 5_000, "server.close() took " + millis + " ms");
    }

    private RawNbd connect() throws IOException {
        return new RawNbd(new InetSocketAddress("127.0.0.1", server.port()));
    }

    private RawNbd transmission() throws IOException {
        RawNbd raw = connect();
        long[] export = raw.go("raid");
        assertEquals(SIZE, export[0]);
        return raw;
    }

    @Test
    void unsupportedOptionsGetErrUnsupAndNegotiationContinues() throws IOException {
        try (RawNbd raw = connect()) {
            raw.greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
            assertEquals(NbdProtocol.FLAG_FIXED_NEWSTYLE | NbdProtocol.FLAG_NO_ZEROES, raw.handshakeFlags);
            int[] unsupported = {
                NbdProtocol.OPT_STRUCTURED_REPLY,
                NbdProtocol.OPT_STARTTLS,
                NbdProtocol.OPT_LIST_META_CONTEXT,
                NbdProtocol.OPT_SET_META_CONTEXT,
                NbdProtocol.OPT_EXTENDED_HEADERS,
                4,
                0xDEAD,
                0xFFFFFFFF
            };
            for (int option : unsupported) {
                byte[] data = option == NbdProtocol.OPT_SET_META_CONTEXT
                        ? metaContextQuery("raid", "base:allocation")
                        : new byte[option == 0xDEAD ? 100 : 0];
                raw.sendOption(option, data);
                RawNbd.OptionReply reply = raw.readOptionReply();
                assertEquals(option, reply.option(), "option echoed");
                assertEquals(NbdProtocol.REP_ERR_UNSUP, reply.type(), "reply to " + NbdProtocol.optionName(option));
            }
            // An unknown option with 1 MiB of data is skipped without being stored, and answered.
            raw.sendOptionHeader(0xBEEF, 1 << 20);
            raw.write(ByteBuffer.allocate(1 << 20));
            assertEquals(NbdProtocol.REP_ERR_UNSUP, raw.readOptionReply().type());

            raw.sendOption(NbdProtocol.OPT_LIST, new byte[0]);
            RawNbd.OptionReply server1 = raw.readOptionReply();
            assertEquals(NbdProtocol.REP_SERVER, server1.type());
            ByteBuffer listed = ByteBuffer.wrap(server1.data());
            byte[] name = new byte[listed.getInt()];
            listed.get(name);
            assertEquals("raid", new String(name, StandardCharsets.UTF_8));
            assertEquals(NbdProtocol.REP_ACK, raw.readOptionReply().type());

            raw.sendOption(NbdProtocol.OPT_LIST, new byte[3]);
            assertEquals(NbdProtocol.REP_ERR_INVALID, raw.readOptionReply().type(), "LIST with data");

            raw.sendOption(
                    NbdProtocol.OPT_INFO,
                    RawNbd.goData(
                            "raid",
                            NbdProtocol.INFO_BLOCK_SIZE,
                            NbdProtocol.INFO_NAME,
                            NbdProtocol.INFO_DESCRIPTION,
                            0x7777));
            boolean sawExport = false;
            boolean sawBlockSize = false;
            boolean sawName = false;
            boolean sawDescription = false;
            while (true) {
                RawNbd.OptionReply reply = raw.readOptionReply();
                if (reply.type() == NbdProtocol.REP_ACK) {
                    break;
                }
                assertEquals(NbdProtocol.REP_INFO, reply.type());
                ByteBuffer data = ByteBuffer.wrap(reply.data());
                int info = data.getShort();
                if (info == NbdProtocol.INFO_EXPORT) {
                    assertEquals(SIZE, data.getLong());
                    int flags = data.getShort();
                    assertTrue((flags & NbdProtocol.FLAG_HAS_FLAGS) != 0);
                    assertTrue((flags & NbdProtocol.FLAG_SEND_FLUSH) != 0);
                    assertTrue((flags & NbdProtocol.FLAG_SEND_FUA) != 0);
                    assertTrue((flags & NbdProtocol.FLAG_SEND_TRIM) != 0);
                    assertTrue((flags & NbdProtocol.FLAG_SEND_WRITE_ZEROES) != 0);
                    assertTrue((flags & NbdProtocol.FLAG_CAN_MULTI_CONN) != 0);
                    assertEquals(0, flags & NbdProtocol.FLAG_READ_ONLY);
                    sawExport = true;
                } else if (info == NbdProtocol.INFO_BLOCK_SIZE) {
                    assertEquals(1, data.getInt(), "minimum");
                    assertEquals(4096, data.getInt(), "preferred");
                    assertEquals(32 << 20, data.getInt(), "maximum");
                    sawBlockSize = true;
                } else if (info == NbdProtocol.INFO_NAME) {
                    assertEquals("raid", StandardCharsets.UTF_8.decode(data).toString());
                    sawName = true;
                } else if (info == NbdProtocol.INFO_DESCRIPTION) {
                    assertEquals(
                            "test array", StandardCharsets.UTF_8.decode(data).toString());
                    sawDescription = true;
                }
            }
            assertTrue(sawExport && sawBlockSize && sawName && sawDescription);

            raw.sendOption(NbdProtocol.OPT_GO, RawNbd.goData("nope"));
            RawNbd.OptionReply unknown = raw.readOptionReply();
            assertEquals(NbdProtocol.REP_ERR_UNKNOWN, unknown.type());
            assertTrue(unknown.text().contains("nope"), unknown.text());

            byte[] bad = RawNbd.goData("raid");
            ByteBuffer.wrap(bad).putInt(0, 1000); // name length beyond the option data
            raw.sendOption(NbdProtocol.OPT_GO, bad);
            assertEquals(NbdProtocol.REP_ERR_INVALID, raw.readOptionReply().type());

            raw.sendOption(NbdProtocol.OPT_GO, RawNbd.goData(""));
            assertEquals(NbdProtocol.REP_INFO, raw.readOptionReply().type());
            assertEquals(NbdProtocol.REP_ACK, raw.readOptionReply().type());
            assertServesCorrectData(raw);
        }
    }

    private static byte[] metaContextQuery(String export, String query) {
        byte[] e = export.getBytes(StandardCharsets.UTF_8);
        byte[] q = query.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(4 + e.length + 4 + 4 + q.length)
                .putInt(e.length)
                .put(e)
                .putInt(1)
                .putInt(q.length)
                .put(q)
                .array();
    }

    @Test
    void hugeOptionLengthDisconnectsWithoutAllocating() throws IOException {
        try (RawNbd raw = connect()) {
            raw.greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
            raw.sendOptionHeader(NbdProtocol.OPT_GO, 0xFFFF_FFF0L);
            raw.write(ByteBuffer.allocate(4096));
            assertTrue(raw.closedByServer(), "a 4 GiB option is refused by hanging up");
        }
        try (RawNbd raw = transmission()) {
            assertServesCorrectData(raw);
        }
    }

    @Test
    void exportNameHonoursNoZeroes() throws IOException {
        for (boolean noZeroes : new boolean[] {true, false}) {
            try (RawNbd raw = connect()) {
                raw.greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | (noZeroes ? NbdProtocol.FLAG_C_NO_ZEROES : 0));
                raw.sendOption(NbdProtocol.OPT_EXPORT_NAME, "raid".getBytes(StandardCharsets.UTF_8));
                ByteBuffer reply = raw.readExactly(noZeroes ? 10 : 134);
                assertEquals(SIZE, reply.getLong());
                assertTrue((reply.getShort() & NbdProtocol.FLAG_HAS_FLAGS) != 0);
                while (reply.hasRemaining()) {
                    assertEquals(0, reply.get(), "reserved zeroes");
                }
                // The next bytes must be the reply to our first request, not padding.
                assertServesCorrectData(raw);
            }
        }
    }

    @Test
    void exportNameForUnknownExportHangsUp() throws IOException {
        try (RawNbd raw = connect()) {
            raw.greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
            raw.sendOption(NbdProtocol.OPT_EXPORT_NAME, "other".getBytes(StandardCharsets.UTF_8));
            assertTrue(raw.closedByServer());
        }
    }

    @Test
    void abortIsAcknowledgedThenClosed() throws IOException {
        try (RawNbd raw = connect()) {
            raw.greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
            raw.sendOption(NbdProtocol.OPT_ABORT, new byte[0]);
            assertEquals(NbdProtocol.REP_ACK, raw.readOptionReply().type());
            assertTrue(raw.closedByServer());
        }
    }

    @Test
    void unknownClientFlagsHangUp() throws IOException {
        try (RawNbd raw = connect()) {
            raw.greet(0x80);
            assertTrue(raw.closedByServer());
        }
    }

    @Test
    void badRequestsGetErrorRepliesAndTheStreamStaysInStep() throws IOException {
        try (RawNbd raw = transmission()) {
            long cookie = 1;
            // Read beyond the end, straddling the end, at an "unsigned" offset above 2^63.
            raw.sendRequest(0, NbdProtocol.CMD_READ, cookie, SIZE, 4096);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_READ, cookie, SIZE - 512, 4096);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_READ, cookie, 0x8000_0000_0000_0000L, 512);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            // A 4 GiB - 1 read: EINVAL at once, nothing allocated.
            raw.sendRequest(0, NbdProtocol.CMD_READ, cookie, 0, 0xFFFF_FFFFL);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            // Over the 32 MiB limit, though inside a large enough disk it would be in range.
            raw.sendRequest(0, NbdProtocol.CMD_READ, cookie, 0, (32 << 20) + 1);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());

            // Write beyond the end: ENOSPC, and the payload (which looks like requests) is consumed.
            raw.sendRequest(0, NbdProtocol.CMD_WRITE, cookie, SIZE - 4096, 8192);
            raw.write(fakeRequests(8192));
            assertEquals(new RawNbd.Reply(NbdProtocol.ENOSPC, cookie++), raw.readReply());
            // Write over the maximum request size: EINVAL, payload consumed and discarded.
            int oversize = (32 << 20) + 4096;
            raw.sendRequest(0, NbdProtocol.CMD_WRITE, cookie, 0, oversize);
            raw.write(fakeRequests(oversize));
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            // Write-zeroes beyond the end: ENOSPC; trim beyond the end: EINVAL.
            raw.sendRequest(0, NbdProtocol.CMD_WRITE_ZEROES, cookie, SIZE, 1);
            assertEquals(new RawNbd.Reply(NbdProtocol.ENOSPC, cookie++), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_TRIM, cookie, SIZE - 1, 2);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());

            // Unknown commands and ones we never advertised.
            for (int type : new int[] {NbdProtocol.CMD_CACHE, NbdProtocol.CMD_BLOCK_STATUS, 8, 99, 0xFFFF}) {
                raw.sendRequest(0, type, cookie, 0, 4096);
                assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply(), "command " + type);
            }
            // Flags not valid for the command (DF without structured replies, unknown bit, FAST_ZERO).
            raw.sendRequest(NbdProtocol.CMD_FLAG_DF, NbdProtocol.CMD_READ, cookie, 0, 512);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            raw.sendRequest(0x8000, NbdProtocol.CMD_FLUSH, cookie, 0, 0);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            raw.sendRequest(NbdProtocol.CMD_FLAG_FAST_ZERO, NbdProtocol.CMD_WRITE_ZEROES, cookie, 0, 512);
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());
            // A write with a bad flag still has its payload consumed.
            raw.sendRequest(0x40, NbdProtocol.CMD_WRITE, cookie, 0, 4096);
            raw.write(fakeRequests(4096));
            assertEquals(new RawNbd.Reply(NbdProtocol.EINVAL, cookie++), raw.readReply());

            assertServesCorrectData(raw);
        }
        assertTrue(isZero(disk, 0, 8192), "no rejected write reached the disk");
    }

    @Test
    void hugeWriteLengthIsNotAllocated() throws IOException {
        try (RawNbd raw = transmission()) {
            // 4 GiB - 1 announced; we send a little of it and leave. The server discards as it reads.
            raw.sendRequest(0, NbdProtocol.CMD_WRITE, 7, 0, 0xFFFF_FFFFL);
            raw.write(ByteBuffer.allocate(1 << 20));
        }
        try (RawNbd raw = transmission()) {
            assertServesCorrectData(raw);
        }
    }

    @Test
    void readOnlyExportRefusesWritesWithEperm() throws IOException {
        server.close();
        server = NbdServer.start(disk, config().readOnly(true).build());
        try (RawNbd raw = connect()) {
            long[] export = raw.go("raid");
            assertTrue((export[1] & NbdProtocol.FLAG_READ_ONLY) != 0, "READ_ONLY advertised");
            assertEquals(0, export[1] & (NbdProtocol.FLAG_SEND_TRIM | NbdProtocol.FLAG_SEND_WRITE_ZEROES));
            raw.sendRequest(0, NbdProtocol.CMD_WRITE, 1, 0, 4096);
            raw.write(fakeRequests(4096));
            assertEquals(new RawNbd.Reply(NbdProtocol.EPERM, 1), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_TRIM, 2, 0, 4096);
            assertEquals(new RawNbd.Reply(NbdProtocol.EPERM, 2), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_WRITE_ZEROES, 3, 0, 4096);
            assertEquals(new RawNbd.Reply(NbdProtocol.EPERM, 3), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_FLUSH, 4, 0, 0);
            assertEquals(new RawNbd.Reply(0, 4), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_READ, 5, 0, 4096);
            assertEquals(new RawNbd.Reply(0, 5), raw.readReply());
            assertArrayEquals(new byte[4096], raw.readExactly(4096).array());
        }
    }

    @Test
    void pipelinedRequestsAreAllAnsweredByCookie() throws IOException {
        try (RawNbd raw = transmission()) {
            Random random = new Random(42);
            byte[] data = new byte[64 * 4096];
            random.nextBytes(data);
            ByteBuffer burst = ByteBuffer.allocate(64 * (28 + 4096) + 64 * 28 + 28);
            for (int i = 0; i < 64; i++) {
                burst.put(RawNbd.requestHeader(0, NbdProtocol.CMD_WRITE, 1000 + i, i * 4096L, 4096));
                burst.put(data, i * 4096, 4096);
            }
            burst.put(RawNbd.requestHeader(NbdProtocol.CMD_FLAG_FUA, NbdProtocol.CMD_FLUSH, 999, 0, 0));
            raw.write(burst.flip());
            Set<Long> cookies = new HashSet<>();
            for (int i = 0; i < 65; i++) {
                RawNbd.Reply reply = raw.readReply();
                assertEquals(0, reply.error());
                assertTrue(cookies.add(reply.cookie()), "duplicate reply " + reply.cookie());
            }
            assertTrue(cookies.contains(999L));
            for (int i = 0; i < 64; i++) {
                raw.sendRequest(0, NbdProtocol.CMD_READ, 5000 + i, i * 4096L, 4096);
            }
            byte[] back = new byte[data.length];
            for (int i = 0; i < 64; i++) {
                RawNbd.Reply reply = raw.readReply();
                assertEquals(0, reply.error());
                int index = (int) (reply.cookie() - 5000);
                raw.readExactly(4096).get(back, index * 4096, 4096);
            }
            assertArrayEquals(data, back);
        }
    }

    @Test
    void discFinishesInFlightWritesThenCloses() throws IOException {
        byte[] data = new byte[256 * 1024];
        new Random(7).nextBytes(data);
        try (RawNbd raw = transmission()) {
            ByteBuffer burst = ByteBuffer.allocate(28 + data.length + 28);
            burst.put(RawNbd.requestHeader(0, NbdProtocol.CMD_WRITE, 1, 4096, data.length))
                    .put(data)
                    .put(RawNbd.requestHeader(0, NbdProtocol.CMD_DISC, 2, 0, 0));
            raw.write(burst.flip());
            assertEquals(new RawNbd.Reply(0, 1), raw.readReply(), "in-flight write answered before the close");
            assertTrue(raw.closedByServer());
        }
        assertArrayEquals(data, read(disk, 4096, data.length));
    }

    @Test
    void clientVanishingMidRequestLosesNothingAcknowledged() throws IOException {
        byte[] data = new byte[64 * 1024];
        new Random(9).nextBytes(data);
        try (RawNbd raw = transmission()) {
            raw.sendRequest(0, NbdProtocol.CMD_WRITE, 1, 0, data.length);
            raw.write(ByteBuffer.wrap(data));
            assertEquals(new RawNbd.Reply(0, 1), raw.readReply());
            raw.sendRequest(0, NbdProtocol.CMD_WRITE, 2, 1 << 20, data.length);
            raw.write(ByteBuffer.wrap(data, 0, data.length / 2)); // and vanish mid-payload
        }
        try (RawNbd raw = transmission()) {
            raw.sendRequest(0, NbdProtocol.CMD_READ, 3, 0, data.length);
            assertEquals(new RawNbd.Reply(0, 3), raw.readReply());
            assertArrayEquals(data, raw.readExactly(data.length).array());
            assertServesCorrectData(raw);
        }
        assertTrue(isZero(disk, 1 << 20, data.length), "the half-sent write was never applied");
    }

    @Test
    void badRequestMagicHangsUp() throws IOException {
        try (RawNbd raw = transmission()) {
            raw.write(ByteBuffer.allocate(28).putInt(0, 0x12345678));
            assertTrue(raw.closedByServer());
        }
    }

    /** Writes a pattern at 8 MiB through the raw connection and reads it back, and checks the disk. */
    private void assertServesCorrectData(RawNbd raw) throws IOException {
        byte[] data = new byte[12345];
        new Random(raw.hashCode()).nextBytes(data);
        long at = 8L << 20;
        raw.sendRequest(0, NbdProtocol.CMD_WRITE, 77, at, data.length);
        raw.write(ByteBuffer.wrap(data));
        assertEquals(new RawNbd.Reply(0, 77), raw.readReply());
        raw.sendRequest(0, NbdProtocol.CMD_READ, 78, at, data.length);
        assertEquals(new RawNbd.Reply(0, 78), raw.readReply());
        assertArrayEquals(data, raw.readExactly(data.length).array());
        assertArrayEquals(data, read(disk, at, data.length), "the disk holds what was written");
    }

    /** A payload made of valid-looking request headers: if it were parsed as requests we would notice. */
    private static ByteBuffer fakeRequests(int length) {
        ByteBuffer payload = ByteBuffer.allocate(length);
        while (payload.remaining() >= 28) {
            payload.put(RawNbd.requestHeader(0, NbdProtocol.CMD_DISC, 0xBAD, 0, 0));
        }
        return payload.clear();
    }

    static byte[] read(MemoryDisk disk, long at, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        disk.read(at, buffer, 0, length);
        return buffer.array();
    }

    static boolean isZero(MemoryDisk disk, long at, int length) throws IOException {
        for (byte b : read(disk, at, length)) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
