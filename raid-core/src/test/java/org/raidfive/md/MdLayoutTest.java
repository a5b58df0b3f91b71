package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class MdLayoutTest {
    @Test
    void numbersAreMdsAlgorithmNumbers() {
        assertEquals(0, MdLayout.LEFT_ASYMMETRIC.number());
        assertEquals(1, MdLayout.RIGHT_ASYMMETRIC.number());
        assertEquals(2, MdLayout.LEFT_SYMMETRIC.number());
        assertEquals(3, MdLayout.RIGHT_SYMMETRIC.number());
        assertEquals(4, MdLayout.PARITY_FIRST.number());
        assertEquals(5, MdLayout.PARITY_LAST.number());
        for (final MdLayout layout : MdLayout.values()) {
            assertSame(layout, MdLayout.ofNumber(layout.number()));
        }
        assertSame(MdLayout.LEFT_SYMMETRIC, MdLayout.DEFAULT);
    }

    @Test
    void parsesMdadmLongAndShortNames() {
        assertSame(MdLayout.LEFT_ASYMMETRIC, MdLayout.parse("left-asymmetric"));
        assertSame(MdLayout.LEFT_ASYMMETRIC, MdLayout.parse("la"));
        assertSame(MdLayout.RIGHT_ASYMMETRIC, MdLayout.parse("ra"));
        assertSame(MdLayout.LEFT_SYMMETRIC, MdLayout.parse("ls"));
        assertSame(MdLayout.RIGHT_SYMMETRIC, MdLayout.parse("Right-Symmetric"));
        assertSame(MdLayout.PARITY_FIRST, MdLayout.parse("parity-first"));
        assertSame(MdLayout.PARITY_LAST, MdLayout.parse(" parity-last "));
        assertSame(MdLayout.LEFT_SYMMETRIC, MdLayout.parse("default"));
        for (final MdLayout layout : MdLayout.values()) {
            assertSame(layout, MdLayout.parse(layout.toString()));
        }
    }

    @Test
    void unknownNameListsTheValidOnes() {
        final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> MdLayout.parse("zigzag"));
        assertEquals(
                "unknown raid5 layout 'zigzag'; valid layouts: left-asymmetric (la), right-asymmetric (ra), "
                        + "left-symmetric (ls), right-symmetric (rs), parity-first, parity-last, default",
                ex.getMessage());
        final IllegalArgumentException number =
                assertThrows(IllegalArgumentException.class, () -> MdLayout.ofNumber(6));
        assertEquals("unknown raid5 layout number 6 (valid: 0..5)", number.getMessage());
    }
}
