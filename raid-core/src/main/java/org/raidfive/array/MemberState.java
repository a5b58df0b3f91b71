package org.raidfive.array;

/** What a member is to its array, as md tracks it in the superblock's role table. */
public enum MemberState {
    /** Holds a role and all of its data. */
    IN_SYNC,
    /** Holds a role; data below its recovery offset is valid, the rest is being rebuilt. */
    REBUILDING,
    /** Failed: neither read nor written; waits to be removed. */
    FAULTY,
    /** No role yet: a hot spare that a degraded array rebuilds onto. */
    SPARE
}
