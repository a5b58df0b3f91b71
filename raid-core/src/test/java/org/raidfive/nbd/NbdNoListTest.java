package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.raidfive.disk.MemoryDisk;

/**
 * {@code --no-list} reveals nothing a client did not already know: no list, no default export for
 * the empty name, no export name in a refusal, no description (it names the array and its UUID).
 * A client that names the export still gets it.
 */
class NbdNoListTest {
    private static final String SECRET = "raidfive RAID-5 vol0 (UUID 01234567:89abcdef:01234567:89abcdef)";
    private MemoryDisk disk;
    private NbdServer server;

    @BeforeEach
    void start() throws IOException {
        disk = new MemoryDisk(1 << 20);
        server = NbdServer.start(
                disk,
                NbdServerConfig.builder()
                        .port(0)
                        .exportName("hidden")
                        .listExports(false)
                        .description(SECRET)
                        .build());
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        disk.close();
    }

    private RawNbd connect() throws IOException {
        RawNbd raw = new RawNbd(new InetSocketAddress("127.0.0.1", server.port()));
        raw.greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES);
        return raw;
    }

    private static String text(RawNbd.OptionReply r) {
        return new String(r.data(), StandardCharsets.UTF_8);
    }

    @Test
    void aServerThatDoesNotListRevealsNothing() throws IOException {
        try (RawNbd raw = connect()) {
            raw.sendOption(NbdProtocol.OPT_LIST, new byte[0]);
            RawNbd.OptionReply list = raw.readOptionReply();
            assertEquals(NbdProtocol.REP_ERR_POLICY, list.type());
            assertFalse(text(list).contains("hidden"), text(list));
            for (String name : new String[] {"wrong", ""}) {
                raw.sendOption(
                        NbdProtocol.OPT_INFO, RawNbd.goData(name, NbdProtocol.INFO_NAME, NbdProtocol.INFO_DESCRIPTION));
                RawNbd.OptionReply r = raw.readOptionReply();
                assertEquals(NbdProtocol.REP_ERR_UNKNOWN, r.type(), "'" + name + "' does not select the export");
                assertFalse(text(r).contains("hidden") || text(r).contains("vol0"), text(r));
            }
            raw.sendOption(NbdProtocol.OPT_INFO, RawNbd.goData("hidden", NbdProtocol.INFO_DESCRIPTION));
            while (true) {
                RawNbd.OptionReply r = raw.readOptionReply();
                if (r.type() == NbdProtocol.REP_ACK) {
                    break;
                }
                assertEquals(NbdProtocol.REP_INFO, r.type());
                assertFalse(
                        ByteBuffer.wrap(r.data()).getShort() == NbdProtocol.INFO_DESCRIPTION,
                        "no description: " + text(r));
            }
        }
        try (RawNbd raw = new RawNbd(new InetSocketAddress("127.0.0.1", server.port()))) {
            assertEquals(1 << 20, raw.go("hidden")[0], "the client that knows the name gets the export");
        }
    }
}
