package org.raidfive.nbd;

import java.io.IOException;

/**
 * The server answered a request with an NBD error (EIO, EINVAL, ENOSPC, EPERM, ...). The
 * connection stays usable: only this request failed.
 */
public final class NbdErrorException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The NBD error number the server replied with. */
    private final int error;

    /** The server answered a request with NBD error {@code error}. */
    public NbdErrorException(String message, int error) {
        super(message + ": server replied " + NbdProtocol.errorName(error));
        this.error = error;
    }

    /** The NBD error value (1 EPERM, 5 EIO, 12 ENOMEM, 22 EINVAL, 28 ENOSPC, 75 EOVERFLOW, 95 ENOTSUP, 108 ESHUTDOWN). */
    public int error() {
        return error;
    }

    /** The symbolic name of {@link #error()}, e.g. "EIO". */
    public String errorName() {
        return NbdProtocol.errorName(error);
    }
}
