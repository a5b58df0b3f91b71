package org.raidfive.array;

/** The background passes over every stripe, named as md's {@code sync_action}. */
public enum SyncAction {
    /** Recompute and write parity everywhere (after an unclean shutdown, or at create). */
    RESYNC("resync"),
    /** Rebuild one member's contents from the others (a new spare, a replacement). */
    RECOVER("recover"),
    /** Read everything and count parity mismatches, change nothing. */
    CHECK("check"),
    /** Like check, and rewrite parity where it mismatches. */
    REPAIR("repair"),
    /**
     * Move the data to a new shape (more or fewer members, another chunk or layout): an {@link
     * OnlineReshape}'s pass, never one of {@link Raid5Array}'s own.
     */
    RESHAPE("reshape");

    private final String mdName;

    SyncAction(String mdName) {
        this.mdName = mdName;
    }

    /** The action's name in md's sync_action ({@code resync}, {@code recover}, {@code check}, {@code repair}, {@code reshape}). */
    public String mdName() {
        return mdName;
    }

    @Override
    public String toString() {
        return mdName;
    }
}
