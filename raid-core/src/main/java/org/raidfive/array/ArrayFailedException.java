package org.raidfive.array;

import java.io.IOException;

/**
 * The array has lost more members than RAID-5 survives (or was stopped after a fatal metadata
 * error): every I/O from now on is refused with this exception, rather than returning bytes that
 * cannot be trusted.
 */
public final class ArrayFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The array has failed; the message says which members are out. */
    public ArrayFailedException(String message) {
        super(message);
    }

    /** The array has failed because of {@code cause}. */
    public ArrayFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
