package org.raidfive.cli;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Byte sizes on the command line ({@code 512K}, {@code 64M}, {@code 1G}: powers of 1024) and in output. */
final class Sizes {
    private Sizes() {
    }

    /**
     * Parses a non-negative size: digits with an optional suffix K, M, G or T (also KiB, MiB, ... and
     * KB, MB, ..., all meaning powers of 1024; case-insensitive) or B for bytes.
     */
    static long parse(String text) {
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
            case "": case "B":
                shift = 0;
                break;
            case "K": case "KB": case "KIB":
                shift = 10;
                break;
            case "M": case "MB": case "MIB":
                shift = 20;
                break;
            case "G": case "GB": case "GIB":
                shift = 30;
                break;
            case "T": case "TB": case "TIB":
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

    /** picocli converter for size options. */
    static final class Converter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** Short binary size: {@code 512K}, {@code 64.00 MiB}, {@code 3.00 GiB}, {@code 4096 B}. */
    static String human(long bytes) {
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
    static String rate(double bytesPerSecond) {
        if (bytesPerSecond <= 0 || Double.isNaN(bytesPerSecond)) {
            return "- MiB/s";
        }
        if (bytesPerSecond < 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB/s", bytesPerSecond / 1024);
        }
        return String.format(Locale.ROOT, "%.1f MiB/s", bytesPerSecond / (1024 * 1024));
    }

    /** A chunk size as mdadm prints it: {@code 512K}, {@code 4K}, {@code 1M} stays {@code 1024K}. */
    static String chunk(long bytes) {
        return (bytes / 1024) + "K";
    }

    /**
     * mdadm's {@code human_size}: {@code " (62.00 MiB 65.01 MB)"} with a leading space, or an empty
     * string below 5000 KiB; MiB/MB below 2 GiB, GiB/GB below 2 TiB, then TiB/TB. Rounded as mdadm does.
     */
    static String mdadmHuman(long bytes) {
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
    static String duration(java.time.Duration d) {
        if (d == null) {
            return "-:--";
        }
        long s = Math.max(0, d.getSeconds());
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
