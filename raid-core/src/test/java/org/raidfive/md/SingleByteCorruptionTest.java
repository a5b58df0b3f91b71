package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every single-byte corruption of a valid superblock is detected: each byte of
 * the checksummed span is replaced, one at a time, by each of its 255 other
 * values, in the 4 KiB block the kernel reads (zeros after the span). Decode
 * must throw, and the message must name the member.
 */
class SingleByteCorruptionTest {
    private static final String MEMBER = "member-under-test";

    @Test
    void everyByteValueChangeInTheSpanIsDetected() {
        assertAllDetected(Samples.member(1)); // max_dev 128, as mdadm writes: span of whole 32-bit words
    }

    @Test
    void everyByteValueChangeIsDetectedWithTrailingSixteenBitWord() {
        final Superblock sb = Samples.member(0)
                .maxDev(131)
                .devNumber(130)
                .featureMap(Superblock.MD_FEATURE_RECOVERY_OFFSET)
                .recoveryOffset(777);
        sb.devRole(0, Superblock.ROLE_FAULTY).devRole(130, 0).devRole(129, Superblock.ROLE_FAULTY);
        assertAllDetected(sb);
    }

    @Test
    void messagesSayWhatWasFound() {
        final byte[] block = Samples.block(Samples.member(1));
        final List<String> kinds = new ArrayList<>();
        for (final int at : new int[] {0, 4, 220, 100, 300}) {
            final byte[] copy = block.clone();
            copy[at] ^= (byte) 0x40;
            kinds.add(assertThrows(SuperblockException.class, () -> Superblock.decode(ByteBuffer.wrap(copy), MEMBER))
                    .problem());
        }
        assertTrue(kinds.get(0).startsWith("not an md member (magic 0xa92b4ebc"), kinds.get(0));
        assertTrue(kinds.get(1).startsWith("unsupported superblock major version 65"), kinds.get(1));
        assertTrue(
                kinds.get(2).startsWith("max_dev 192 ") || kinds.get(2).startsWith("bad superblock checksum"),
                kinds.get(2));
        assertTrue(kinds.get(3).startsWith("bad superblock checksum: expected 0x"), kinds.get(3));
        assertTrue(kinds.get(4).startsWith("bad superblock checksum: expected 0x"), kinds.get(4));
    }

    private static void assertAllDetected(final Superblock sb) {
        final byte[] block = Samples.block(sb);
        final int span = sb.encodedLength();
        int checked = 0;
        for (int at = 0; at < span; at++) {
            final byte original = block[at];
            for (int delta = 1; delta < 256; delta++) {
                block[at] = (byte) (original ^ delta);
                try {
                    final Superblock wrong = Superblock.decode(ByteBuffer.wrap(block), MEMBER);
                    fail(String.format(
                            "byte %d changed 0x%02x -> 0x%02x went undetected: %s",
                            at, original & 0xff, block[at] & 0xff, wrong));
                } catch (final SuperblockException expected) {
                    if (!expected.getMessage().startsWith(MEMBER + ": ")) {
                        fail("message does not name the member: " + expected.getMessage());
                    }
                }
                checked++;
            }
            block[at] = original;
        }
        assertEquals(span * 255, checked);
    }
}
