package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** {@code --allow} blocks read as written, the inet_pton way: inet_aton's short and octal forms are refused. */
class AddressRangeTest {
    @Test
    void blocksAreReadAsInetPtonReadsThem() throws Exception {
        for (String bad : new String[] {
            "127.1/16",
            "127.1",
            "010.0.0.1/8",
            "1.2.3.256",
            " 10.0.0.0/8",
            "10.0.0.0/8 ",
            "10.0.0.0/8x",
            "10.0.0.0/33",
            "10.0.0.0/+8",
            "0x7f.0.0.1",
            "localhost",
            "::1/129",
            "",
            "١٢٧.0.0.1"
        }) {
            assertThrows(IllegalArgumentException.class, () -> AddressRange.parse(bad), "'" + bad + "' refused");
        }
        AddressRange local = AddressRange.parse("127.0.0.0/16");
        assertTrue(local.contains(InetAddress.getByName("127.0.200.1")));
        assertFalse(local.contains(InetAddress.getByName("127.1.0.1")));
        assertTrue(AddressRange.parse("::1").contains(InetAddress.getByName("::1")));
        assertTrue(AddressRange.parse("0.0.0.0/0").contains(InetAddress.getByName("192.168.1.1")));
    }
}
