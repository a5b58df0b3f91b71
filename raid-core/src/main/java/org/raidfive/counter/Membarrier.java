package org.raidfive.counter;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Linux {@code membarrier(2)} with {@code MEMBARRIER_CMD_PRIVATE_EXPEDITED}: a full memory barrier
 * run on every CPU that is executing a thread of this process, the asymmetric fence that lets the
 * counters' readers use plain stores (see {@link PercpuRef}, "Owned cells").
 *
 * <p>Probed once, when the class initialises: the architecture's syscall number (x86_64 324,
 * aarch64 283), {@code MEMBARRIER_CMD_QUERY} must list both the command and its registration,
 * {@code MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED} must succeed, and so must one barrier. The
 * outcome is logged once. {@code -Draidfive.counters.membarrier=false} turns it off (the counters
 * then use their shared cells, as on a machine without it). Reached through JNA's {@code syscall}
 * binding; a seccomp filter that denies the call shows up here as an error, not as a crash.
 */
final class Membarrier {
    private static final Logger LOG = LoggerFactory.getLogger(Membarrier.class);

    // include/uapi/linux/membarrier.h
    private static final int CMD_QUERY = 0;
    private static final int CMD_PRIVATE_EXPEDITED = 1 << 3;
    private static final int CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4;

    /** The property that turns the fast path off: {@code -Draidfive.counters.membarrier=false}. */
    static final String PROPERTY = "raidfive.counters.membarrier";

    /** Null when available; otherwise why not, in a few words. */
    private static final String UNAVAILABLE;

    private static final AtomicLong BARRIERS = new AtomicLong();

    static {
        long number = syscallNumber(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
        String why;
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) {
            why = "turned off by -D" + PROPERTY + "=false";
        } else if (number < 0) {
            why = "no membarrier(2) on " + System.getProperty("os.name") + "/" + System.getProperty("os.arch");
        } else {
            try {
                why = Jna.bind(number);
            } catch (LinkageError | RuntimeException e) { // no JNA on the class path, no native part for this platform
                why = "cannot bind membarrier(2) through JNA: " + e;
            }
        }
        UNAVAILABLE = why;
        if (why == null) {
            LOG.info("counters: owned cells with membarrier(2) PRIVATE_EXPEDITED (plain stores on the I/O path)");
        } else {
            LOG.info("counters: shared cells with atomic adds ({})", why);
        }
    }

    /** Everything that names a JNA type, so that this class loads (and falls back) without JNA. */
    private static final class Jna {
        /** The C library's {@code long syscall(long number, ...)}; varargs map to C varargs. */
        interface LibC extends Library {
            long syscall(long number, Object... args) throws LastErrorException;
        }

        private static LibC libc;
        private static long syscall;

        /** Queries, registers and issues one barrier; null if all worked, else why not. */
        static String bind(long number) {
            try {
                LibC c = Native.load("c", LibC.class);
                long mask = c.syscall(number, CMD_QUERY, 0, 0);
                int needed = CMD_PRIVATE_EXPEDITED | CMD_REGISTER_PRIVATE_EXPEDITED;
                if ((mask & needed) != needed) {
                    return "the kernel does not offer MEMBARRIER_CMD_PRIVATE_EXPEDITED (query mask 0x"
                            + Long.toHexString(mask) + ")";
                }
                c.syscall(number, CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
                c.syscall(number, CMD_PRIVATE_EXPEDITED, 0, 0);
                libc = c;
                syscall = number;
                return null;
            } catch (LastErrorException e) {
                return "membarrier(2) failed: errno " + e.getErrorCode();
            }
        }

        static void barrier() {
            try {
                libc.syscall(syscall, CMD_PRIVATE_EXPEDITED, 0, 0);
            } catch (LastErrorException e) {
                throw new IllegalStateException("membarrier(2) failed: errno " + e.getErrorCode(), e);
            }
        }
    }

    private Membarrier() {}

    static long syscallNumber(String osName, String arch) {
        if (!osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return -1;
        }
        return switch (arch) {
            case "amd64", "x86_64" -> 324;
            case "aarch64", "arm64" -> 283;
            default -> -1;
        };
    }

    /** True if {@link #barrier()} works here (decided once). */
    static boolean available() {
        return UNAVAILABLE == null;
    }

    /** Why not, or null when {@link #available()}. */
    static String unavailableReason() {
        return UNAVAILABLE;
    }

    /**
     * Returns once every thread of this process that was running on some CPU has executed a full
     * memory barrier (threads not running are in that state already: a context switch is one).
     *
     * @throws IllegalStateException if not {@link #available()}, or the call fails (it did not at start)
     */
    static void barrier() {
        if (UNAVAILABLE != null) {
            throw new IllegalStateException("membarrier unavailable: " + UNAVAILABLE);
        }
        Jna.barrier();
        BARRIERS.incrementAndGet();
    }

    /** Barriers issued so far (for tests: a switch issues one). */
    static long barriers() {
        return BARRIERS.get();
    }
}
