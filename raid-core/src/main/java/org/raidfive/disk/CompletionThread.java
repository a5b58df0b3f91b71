package org.raidfive.disk;

/**
 * A thread that completes member I/O and must never wait for a member's submission: the reader of
 * a pipelined connection ({@link AsyncDisk#pipelinesOnConnection}), which alone frees the
 * connection's request slots and drains its replies. Code that may run in a completion callback
 * asks {@link #isCurrent()} before it submits member I/O that could wait.
 */
public final class CompletionThread extends Thread {
    /** A daemon thread named {@code name} that runs {@code task}. */
    public CompletionThread(Runnable task, String name) {
        super(task, name);
        setDaemon(true);
    }

    /** True on a completion thread: the caller must hand waiting work to {@link IoThreads#runContinuation}. */
    public static boolean isCurrent() {
        return Thread.currentThread() instanceof CompletionThread;
    }
}
