package org.raidfive.layout;

import java.util.Locale;

/**
 * md's RAID-5 parity placements, numbered as md stores them in the superblock's {@code layout}
 * field ({@code ALGORITHM_*} in Linux {@code drivers/md/raid5.h}), named as mdadm names them.
 */
public enum Raid5Algorithm {
    /** md layout 0: parity moves left from the last member; data starts after it on the first member. */
    LEFT_ASYMMETRIC(0, "left-asymmetric", "la"),
    /** md layout 1: parity moves right from the first member; data starts on the first member. */
    RIGHT_ASYMMETRIC(1, "right-asymmetric", "ra"),
    /** md layout 2 (mdadm's default): parity moves left; data starts just after the parity member. */
    LEFT_SYMMETRIC(2, "left-symmetric", "ls"),
    /** md layout 3: parity moves right; data starts just after the parity member. */
    RIGHT_SYMMETRIC(3, "right-symmetric", "rs"),
    /** md layout 4: parity always on the first member (RAID-4 style). */
    PARITY_FIRST(4, "parity-first", "parity-first"),
    /** md layout 5: parity always on the last member (RAID-4 style). */
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

    /** mdadm's short name ({@code ls}, {@code ra}, ...). */
    public String shortName() {
        return shortName;
    }

    /**
     * The layout with md's number {@code number}.
     *
     * @throws IllegalArgumentException for a number md does not have for RAID-5
     */
    public static Raid5Algorithm fromMdNumber(int number) {
        for (Raid5Algorithm a : values()) {
            if (a.mdNumber == number) {
                return a;
            }
        }
        throw new IllegalArgumentException(
                "unknown md RAID-5 layout number " + number + " (raidfive knows 0-5: " + names() + ")");
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
