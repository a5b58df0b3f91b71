package org.raidfive.disk;

import java.io.IOException;

/**
 * The outcome of one completion-based member I/O ({@link AsyncDisk}): {@code error} is null when
 * every byte moved. {@code tag} is what the submitter passed, so one long-lived object (a stripe
 * operation) can receive many I/Os without a callback object per I/O.
 *
 * <p>May run on any thread, the submitting one included (before the submit call returns), and
 * must not block for long: it is often an I/O thread. An I/O it submits to a file member is
 * taken by that same thread once the callback returns (a completion chaining the next I/O costs
 * no wake-up), so a callback that submits and then waits for that I/O stalls until another
 * worker polls (within a second), rather than deadlocking.
 */
@FunctionalInterface
public interface IoCallback {
    /** The I/O given {@code tag} ended: {@code error} is null when every byte moved. */
    void ioDone(int tag, IOException error);
}
