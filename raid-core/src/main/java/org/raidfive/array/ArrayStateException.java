package org.raidfive.array;

import java.io.IOException;

/**
 * A request the array refuses in its present state, as md refuses it: a check while degraded, a
 * pass while another runs, removing a member that is in sync, replacing one that is not. The
 * message says what is in the way; nothing was changed. Try again when the state allows (the pass
 * has ended, the member has been failed).
 */
public final class ArrayStateException extends IOException {
    private static final long serialVersionUID = 1L;

    /** A refusal that says what in the array's present state is in the way. */
    public ArrayStateException(String message) {
        super(message);
    }
}
