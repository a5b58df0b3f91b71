package org.raidfive.disk;

import java.util.Locale;

/**
 * How completion-based I/O of file and block-device members ({@link FileDisk}) reaches the kernel,
 * chosen once per process, on first use, and logged:
 *
 * <ol>
 *   <li>{@link #IO_URING}: one io_uring (netty's transport) with one event-loop thread. A stripe
 *       phase's I/Os are queued and reach the kernel in one {@code io_uring_enter}; completions come
 *       back in batches on the loop thread, which runs their callbacks, so an I/O that a completion
 *       starts (the next request of a queue, the next phase) costs no thread hand-off at all.
 *   <li>{@link #IO_THREADS}: the blocking pread/pwrite on a pool of threads as large as the I/O in
 *       flight ({@link IoThreads}): one hand-off per I/O. Taken where io_uring is refused (Docker's
 *       default seccomp profile, {@code kernel.io_uring_disabled}, a kernel without it, a CPU netty
 *       ships no native library for, a class path without netty's io_uring transport).
 * </ol>
 *
 * <p>Linux AIO is not in the chain: it is asynchronous only for O_DIRECT, and where io_uring is
 * refused by policy the same policy usually covers it.
 *
 * <p>The system property {@value #PROPERTY} pins one: {@code io_uring}, {@code threads}, or
 * {@code auto} (the default: io_uring where it works). Pinned to io_uring where it cannot run,
 * opening a file member fails with the reason instead of quietly running on threads.
 *
 * <p>Either way, buffers that O_DIRECT cannot take as they are (heap buffers, unaligned addresses)
 * and I/O beyond the ring's capacity in flight run on the I/O threads, with the same results.
 */
public enum IoBackend {
    /** io_uring through netty's transport; see the class comment. */
    IO_URING("io_uring"),
    /** Blocking calls on {@link IoThreads}. */
    IO_THREADS("threads");

    /** The system property that pins the backend: {@code io_uring}, {@code threads} or {@code auto}. */
    public static final String PROPERTY = "raidfive.io.backend";

    private final String key;

    IoBackend(String key) {
        this.key = key;
    }

    /** The backend this process uses for file members (chooses it on the first call). */
    public static IoBackend active() {
        return RingChoice.RING != null ? IO_URING : IO_THREADS;
    }

    /** One line on the choice, as logged: the backend and, for the threads, why io_uring is not used. */
    public static String describe() {
        return RingChoice.CHOICE;
    }

    /** The pinned backend, or null for {@code auto}; unknown values are refused. */
    static IoBackend pinned() {
        String value = System.getProperty(PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
        for (IoBackend b : values()) {
            if (b.key.equals(value)) {
                return b;
            }
        }
        if (value.isEmpty() || value.equals("auto")) {
            return null;
        }
        throw new IllegalArgumentException(
                PROPERTY + "=" + value + " is not a member I/O backend: use io_uring, threads or auto");
    }
}
