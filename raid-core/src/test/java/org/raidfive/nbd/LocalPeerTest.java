package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The user behind a local TCP connection, checked against this process's own uid (from /proc/self). */
class LocalPeerTest {
    @Test
    void aLoopbackClientIsItsOwnersUid() throws Exception {
        long self = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
                SocketChannel client = SocketChannel.open(server.getLocalAddress());
                SocketChannel accepted = server.accept()) {
            assertEquals(self, LocalPeer.uid((InetSocketAddress) accepted.getRemoteAddress(), (InetSocketAddress)
                    accepted.getLocalAddress()));
            // the server's own end is not a client's: it is listed with its ends the other way round
            assertEquals(-1, LocalPeer.uid(new InetSocketAddress("127.0.0.1", 1), (InetSocketAddress)
                    accepted.getLocalAddress()));
        }
    }

    @Test
    void procAddressesAreReadInTheKernelsWordOrder() throws Exception {
        InetSocketAddress a = new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 10809);
        assertTrue(LocalPeer.same("0200007F:2A39", a));
        assertTrue(LocalPeer.same("0000000000000000FFFF00000200007F:2A39", a), "IPv4-mapped in tcp6");
        assertFalse(LocalPeer.same("0200007F:2A3A", a), "another port");
        assertFalse(LocalPeer.same("7F000002:2A39", a), "the other byte order");
        assertFalse(LocalPeer.same("zz", a));
    }
}
