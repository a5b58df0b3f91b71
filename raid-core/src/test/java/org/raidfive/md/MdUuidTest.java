package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Random;
import org.junit.jupiter.api.Test;

class MdUuidTest {
    @Test
    void formatsBytesInOrderInFourGroups() {
        final byte[] uuid = new byte[16];
        for (int i = 0; i < 16; i++) {
            uuid[i] = (byte) (0xf0 + i - 16 * (i & 1));
        }
        assertEquals(
                "f0e1f2e3:f4e5f6e7:f8e9fae8:fcedfeef".length(),
                MdUuid.format(uuid).length());
        assertEquals(
                "0df5eb39:41befa48:ee45b56f:52c10d17",
                MdUuid.format(MdUuid.parse("0df5eb39:41befa48:ee45b56f:52c10d17")));
        assertEquals(0x0d, MdUuid.parse("0df5eb39:41befa48:ee45b56f:52c10d17")[0]);
        assertEquals(0x17, MdUuid.parse("0df5eb39:41befa48:ee45b56f:52c10d17")[15]);
    }

    @Test
    void parsesOtherSeparatorsAndCase() {
        final byte[] expected = MdUuid.parse("0df5eb39:41befa48:ee45b56f:52c10d17");
        assertArrayEquals(expected, MdUuid.parse("0DF5EB39-41BE-FA48-EE45-B56F52C10D17"));
        assertArrayEquals(expected, MdUuid.parse("0df5eb39.41befa48.ee45b56f.52c10d17"));
        assertArrayEquals(expected, MdUuid.parse("0df5eb3941befa48ee45b56f52c10d17"));
    }

    @Test
    void randomUuidsRoundTripThroughText() {
        final Random random = new Random(42);
        for (int i = 0; i < 1000; i++) {
            final byte[] uuid = MdUuid.random(random);
            final String text = MdUuid.format(uuid);
            assertTrue(text.matches("[0-9a-f]{8}(:[0-9a-f]{8}){3}"), text);
            assertArrayEquals(uuid, MdUuid.parse(text));
        }
        assertEquals(16, MdUuid.random().length);
    }

    @Test
    void rejectsMalformedTextClearly() {
        assertEquals(
                "invalid UUID '0df5eb39:41befa48': 16 hex digits, expected 32",
                assertThrows(IllegalArgumentException.class, () -> MdUuid.parse("0df5eb39:41befa48"))
                        .getMessage());
        assertEquals(
                "invalid UUID '0df5eb39:41befa48:ee45b56f:52c10d1g': 'g' at index 34 is not a hex digit",
                assertThrows(IllegalArgumentException.class, () -> MdUuid.parse("0df5eb39:41befa48:ee45b56f:52c10d1g"))
                        .getMessage());
        assertTrue(assertThrows(
                        IllegalArgumentException.class, () -> MdUuid.parse("0df5eb39:41befa48:ee45b56f:52c10d1700"))
                .getMessage()
                .contains("more than 32"));
        assertThrows(IllegalArgumentException.class, () -> MdUuid.format(new byte[15]));
    }
}
