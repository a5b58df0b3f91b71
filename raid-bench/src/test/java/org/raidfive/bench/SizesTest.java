package org.raidfive.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void parsesBinarySuffixesCaseInsensitively() {
        assertEquals(512, Sizes.parse("512"));
        assertEquals(512 * 1024, Sizes.parse("512K"));
        assertEquals(512 * 1024, Sizes.parse("512k"));
        assertEquals(64L << 20, Sizes.parse("64M"));
        assertEquals(64L << 20, Sizes.parse("64MiB"));
        assertEquals(1L << 30, Sizes.parse("1G"));
        assertEquals(2L << 40, Sizes.parse("2T"));
        assertEquals(4096, Sizes.parse("4096B"));
    }

    @Test
    void refusesWhatIsNotASizeNamingTheText() {
        for (String bad : new String[] {
            "", "x", "-1", "1.5M", "12Q", "M", "64M ", " 64M", "64 M", "\u0666\u0664M", "\uff16\uff14M"
        }) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse(bad), bad);
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("99999999999T"));
    }

    @Test
    void formatsSizesAsMdadmDoes() {
        // mdadm --examine on a 64 MiB member: "Avail Dev Size : 126976 sectors (62.00 MiB 65.01 MB)"
        assertEquals(" (62.00 MiB 65.01 MB)", Sizes.mdadmHuman(126976L << 9));
        assertEquals(" (186.00 MiB 195.04 MB)", Sizes.mdadmHuman(190464L << 10));
        assertEquals("", Sizes.mdadmHuman(4000L * 1024));
        assertEquals(" (3.00 GiB 3.22 GB)", Sizes.mdadmHuman(3L << 30));
        assertEquals("512K", Sizes.chunk(512 * 1024));
        assertEquals("64.00 MiB", Sizes.human(64L << 20));
    }
}
