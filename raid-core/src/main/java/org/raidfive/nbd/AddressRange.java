package org.raidfive.nbd;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * An address block in CIDR notation ({@code 10.0.0.0/8}, {@code 192.168.1.7}, {@code ::1/128}),
 * for the server's allow-list. IPv4 addresses match IPv4 blocks, and IPv4-mapped IPv6 addresses too.
 */
public final class AddressRange {
    private final byte[] network;
    private final int prefix;
    private final String text;

    private AddressRange(byte[] network, int prefix, String text) {
        this.network = network;
        this.prefix = prefix;
        this.text = text;
    }

    /** Parses {@code address[/prefix]}; refuses a bad address or prefix with a message naming it. */
    public static AddressRange parse(String cidr) {
        String s = cidr;
        int slash = s.indexOf('/');
        String host = slash < 0 ? s : s.substring(0, slash);
        // As inet_pton reads it: IPv4 only as four decimal parts 0-255 (no "127.1", no octal
        // "010"), IPv6 only with a colon; InetAddress alone would take inet_aton's forms.
        boolean v4 = host.matches("(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}")
                && Arrays.stream(host.split("\\.")).allMatch(o -> Integer.parseInt(o) <= 255);
        boolean v6 = host.contains(":") && host.matches("[0-9A-Fa-f:.]+");
        if (!v4 && !v6) {
            throw new IllegalArgumentException("'" + cidr + "' is not an address block (e.g. 10.0.0.0/8, ::1): an "
                    + "IPv4 address is four decimal parts 0-255, as inet_pton reads it");
        }
        if (slash >= 0 && !s.substring(slash + 1).matches("[0-9]{1,3}")) {
            throw new IllegalArgumentException("'" + cidr + "': the prefix length must be 0 to " + (v4 ? 32 : 128));
        }
        byte[] bytes;
        try {
            bytes = InetAddress.getByName(host).getAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("'" + cidr + "' is not an address block (e.g. 10.0.0.0/8, ::1)", e);
        }
        int max = bytes.length * 8;
        int prefix = max;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(s.substring(slash + 1));
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > max) {
                throw new IllegalArgumentException("'" + cidr + "': the prefix length must be 0 to " + max);
            }
        }
        return new AddressRange(bytes, prefix, s);
    }

    /** True if {@code address} lies in this block. */
    public boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        if (a.length == 16 && network.length == 4 && isV4Mapped(a)) {
            a = Arrays.copyOfRange(a, 12, 16);
        }
        if (a.length != network.length) {
            return false;
        }
        int bits = prefix;
        for (int i = 0; i < a.length && bits > 0; i++, bits -= 8) {
            int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
            if ((a[i] & mask) != (network[i] & mask)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isV4Mapped(byte[] a) {
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
    }

    @Override
    public String toString() {
        return text;
    }
}
