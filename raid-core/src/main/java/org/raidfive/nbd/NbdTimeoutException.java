package org.raidfive.nbd;

import java.io.IOException;

/**
 * A connect, handshake or request did not finish within its configured timeout. A request
 * timeout is fatal to the {@link NbdClient}: the request's fate on the server is unknown, so the
 * connection is closed and never silently retried.
 */
public final class NbdTimeoutException extends IOException {
    private static final long serialVersionUID = 1L;

    /** A request or the handshake took longer than allowed. */
    public NbdTimeoutException(String message) {
        super(message);
    }
}
