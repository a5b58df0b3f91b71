package org.raidfive.disk;

import java.io.IOException;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The choice of {@link IoBackend}, made once on first use and logged. Names no netty class itself,
 * so that a class path without netty's transport (it is optional at run time) falls back to the
 * I/O threads instead of failing: {@link RingIo} is first touched inside a {@code try}.
 */
final class RingChoice {
    private static final Logger LOG = LoggerFactory.getLogger(RingChoice.class);

    static final RingIo RING;
    static final String CHOICE;
    /** Why a pinned backend cannot be had (file members then refuse to open), else null. */
    static final String PIN_FAILURE;

    static {
        RingIo ring = null;
        String pinFailure = null;
        IoBackend pinned = null;
        String why;
        try {
            pinned = IoBackend.pinned();
            why = pinned == IoBackend.IO_THREADS ? IoBackend.PROPERTY + "=threads" : platform();
        } catch (IllegalArgumentException e) {
            why = e.getMessage();
            pinFailure = why;
        }
        String version = null;
        if (why == null) {
            try {
                why = RingIo.unavailable();
                if (why == null) {
                    ring = new RingIo();
                    version = RingIo.nettyVersion();
                }
            } catch (LinkageError e) {
                why = "netty's io_uring transport is not on the class path (" + e.getMessage() + ")";
            } catch (RuntimeException e) {
                why = "io_uring could not be set up: " + e;
            }
        }
        String choice;
        if (ring != null) {
            choice = "member I/O: io_uring (netty " + version + ", " + RingIo.CAPACITY
                    + " requests in flight, one event-loop thread)";
        } else {
            choice = "member I/O: I/O threads (" + why + ")";
            if (pinned == IoBackend.IO_URING) {
                pinFailure = IoBackend.PROPERTY + "=io_uring, but " + why;
            }
        }
        LOG.info(choice);
        RING = ring;
        CHOICE = choice;
        PIN_FAILURE = pinFailure;
    }

    private RingChoice() {}

    private static String platform() {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!System.getProperty("os.name", "").startsWith("Linux")
                || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return "io_uring is used on Linux x86_64 only, this is " + System.getProperty("os.name") + " " + arch;
        }
        return null;
    }

    /** Fails when the backend was pinned to something this process cannot run. */
    static void checkPinned() throws IOException {
        if (PIN_FAILURE != null) {
            throw new IOException(PIN_FAILURE);
        }
    }
}
