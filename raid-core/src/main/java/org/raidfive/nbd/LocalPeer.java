package org.raidfive.nbd;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The user behind a TCP connection from this same host, found the way identd finds it: the
 * client's own socket is listed in {@code /proc/net/tcp} (or {@code tcp6}) with its owner's uid,
 * its local end being our peer and its remote end us. On a shared machine every local client
 * comes from 127.0.0.1, so the address alone cannot tell one user's clients from another's.
 */
final class LocalPeer {
    private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

    private LocalPeer() {}

    /** The uid owning the client end of the connection {@code peer -> local}, or -1 when not found. */
    static long uid(InetSocketAddress peer, InetSocketAddress local) {
        for (Path table : TABLES) {
            List<String> lines;
            try {
                lines = Files.readAllLines(table);
            } catch (IOException | SecurityException e) {
                continue; // no /proc: not Linux, or hidden from us
            }
            for (int i = 1; i < lines.size(); i++) {
                String[] f = lines.get(i).trim().split("\\s+");
                if (f.length < 8) {
                    continue;
                }
                if (same(f[1], peer) && same(f[2], local)) {
                    try {
                        return Long.parseLong(f[7]);
                    } catch (NumberFormatException e) {
                        return -1;
                    }
                }
            }
        }
        return -1;
    }

    /** True when a /proc/net/tcp{,6} address ({@code HEX:PORT}) is {@code address}, IPv4-mapped IPv6 included. */
    static boolean same(String field, InetSocketAddress address) {
        int colon = field.indexOf(':');
        if (colon < 0) {
            return false;
        }
        try {
            if (Integer.parseInt(field.substring(colon + 1), 16) != address.getPort()) {
                return false;
            }
            InetAddress a = decode(field.substring(0, colon));
            return a != null && a.equals(address.getAddress());
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The kernel prints each 32-bit word of the address in host (little-endian on x86) order. */
    private static InetAddress decode(String hex) {
        if (hex.length() != 8 && hex.length() != 32) {
            return null;
        }
        byte[] bytes = new byte[hex.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            long v = Long.parseLong(hex.substring(word * 8, word * 8 + 8), 16);
            for (int b = 0; b < 4; b++) {
                bytes[word * 4 + b] = (byte)
                        (ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? v >>> (8 * b) : v >>> (8 * (3 - b)));
            }
        }
        try {
            return InetAddress.getByAddress(bytes); // a v4-mapped v6 address comes back as Inet4Address
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
