package org.raidfive.nbd;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
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
    private final GatheringByteChannel channel;
    private final MpscArrayQueue<ServerRequest> queue;
    /** Touched only by the thread holding {@code writing}. */
    private final ByteBuffer[] gather;
    private final ServerRequest[] batch;
    @SuppressWarnings("unused") // through WRITING
    private volatile int writing;
    private volatile boolean broken;
    private final boolean deferred;

    ReplyWriter(ServerConnection connection, GatheringByteChannel channel, int maxInFlight, boolean deferred) {
        this.connection = connection;
        this.deferred = deferred;
        this.channel = channel;
        this.queue = new MpscArrayQueue<>(Math.max(2, maxInFlight));
        this.gather = new ByteBuffer[2 * maxInFlight];
        this.batch = new ServerRequest[maxInFlight];
    }

    /** Queues the reply of a finished request; unless deferred, writes it (and others) on the calling thread. */
    void submit(ServerRequest request) {
        while (!queue.offer(request)) {
            Thread.onSpinWait(); // unreachable while in-flight <= capacity; kept for safety
        }
        if (!deferred) {
            flush();
        }
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
        while (first < buffers) {
            channel.write(gather, first, buffers - first);
            while (first < buffers && !gather[first].hasRemaining()) {
                first++;
            }
        }
    }
}
