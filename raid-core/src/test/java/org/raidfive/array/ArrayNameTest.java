package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Array names as mdadm allows them: nothing that breaks an ARRAY line or a /dev/md/ path. */
class ArrayNameTest {
    @Test
    void namesAreMdadmsPortableOnes() {
        assertEquals(
                "host:vol-0.a_b",
                ArraySpec.builder().name("host:vol-0.a_b").build().name());
        for (String bad : new String[] {"vol0\nDEVICE /etc/*", "two words", "a/b", "tab\there", "vol\u00e9"}) {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> ArraySpec.builder().name(bad).build(),
                    bad);
        }
    }
}
