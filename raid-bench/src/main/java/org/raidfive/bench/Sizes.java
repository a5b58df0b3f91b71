package org.raidfive.bench;

import java.time.Duration;
import java.util.Locale;

/**
 * Byte sizes, one grammar for every command and benchmark ({@code 512K}, {@code 64M}, {@code 1G}:
 * powers of 1024), and the forms output shows them in (fio's, mdadm's, a person's).
 */
public final class Sizes {
    private Sizes() {}

    /**
     * Parses a non-negative size: digits with an optional suffix K, M, G or T (also KiB, MiB, ... and
     * KB, MB, ..., all meaning powers of 1024; case-insensitive) or B for bytes.
     */
    public static long parse(String text) {
        String t = text;
        int end = 0;
        // ASCII digits only (Character.isDigit takes every script's), and nothing around the size
        while (end < t.length() && t.charAt(end) >= '0' && t.charAt(end) <= '9') {
            end++;
        }
        if (end == 0) {
            throw new IllegalArgumentException(invalid(text));
        }
        String suffix = t.substring(end).toUpperCase(Locale.ROOT);
        int shift;
        switch (suffix) {
            case "":
            case "B":
                shift = 0;
                break;
            case "K":
            case "KB":
            case "KIB":
                shift = 10;
                break;
            case "M":
            case "MB":
            case "MIB":
                shift = 20;
                break;
            case "G":
            case "GB":
            case "GIB":
                shift = 30;
                break;
            case "T":
            case "TB":
            case "TIB":
                shift = 40;
                break;
            default:
                throw new IllegalArgumentException(invalid(text));
        }
        long value;
        try {
            value = Long.parseLong(t.substring(0, end));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(invalid(text) + " (too large)");
        }
        if (value > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        return value << shift;
    }

    private static String invalid(String text) {
        return "invalid size '" + text + "': expected a whole number of bytes with an optional suffix"
                + " K, M, G or T (powers of 1024), e.g. 512K or 64M";
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

    /** Short binary size: {@code 512K}, {@code 64.00 MiB}, {@code 3.00 GiB}, {@code 4096 B}. */
    public static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.2f %s", v, units[u]);
    }

    /** A rate in bytes per second: {@code 120.5 MiB/s}. */
    public static String rate(double bytesPerSecond) {
        if (bytesPerSecond <= 0 || Double.isNaN(bytesPerSecond)) {
            return "- MiB/s";
        }
        if (bytesPerSecond < 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB/s", bytesPerSecond / 1024);
        }
        return String.format(Locale.ROOT, "%.1f MiB/s", bytesPerSecond / (1024 * 1024));
    }

    /** A chunk size as mdadm prints it: {@code 512K}, {@code 4K}, {@code 1M} stays {@code 1024K}. */
    public static String chunk(long bytes) {
        return (bytes / 1024) + "K";
    }

    /**
     * mdadm's {@code human_size}: {@code " (62.00 MiB 65.01 MB)"} with a leading space, or an empty
     * string below 5000 KiB; MiB/MB below 2 GiB, GiB/GB below 2 TiB, then TiB/TB. Rounded as mdadm does.
     */
    public static String mdadmHuman(long bytes) {
        if (bytes < 5000L * 1024) {
            return "";
        }
        long c1;
        long c2;
        String u1;
        String u2;
        if (bytes < 2L * 1024 * 1024 * 1024) {
            c1 = (bytes * 200 / (1L << 20) + 1) / 2;
            c2 = (bytes / (1_000_000L / 200) + 1) / 2;
            u1 = "MiB";
            u2 = "MB";
        } else if (bytes < 2L * 1024 * 1024 * 1024 * 1024) {
            c1 = (bytes * 200 / (1L << 30) + 1) / 2;
            c2 = (bytes / (1_000_000_000L / 200) + 1) / 2;
            u1 = "GiB";
            u2 = "GB";
        } else {
            c1 = (bytes / 1024 * 200 / (1L << 30) + 1) / 2;
            c2 = (bytes / (1_000_000_000_000L / 200) + 1) / 2;
            u1 = "TiB";
            u2 = "TB";
        }
        return String.format(Locale.ROOT, " (%d.%02d %s %d.%02d %s)", c1 / 100, c1 % 100, u1, c2 / 100, c2 % 100, u2);
    }

    /** {@code 0:12} or {@code 1:02:03}. */
    public static String duration(Duration d) {
        if (d == null) {
            return "-:--";
        }
        long s = Math.max(0, d.getSeconds());
        return s >= 3600
                ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
