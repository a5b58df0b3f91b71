package org.raidfive.cli;

/**
 * Exit codes of the {@code raid} command, in the spirit of mdadm.
 *
 * <p>Every command: {@link #OK} when it did what was asked, {@link #PROBLEM} when it ran but found
 * the array degraded or failed or parity mismatching, {@link #USAGE} for bad input (nothing was
 * written). {@code raid detail} follows {@code mdadm --detail --test}: 0 healthy, 1 degraded,
 * 2 failed or unusable, 4 cannot read.
 */
final class ExitCode {
    static final int OK = 0;
    /** Degraded, failed, mismatches found, an I/O error on the way. */
    static final int PROBLEM = 1;
    /** Bad input: usage, a bad member list, a refused operation. */
    static final int USAGE = 2;
    /** {@code raid detail}: the array is failed or cannot be assembled. */
    static final int DETAIL_FAILED = 2;
    /** {@code raid detail}: a member could not be opened or read. */
    static final int DETAIL_UNREADABLE = 4;
    /** Stopped by SIGINT (Ctrl-C), as shells report it. */
    static final int INTERRUPTED = 130;

    private ExitCode() {}
}
