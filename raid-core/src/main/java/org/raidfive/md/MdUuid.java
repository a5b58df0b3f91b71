package org.raidfive.md;

import java.security.SecureRandom;
import java.util.Random;

/**
 * UUIDs as md stores them: 16 raw bytes ({@code set_uuid}, {@code device_uuid}),
 * written by mdadm as four groups of eight hex digits, in byte order:
 * {@code 0df5eb39:41befa48:ee45b56f:52c10d17} (mdadm {@code super1.c},
 * {@code examine_super1}: {@code %02x} per byte, {@code ':'} every 4 bytes).
 */
public final class MdUuid {
    /** Bytes in an md UUID. */
    public static final int LENGTH = 16;

    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private static final SecureRandom SECURE = new SecureRandom();

    private MdUuid() {}

    /** 16 fresh random bytes, as mdadm's {@code random_uuid} reads from /dev/urandom. */
    public static byte[] random() {
        return random(SECURE);
    }

    /** 16 random bytes from the given source (tests pass a seeded one). */
    public static byte[] random(final Random random) {
        final byte[] uuid = new byte[LENGTH];
        random.nextBytes(uuid);
        return uuid;
    }

    /** mdadm's notation: {@code xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx}, lower-case. */
    public static String format(final byte[] uuid) {
        checkLength(uuid);
        final StringBuilder text = new StringBuilder(35);
        for (int i = 0; i < LENGTH; i++) {
            if (i != 0 && (i & 3) == 0) {
                text.append(':');
            }
            text.append(HEX[(uuid[i] >> 4) & 0xf]).append(HEX[uuid[i] & 0xf]);
        }
        return text.toString();
    }

    /**
     * Parses 32 hex digits. Like mdadm's {@code parse_uuid}, the separators
     * {@code ':'}, {@code '.'}, {@code '-'} and {@code ' '} may appear anywhere and
     * are ignored, so mdadm's notation and the usual 8-4-4-4-12 one both work.
     *
     * @throws IllegalArgumentException naming the text and what is wrong with it.
     */
    public static byte[] parse(final String text) {
        if (text == null) {
            throw new IllegalArgumentException("UUID is missing");
        }
        final byte[] uuid = new byte[LENGTH];
        int digits = 0;
        for (int i = 0; i < text.length(); i++) {
            final char c = text.charAt(i);
            if (c == ':' || c == '.' || c == '-' || c == ' ') {
                continue;
            }
            final int value = Character.digit(c, 16);
            if (value < 0) {
                throw new IllegalArgumentException(
                        "invalid UUID '" + text + "': '" + c + "' at index " + i + " is not a hex digit");
            }
            if (digits == 2 * LENGTH) {
                throw new IllegalArgumentException("invalid UUID '" + text + "': more than 32 hex digits");
            }
            uuid[digits >> 1] |= (byte) ((digits & 1) == 0 ? value << 4 : value);
            digits++;
        }
        if (digits != 2 * LENGTH) {
            throw new IllegalArgumentException("invalid UUID '" + text + "': " + digits + " hex digits, expected 32");
        }
        return uuid;
    }

    static void checkLength(final byte[] uuid) {
        if (uuid == null || uuid.length != LENGTH) {
            throw new IllegalArgumentException(
                    "a UUID is 16 bytes, got " + (uuid == null ? "null" : uuid.length + " bytes"));
        }
    }
}
