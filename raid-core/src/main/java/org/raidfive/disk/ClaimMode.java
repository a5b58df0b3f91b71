package org.raidfive.disk;

/** How an array holds a member it opened: see {@link MemberDisk#claim}. */
public enum ClaimMode {
    /** Read-only use: other read-only users may hold the member too, no writer may. */
    SHARED,
    /** Read-write use: nobody else, in this process or another, may hold the member. */
    EXCLUSIVE
}
