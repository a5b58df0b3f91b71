package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * A served disk that grows (an array whose reshape has ended under {@code raid serve}): NBD tells a
 * client its export's size only in the handshake, so each connection keeps the size it was told
 * and is checked against it, and a connection made after the growth is told the new size and
 * reaches the new bytes.
 */
@Timeout(60)
class NbdServerGrowingDiskTest {
    private static final int BEFORE = 1 << 20;
    private static final int AFTER = 3 << 20;

    /** A memory disk of {@link #AFTER} bytes that reports {@code size} bytes. */
    static final class GrowingDisk extends ForwardingDisk {
        final AtomicLong size = new AtomicLong(BEFORE);

        GrowingDisk() {
            super(new MemoryDisk(AFTER));
        }

        @Override
        public long size() {
            return size.get();
        }
    }

    @Test
    void connectionsMadeAfterTheDiskGrewSeeTheNewSizeAndEarlierOnesKeepTheirs() throws IOException {
        GrowingDisk disk = new GrowingDisk();
        byte[] tail = new byte[4096];
        new java.util.Random(7).nextBytes(tail);
        disk.write(AFTER - 4096, ByteBuffer.wrap(tail), 0, 4096);
        try (NbdServer server =
                        NbdServer.start(disk, NbdServerConfig.builder().port(0).build());
                RawNbd early = new RawNbd(new InetSocketAddress("127.0.0.1", server.port()))) {
            assertEquals(BEFORE, early.go("raid")[0], "the size told before the growth");
            disk.size.set(AFTER);
            try (NbdClient late =
                    NbdClient.connect("nbd://127.0.0.1:" + server.port() + "/raid", NbdClientConfig.defaults())) {
                assertEquals(AFTER, late.size(), "the size told to a connection made after the growth");
                ByteBuffer back = ByteBuffer.allocate(4096);
                late.read(AFTER - 4096, back, 0, 4096);
                assertArrayEquals(tail, back.array(), "the last block of the grown disk");
            }
            // the early connection is held to the size it was told: a read past it is refused
            early.sendRequest(0, NbdProtocol.CMD_READ, 1, BEFORE, 4096);
            RawNbd.Reply past = early.readReply();
            assertEquals(1, past.cookie());
            assertEquals(NbdProtocol.EINVAL, past.error(), "a read past the size this connection was told");
            early.sendRequest(0, NbdProtocol.CMD_READ, 2, BEFORE - 4096, 4096);
            RawNbd.Reply within = early.readReply();
            assertEquals(0, within.error(), "a read within it");
            early.readExactly(4096);
        }
    }
}
