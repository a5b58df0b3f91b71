package org.raidfive.array;

/** For tests outside this package: the process holding an array dies (see {@link Raid5Array#crashForTest}). */
public final class Crash {
    private Crash() {}

    /** Nothing more is written; the members' claims are dropped as the kernel drops a dead process's locks. */
    public static void of(Raid5Array array) throws InterruptedException {
        array.crashForTest();
    }
}
