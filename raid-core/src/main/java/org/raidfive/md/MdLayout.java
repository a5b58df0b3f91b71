package org.raidfive.md;

import java.util.Locale;
import java.util.StringJoiner;

/**
 * md's raid5 layouts: the number stored in the superblock's {@code layout}
 * field (Linux {@code drivers/md/raid5.h}, {@code ALGORITHM_*}) and mdadm's
 * names for it ({@code maps.c}, {@code r5layout[]}).
 *
 * <p>{@link #mdadmName()} is what {@code mdadm --examine} prints after
 * {@code Layout :}; {@link #parse(String)} accepts every name mdadm accepts
 * for raid5 on {@code --layout}: the long name, the short name
 * ({@code la}, {@code ra}, {@code ls}, {@code rs}) and {@code default}
 * (left-symmetric). The engine maps these onto its own address maths.
 */
public enum MdLayout {
    /** ALGORITHM_LEFT_ASYMMETRIC. */
    LEFT_ASYMMETRIC(0, "left-asymmetric", "la"),
    /** ALGORITHM_RIGHT_ASYMMETRIC. */
    RIGHT_ASYMMETRIC(1, "right-asymmetric", "ra"),
    /** ALGORITHM_LEFT_SYMMETRIC: mdadm's default. */
    LEFT_SYMMETRIC(2, "left-symmetric", "ls"),
    /** ALGORITHM_RIGHT_SYMMETRIC. */
    RIGHT_SYMMETRIC(3, "right-symmetric", "rs"),
    /** ALGORITHM_PARITY_0: parity on the first device (raid4-like). */
    PARITY_FIRST(4, "parity-first", null),
    /** ALGORITHM_PARITY_N: parity on the last device (raid4). */
    PARITY_LAST(5, "parity-last", null);

    /** The layout mdadm chooses when none is given. */
    public static final MdLayout DEFAULT = LEFT_SYMMETRIC;

    private static final MdLayout[] BY_NUMBER = values();

    private final int number;
    private final String mdadmName;
    private final String shortName;

    MdLayout(final int number, final String mdadmName, final String shortName) {
        this.number = number;
        this.mdadmName = mdadmName;
        this.shortName = shortName;
    }

    /** The value of the superblock's {@code layout} field. */
    public int number() {
        return number;
    }

    /** mdadm's long name, as {@code mdadm --examine} prints it. */
    public String mdadmName() {
        return mdadmName;
    }

    /** mdadm's two-letter name, or {@code null} for the parity layouts, which have none. */
    public String shortName() {
        return shortName;
    }

    /** True if {@code number} is a raid5 layout. */
    public static boolean isValid(final int number) {
        return number >= 0 && number < BY_NUMBER.length;
    }

    /**
     * The layout stored as {@code number}.
     *
     * @throws IllegalArgumentException if md has no raid5 layout with that number.
     */
    public static MdLayout ofNumber(final int number) {
        if (!isValid(number)) {
            throw new IllegalArgumentException(
                    "unknown raid5 layout number " + number + " (valid: 0.." + (BY_NUMBER.length - 1) + ")");
        }
        return BY_NUMBER[number];
    }

    /**
     * Parses an mdadm layout name (long, short or {@code default}; case does not matter).
     *
     * @throws IllegalArgumentException naming the input and listing every valid name.
     */
    public static MdLayout parse(final String name) {
        final String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        if ("default".equals(key)) {
            return DEFAULT;
        }
        for (final MdLayout layout : BY_NUMBER) {
            if (layout.mdadmName.equals(key) || key.equals(layout.shortName)) {
                return layout;
            }
        }
        throw new IllegalArgumentException("unknown raid5 layout '" + name + "'; valid layouts: " + validNames());
    }

    /** Every accepted name, e.g. {@code "left-asymmetric (la), ..., parity-last, default"}. */
    public static String validNames() {
        final StringJoiner names = new StringJoiner(", ");
        for (final MdLayout layout : BY_NUMBER) {
            names.add(layout.shortName == null ? layout.mdadmName : layout.mdadmName + " (" + layout.shortName + ")");
        }
        names.add("default");
        return names.toString();
    }

    /** mdadm's long name. */
    @Override
    public String toString() {
        return mdadmName;
    }
}
