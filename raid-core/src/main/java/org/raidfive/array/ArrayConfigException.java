package org.raidfive.array;

import java.io.IOException;

/**
 * The members or settings given cannot make a working array: a bad member list, a corrupt or foreign
 * superblock, a stale member, too few members, a refused dirty degraded start. The message names the
 * member and the reason; nothing was written.
 */
public final class ArrayConfigException extends IOException {
    private static final long serialVersionUID = 1L;

    /** A refusal that says which member or setting is wrong, and why. */
    public ArrayConfigException(String message) {
        super(message);
    }

    /** A refusal caused by {@code cause} (a superblock that cannot be read, say). */
    public ArrayConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
