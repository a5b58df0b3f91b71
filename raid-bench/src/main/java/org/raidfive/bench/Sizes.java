package org.raidfive.bench;

import java.util.Locale;

/** fio-style sizes: a number with an optional k/m/g/t suffix, powers of 1024 ("4k" = 4096). */
public final class Sizes {
    private Sizes() {
    }

    public static long parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ib")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'k': unit = 1L << 10; break;
                case 'm': unit = 1L << 20; break;
                case 'g': unit = 1L << 30; break;
                case 't': unit = 1L << 40; break;
                default: unit = 1;
            }
        }
        String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
        try {
            long value = Long.parseLong(digits);
            if (value < 0 || value > Long.MAX_VALUE / unit) {
                throw new NumberFormatException();
            }
            return value * unit;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a size (examples: 4096, 4k, 1m, 2g)");
        }
    }

    /** The shortest exact form: 4096 -> "4k", 1536 KiB -> "1536k", 1 GiB -> "1g". */
    public static String format(long bytes) {
        String[] suffix = {"", "k", "m", "g", "t"};
        int i = 0;
        while (i < suffix.length - 1 && bytes != 0 && bytes % 1024 == 0) {
            bytes /= 1024;
            i++;
        }
        return bytes + suffix[i];
    }
}
