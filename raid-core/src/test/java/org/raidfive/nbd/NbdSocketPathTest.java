package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link NbdServer#checkCanListen} says of each thing that may already be at a Unix socket's
 * path: a stale socket is fine (the server replaces it), a live one and everything that is not a
 * socket are refused by name, and nothing is removed or changed by the check.
 */
class NbdSocketPathTest {
    @TempDir
    Path dir;

    private static NbdServerConfig at(Path socket) {
        return NbdServerConfig.builder().unixSocket(socket).build();
    }

    private void assertRefusedAs(Path path, String what) {
        IOException e = assertThrows(IOException.class, () -> NbdServer.checkCanListen(at(path)));
        assertEquals(
                "--socket " + path + " is " + what + ": refusing to replace it (give a new path, or remove a stale "
                        + "socket file by hand)",
                e.getMessage());
        assertTrue(Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS), "the check removed " + path);
    }

    @Test
    void everythingButASocketIsRefusedByName() throws Exception {
        Path file = Files.writeString(dir.resolve("member.img"), "data");
        assertRefusedAs(file, "a regular file");
        assertEquals("data", Files.readString(file));
        assertRefusedAs(Files.createDirectory(dir.resolve("d")), "a directory");
        assertRefusedAs(Files.createSymbolicLink(dir.resolve("link"), file), "a symbolic link");
        Path fifo = dir.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertEquals(0, mkfifo.waitFor(), "mkfifo");
        assertRefusedAs(fifo, "a FIFO (named pipe)");
    }

    @Test
    void aStaleSocketPassesAndALiveOneIsRefused() throws Exception {
        Path socket = dir.resolve("s.sock");
        NbdServer.checkCanListen(at(socket)); // nothing there
        try (ServerSocketChannel live = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            live.bind(UnixDomainSocketAddress.of(socket));
            IOException e = assertThrows(IOException.class, () -> NbdServer.checkCanListen(at(socket)));
            assertEquals("Unix socket " + socket + " is already served by another process", e.getMessage());
        }
        assertTrue(Files.exists(socket), "closing a channel leaves its socket file: a stale socket");
        NbdServer.checkCanListen(at(socket));
    }
}
