package org.raidfive.layout;

import java.util.Locale;

/**
 * md's RAID-5 parity placements, numbered as md stores them in the superblock's {@code layout}
 * field ({@code ALGORITHM_*} in Linux {@code drivers/md/raid5.h}), named as mdadm names them.
 */
public enum Raid5Algorithm {
    LEFT_ASYMMETRIC(0, "left-asymmetric", "la"),
    RIGHT_ASYMMETRIC(1, "right-asymmetric", "ra"),
    LEFT_SYMMETRIC(2, "left-symmetric", "ls"),
    RIGHT_SYMMETRIC(3, "right-symmetric", "rs"),
    PARITY_FIRST(4, "parity-first", "parity-first"),
    PARITY_LAST(5, "parity-last", "parity-last");

    /** mdadm's default layout for RAID-5. */
    public static final Raid5Algorithm DEFAULT = LEFT_SYMMETRIC;

    private final int mdNumber;
    private final String mdadmName;
    private final String shortName;

    Raid5Algorithm(int mdNumber, String mdadmName, String shortName) {
        this.mdNumber = mdNumber;
        this.mdadmName = mdadmName;
        this.shortName = shortName;
    }

    /** The value md keeps in the superblock's layout field. */
    public int mdNumber() {
        return mdNumber;
    }

    /** The name mdadm prints and accepts, e.g. {@code left-symmetric}. */
    public String mdadmName() {
        return mdadmName;
    }

    public String shortName() {
        return shortName;
    }

    public static Raid5Algorithm fromMdNumber(int number) {
        for (Raid5Algorithm a : values()) {
            if (a.mdNumber == number) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown md RAID-5 layout number " + number
                + " (raidfive knows 0-5: " + names() + ")");
    }

    /** Parses an mdadm layout name or its short form (case-insensitive). */
    public static Raid5Algorithm parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (Raid5Algorithm a : values()) {
            if (a.mdadmName.equals(n) || a.shortName.equals(n) || n.equals(Integer.toString(a.mdNumber))) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown layout '" + name + "'; valid layouts: " + names());
    }

    private static String names() {
        StringBuilder sb = new StringBuilder();
        for (Raid5Algorithm a : values()) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(a.mdadmName);
            if (!a.shortName.equals(a.mdadmName)) {
                sb.append(" (").append(a.shortName).append(')');
            }
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return mdadmName;
    }
}
