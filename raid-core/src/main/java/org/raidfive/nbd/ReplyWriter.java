package org.raidfive.nbd;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.util.concurrent.locks.LockSupport;
import org.jctools.queues.MpscArrayQueue;

/**
 * Sends the replies of one connection, whole and never interleaved, batching those that complete
 * together into one gathering write.
 *
 * <p>Design (flat combining, no writer thread): a finished request is offered to an MPSC queue,
 * then its thread tries to become the writer by CAS on {@code writing}. The winner drains the
 * queue with gathering writes until it is empty, releases the flag and re-checks the queue. A
 * loser leaves at once: its reply is already queued, and the winner's re-check after releasing
 * the flag sees it, because each side does a volatile write then a volatile read of the other's
 * variable (queue producer index vs. flag), so at least one of them observes the other.
 *
 * <p>Deferred mode ({@link RequestExecution#CONNECTION_THREAD}): only the connection's reader
 * submits, {@link #submit} just queues, and the reader calls {@link #flush()} before it would
 * block, so a burst of requests is answered with one gathering write.
 *
 * <p>Writer-thread mode ({@link RequestExecution#WORKER_POOL}): a worker must never block on one
 * client's socket (a client that stops reading would then hold the worker, and with it every
 * other client's requests), so a worker only queues and wakes the connection's own writer thread,
 * which makes the gathering writes and is the only thread that can block on this socket. While
 * it is blocked the connection's requests stay in flight, its reader runs out of free requests and
 * budget and stops reading: the client that does not read slows only itself. {@link #stalledSince}
 * lets the server close a connection whose replies have not moved for its reply timeout.
 *
 * <p>The queue cannot overflow: it holds at most the connection's in-flight requests.
 */
final class ReplyWriter {
    private static final VarHandle WRITING;

    static {
        try {
            WRITING = MethodHandles.lookup().findVarHandle(ReplyWriter.class, "writing", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ServerConnection connection;
    private final MpscArrayQueue<ServerRequest> queue;
    /** Touched only by the thread holding {@code writing}. */
    private final ByteBuffer[] gather;

    private final ServerRequest[] batch;

    @SuppressWarnings("unused") // through WRITING
    private volatile int writing;

    private volatile boolean broken;
    private final boolean deferred;
    /** The connection's writer thread, in writer-thread mode; null otherwise. */
    private volatile Thread writerThread;
    /** The writer thread is parked (or about to park) and must be woken for new replies. */
    private volatile boolean writerParked;

    private volatile boolean stopped;
    /** When the write in progress started (System.nanoTime), 0 when no write is in progress. */
    private volatile long writingSince;

    private volatile GatheringByteChannel channel;

    ReplyWriter(ServerConnection connection, GatheringByteChannel channel, int maxInFlight, boolean deferred) {
        this.connection = connection;
        this.deferred = deferred;
        this.channel = channel;
        this.queue = new MpscArrayQueue<>(Math.max(2, maxInFlight));
        this.gather = new ByteBuffer[2 * maxInFlight];
        this.batch = new ServerRequest[maxInFlight];
    }

    /** Where replies go from now on (after STARTTLS: the TLS channel). Only while nothing is in flight. */
    void channel(GatheringByteChannel replacement) {
        this.channel = replacement;
    }

    /**
     * Writer-thread mode: starts the connection's writer, the only thread that writes replies from
     * now on. Workers then never block on this client's socket.
     */
    void startWriterThread(String name) {
        Thread t = new Thread(this::writerLoop, name);
        t.setDaemon(true);
        writerThread = t;
        t.start();
    }

    /** Stops the writer thread after it has written what is queued (or the socket broke). */
    void stopWriterThread() {
        Thread t = writerThread;
        if (t == null) {
            return;
        }
        stopped = true;
        LockSupport.unpark(t);
        try {
            t.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Queues the reply of a finished request; unless deferred, writes it (and others) on the calling thread. */
    void submit(ServerRequest request) {
        while (!queue.offer(request)) {
            Thread.onSpinWait(); // unreachable while in-flight <= capacity; kept for safety
        }
        Thread writer = writerThread;
        if (writer != null) {
            // Volatile write (queue) then volatile read (flag); the writer writes the flag then
            // re-reads the queue before parking: one of the two sees the other.
            if (writerParked) {
                LockSupport.unpark(writer);
            }
        } else if (!deferred) {
            flush();
        }
    }

    private void writerLoop() {
        while (true) {
            flush();
            if (stopped && queue.isEmpty()) {
                return;
            }
            writerParked = true;
            if (queue.isEmpty() && !stopped) {
                LockSupport.parkNanos(this, 100_000_000L);
            }
            writerParked = false;
        }
    }

    /** When the write in progress started (System.nanoTime), or 0 when replies are not stuck in a write. */
    long stalledSince() {
        return writingSince;
    }

    /** Writes every queued reply, unless another thread is already doing so. */
    void flush() {
        while (!queue.isEmpty() && WRITING.compareAndSet(this, 0, 1)) {
            try {
                drainQueue();
            } finally {
                WRITING.setVolatile(this, 0);
            }
        }
    }

    boolean broken() {
        return broken;
    }

    private void drainQueue() {
        while (true) {
            int count = 0;
            int buffers = 0;
            ServerRequest request;
            while (count < batch.length && (request = queue.poll()) != null) {
                batch[count++] = request;
                buffers += request.prepareReply(gather, buffers);
            }
            if (count == 0) {
                return;
            }
            if (!broken) {
                try {
                    writeFully(buffers);
                } catch (IOException e) {
                    broken = true;
                    connection.replyFailed(e);
                }
            }
            for (int i = 0; i < count; i++) {
                connection.release(batch[i]);
                batch[i] = null;
            }
            for (int i = 0; i < buffers; i++) {
                gather[i] = null;
            }
        }
    }

    private void writeFully(int buffers) throws IOException {
        int first = 0;
        GatheringByteChannel out = channel;
        writingSince = System.nanoTime() | 1; // never 0 while writing
        try {
            writeGather(out, buffers, first);
        } finally {
            writingSince = 0;
        }
    }

    private void writeGather(GatheringByteChannel out, int buffers, int first) throws IOException {
        while (first < buffers) {
            out.write(gather, first, buffers - first);
            while (first < buffers && !gather[first].hasRemaining()) {
                first++;
            }
        }
    }
}
