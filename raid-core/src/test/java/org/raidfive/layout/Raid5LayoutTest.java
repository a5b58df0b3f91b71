package org.raidfive.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class Raid5LayoutTest {

    /** Renders stripes 0..3 of a 4-member array as "D0 D1 D2 P | ..." the way the issue states md's vectors. */
    private static String render(Raid5Algorithm algorithm) {
        Raid5Layout layout = new Raid5Layout(algorithm, 4, 4096, 4096L * 16);
        StringBuilder sb = new StringBuilder();
        for (long stripe = 0; stripe < 4; stripe++) {
            if (stripe > 0) {
                sb.append(" | ");
            }
            for (int slot = 0; slot < 4; slot++) {
                if (slot > 0) {
                    sb.append(' ');
                }
                int index = layout.dataIndexOfSlot(stripe, slot);
                sb.append(index < 0 ? "P" : "D" + layout.chunkNumber(stripe, index));
            }
        }
        return sb.toString();
    }

    @Test
    void leftAsymmetricMatchesMd() {
        assertEquals("D0 D1 D2 P | D3 D4 P D5 | D6 P D7 D8 | P D9 D10 D11", render(Raid5Algorithm.LEFT_ASYMMETRIC));
    }

    @Test
    void rightAsymmetricMatchesMd() {
        assertEquals("P D0 D1 D2 | D3 P D4 D5 | D6 D7 P D8 | D9 D10 D11 P", render(Raid5Algorithm.RIGHT_ASYMMETRIC));
    }

    @Test
    void leftSymmetricMatchesMd() {
        assertEquals("D0 D1 D2 P | D4 D5 P D3 | D8 P D6 D7 | P D9 D10 D11", render(Raid5Algorithm.LEFT_SYMMETRIC));
    }

    @Test
    void rightSymmetricMatchesMd() {
        assertEquals("P D0 D1 D2 | D5 P D3 D4 | D7 D8 P D6 | D9 D10 D11 P", render(Raid5Algorithm.RIGHT_SYMMETRIC));
    }

    @Test
    void parityFirstAndLastKeepParityOnOneMember() {
        assertEquals("P D0 D1 D2 | P D3 D4 D5 | P D6 D7 D8 | P D9 D10 D11", render(Raid5Algorithm.PARITY_FIRST));
        assertEquals("D0 D1 D2 P | D3 D4 D5 P | D6 D7 D8 P | D9 D10 D11 P", render(Raid5Algorithm.PARITY_LAST));
    }

    /** A direct transcription of Linux raid5_compute_sector's RAID-5 cases, as an independent oracle. */
    private static int[] linuxComputeSector(int algorithm, int raidDisks, long chunkNumber) {
        int dataDisks = raidDisks - 1;
        long stripe = chunkNumber / dataDisks;
        int ddIdx = (int) (chunkNumber % dataDisks);
        int pdIdx;
        switch (algorithm) {
            case 0:
                pdIdx = dataDisks - (int) (stripe % raidDisks);
                if (ddIdx >= pdIdx) {
                    ddIdx++;
                }
                break;
            case 1:
                pdIdx = (int) (stripe % raidDisks);
                if (ddIdx >= pdIdx) {
                    ddIdx++;
                }
                break;
            case 2:
                pdIdx = dataDisks - (int) (stripe % raidDisks);
                ddIdx = (pdIdx + 1 + ddIdx) % raidDisks;
                break;
            case 3:
                pdIdx = (int) (stripe % raidDisks);
                ddIdx = (pdIdx + 1 + ddIdx) % raidDisks;
                break;
            case 4:
                pdIdx = 0;
                ddIdx++;
                break;
            default:
                pdIdx = dataDisks;
                break;
        }
        return new int[] {pdIdx, ddIdx};
    }

    @Property(tries = 2000)
    void forwardMappingEqualsLinuxAndInverseRoundTrips(
            @ForAll @IntRange(min = 0, max = 5) int algorithm,
            @ForAll @IntRange(min = 3, max = 32) int disks,
            @ForAll @LongRange(min = 0, max = 1L << 40) long chunk) {
        Raid5Layout layout = new Raid5Layout(Raid5Algorithm.fromMdNumber(algorithm), disks, 65536, 1L << 50);
        long stripe = layout.stripeOfChunk(chunk);
        int index = layout.dataIndexOfChunk(chunk);
        int[] linux = linuxComputeSector(algorithm, disks, chunk);
        assertEquals(linux[0], layout.paritySlot(stripe), "parity slot");
        int slot = layout.dataSlot(stripe, index);
        assertEquals(linux[1], slot, "data slot");
        assertEquals(index, layout.dataIndexOfSlot(stripe, slot), "inverse");
        assertEquals(chunk, layout.chunkNumber(stripe, index));
        assertEquals(-1, layout.dataIndexOfSlot(stripe, layout.paritySlot(stripe)));
    }

    @Property(tries = 300)
    void everyStripeUsesEverySlotExactlyOnce(
            @ForAll @IntRange(min = 0, max = 5) int algorithm,
            @ForAll @IntRange(min = 3, max = 16) int disks,
            @ForAll @LongRange(min = 0, max = 1L << 30) long stripe) {
        Raid5Layout layout = new Raid5Layout(Raid5Algorithm.fromMdNumber(algorithm), disks, 4096, 1L << 50);
        boolean[] seen = new boolean[disks];
        seen[layout.paritySlot(stripe)] = true;
        for (int i = 0; i < disks - 1; i++) {
            int slot = layout.dataSlot(stripe, i);
            assertTrue(!seen[slot], "slot " + slot + " used twice");
            seen[slot] = true;
        }
    }

    @Test
    void sizesFollowMd() {
        Raid5Layout layout = new Raid5Layout(Raid5Algorithm.LEFT_SYMMETRIC, 4, 512 * 1024, 10L * 1024 * 1024 + 5000);
        assertEquals(20, layout.stripes());
        assertEquals(20L * 512 * 1024 * 3, layout.arrayBytes());
    }

    @Test
    void badGeometryIsRefusedWithTheRule() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> new Raid5Layout(Raid5Algorithm.DEFAULT, 4, 6000, 1 << 20));
        assertTrue(e.getMessage().contains("6000") && e.getMessage().contains("power of two"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class, () -> new Raid5Layout(Raid5Algorithm.DEFAULT, 4, 2048, 1 << 20));
        assertTrue(e.getMessage().contains("4 KiB"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class, () -> new Raid5Layout(Raid5Algorithm.DEFAULT, 2, 4096, 1 << 20));
        assertTrue(e.getMessage().contains("got 2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Raid5Algorithm.parse("diagonal"));
        assertTrue(e.getMessage().contains("diagonal") && e.getMessage().contains("left-symmetric"), e.getMessage());
    }

    @Test
    void mdadmNamesParse() {
        assertEquals(Raid5Algorithm.LEFT_ASYMMETRIC, Raid5Algorithm.parse("la"));
        assertEquals(Raid5Algorithm.RIGHT_SYMMETRIC, Raid5Algorithm.parse("Right-Symmetric"));
        assertEquals(Raid5Algorithm.PARITY_LAST, Raid5Algorithm.parse("parity-last"));
        assertEquals(Raid5Algorithm.PARITY_FIRST, Raid5Algorithm.fromMdNumber(4));
    }
}
