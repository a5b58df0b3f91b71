package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jctools.queues.MpmcArrayQueue;
import org.raidfive.counter.Backoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asynchronous I/O over any {@link MemberDisk} (a {@link org.raidfive.array.Raid5Array} included): callers queue
 * requests and go on; a fixed set of worker threads run them against the disk's blocking calls and
 * report each one to its {@link Completion} on the worker. This is how one thread keeps more than
 * one I/O in flight (fio's iodepth).
 *
 * <p>Design. {@code capacity} request objects are made up front and cycle between two bounded
 * JCTools {@link MpmcArrayQueue}s: {@code free} and {@code pending}. A submit takes a free request,
 * fills it and offers it to {@code pending}; a worker polls it, runs the I/O, returns the request to
 * {@code free} and then calls the completion. Nothing is allocated per request in steady state.
 * {@code capacity} is therefore the bound on requests in flight over all submitters; a submit that
 * finds no free request waits (spin, yield, then timed parks) until one is returned. A
 * {@link Submitter} adds a bound per submitter: at most {@code maxInFlight} of its requests are
 * queued or running at once.
 *
 * <p>Idle workers spin briefly, then park. A worker announces that it is going to sleep (its
 * {@code sleeping} flag, then {@code sleepers}, both with full fences) and re-checks {@code pending}
 * before it parks; a submitter offers to {@code pending} (a CAS, a full fence) and then reads
 * {@code sleepers}. Of the two, at least one sees the other's write, so a request is never left in
 * the queue with every worker asleep.
 *
 * <p>Ordering. Everything the submitter wrote before the submit (the buffer to write, say)
 * happens-before the I/O; the I/O's effects (a read's bytes in the buffer) happen-before the
 * completion, both through the queues' release/acquire hand-offs. Completions of different
 * requests may run concurrently on different workers and in any order.
 *
 * <p>Depth. A disk with completion-based I/O of its own ({@link AsyncDisk}: files, NBD members,
 * a {@link org.raidfive.array.Raid5Array} over them) gets each request straight from the submitting thread, and its
 * completion arrives from the disk's I/O: no worker is held while the request is in flight, so
 * {@code capacity} requests are really in flight at once, whatever the number of workers. Disks
 * that complete inline (memory) or have only blocking calls are run by the workers, as before.
 *
 * <p>Futures. {@link #read}, {@link #write} and {@link #flush} return a {@link CompletableFuture}
 * on the same path (one future per request; the callback API allocates nothing), with the same
 * backpressure: a call waits while {@code capacity} requests are in flight, and
 * {@link #awaitDrained} waits for those in flight to finish.
 *
 * <p>Closing. {@link #close()} refuses new submits, waits until every accepted request has run and
 * its completion has returned, then stops the workers. It does not close the disk. A completion
 * may submit again (chaining) until close begins; after that, submit throws.
 */
public final class AsyncIo implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AsyncIo.class);
    /** An idle worker spins this many times for new work before it parks until woken. */
    private static final int WORKER_SPINS = 200;
    /** A drain (close, a timeout's wait) parks with sleeps doubling up to this. */
    private static final long DRAIN_MAX_PARK_NANOS = 1_000_000;

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(60);

    /** Receives the outcome of one request, on the worker thread that ran it. */
    public interface Completion<A> {
        /** Every byte moved. */
        void completed(A attachment);

        /** The request failed; {@code error} wraps runtime exceptions of the disk too. */
        void failed(A attachment, IOException error);
    }

    private final MemberDisk disk;
    /** The disk's own completion-based I/O, or null when the workers run its blocking calls. */
    private final AsyncDisk async;

    private final MpmcArrayQueue<Request> free;
    private final MpmcArrayQueue<Request> pending;
    private final Worker[] workers;
    private final AtomicInteger sleepers = new AtomicInteger();
    /** Accepted and not yet through their completion; close waits for zero. */
    private final AtomicInteger accepted = new AtomicInteger();

    private volatile boolean closed;
    private volatile boolean stopping;

    /**
     * @param disk     where the I/O goes; not closed by {@link #close()}
     * @param workers  threads running requests (at least 1)
     * @param capacity requests in flight at most, over all submitters (at least 1)
     */
    public AsyncIo(MemberDisk disk, int workers, int capacity) {
        this.disk = Objects.requireNonNull(disk, "disk");
        this.async = disk instanceof AsyncDisk a && !a.completesInline() ? a : null;
        if (workers < 1) {
            throw new IllegalArgumentException("AsyncIo needs at least one worker thread, got " + workers);
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("AsyncIo capacity must be at least 1 request, got " + capacity);
        }
        // JCTools rounds capacities up to a power of two; the free list holds exactly 'capacity' requests.
        this.free = new MpmcArrayQueue<>(Math.max(2, capacity));
        this.pending = new MpmcArrayQueue<>(Math.max(2, capacity));
        for (int i = 0; i < capacity; i++) {
            free.offer(new Request());
        }
        this.workers = new Worker[workers];
        for (int i = 0; i < workers; i++) {
            this.workers[i] = new Worker("asyncio-" + disk.name() + "-" + i);
        }
        for (Worker w : this.workers) {
            w.start();
        }
    }

    /** The disk requests go to. */
    public MemberDisk disk() {
        return disk;
    }

    /** Requests accepted and not yet through their completion. */
    public int inFlight() {
        return accepted.get();
    }

    /**
     * Queues a read of {@code length} bytes at {@code offset} into {@code buffer[bufferOffset..)}.
     * The buffer belongs to the request until its completion runs. Waits while {@code capacity}
     * requests are in flight.
     *
     * @throws IllegalStateException once {@link #close()} has begun
     * @throws InterruptedException  if interrupted while waiting for a free request
     */
    public <A> void submitRead(
            long offset,
            ByteBuffer buffer,
            int bufferOffset,
            int length,
            Completion<? super A> completion,
            A attachment)
            throws InterruptedException {
        submit(READ, offset, buffer, bufferOffset, length, completion, attachment, null);
    }

    /** Queues a write of {@code buffer[bufferOffset, bufferOffset+length)} at {@code offset}; as {@link #submitRead}. */
    public <A> void submitWrite(
            long offset,
            ByteBuffer buffer,
            int bufferOffset,
            int length,
            Completion<? super A> completion,
            A attachment)
            throws InterruptedException {
        submit(WRITE, offset, buffer, bufferOffset, length, completion, attachment, null);
    }

    /** A submitting handle that keeps at most {@code maxInFlight} of its own requests in flight. */
    public Submitter submitter(int maxInFlight) {
        return new Submitter(maxInFlight);
    }

    /**
     * Queues a flush of the disk ({@link MemberDisk#flush()}): when it completes, every write that
     * completed before this submit is durable. As {@link #submitRead} otherwise.
     */
    public <A> void submitFlush(Completion<? super A> completion, A attachment) throws InterruptedException {
        submit(FLUSH, 0, null, 0, 0, completion, attachment, null);
    }

    // ------------------------------------------------------------------ futures

    /**
     * Reads {@code length} bytes at {@code offset} into {@code buffer[bufferOffset..)}; the future
     * completes when every byte is there, or exceptionally with the {@link IOException}
     * ({@link java.io.EOFException} for a range beyond the disk). Waits while {@code capacity}
     * requests are in flight (backpressure). The future completes on an I/O thread: stages added
     * with the non-{@code Async} methods run there, so keep them short or use the {@code Async} ones.
     *
     * @throws IllegalStateException once {@link #close()} has begun
     * @throws InterruptedException  if interrupted while waiting for room
     */
    public CompletableFuture<Void> read(long offset, ByteBuffer buffer, int bufferOffset, int length)
            throws InterruptedException {
        CompletableFuture<Void> f = new CompletableFuture<>();
        submit(READ, offset, buffer, bufferOffset, length, FUTURE, f, null);
        return f;
    }

    /** Writes {@code buffer[bufferOffset, bufferOffset+length)} at {@code offset}; as {@link #read}. */
    public CompletableFuture<Void> write(long offset, ByteBuffer buffer, int bufferOffset, int length)
            throws InterruptedException {
        CompletableFuture<Void> f = new CompletableFuture<>();
        submit(WRITE, offset, buffer, bufferOffset, length, FUTURE, f, null);
        return f;
    }

    /** Flushes the disk; as {@link #submitFlush}, with a future. */
    public CompletableFuture<Void> flush() throws InterruptedException {
        CompletableFuture<Void> f = new CompletableFuture<>();
        submit(FLUSH, 0, null, 0, 0, FUTURE, f, null);
        return f;
    }

    /**
     * Waits until no request is in flight (every accepted one has completed and its completion has
     * returned), without refusing new ones as {@link #close()} does.
     *
     * @return true when drained, false if requests were still in flight at the timeout
     */
    public boolean awaitDrained(Duration timeout) throws InterruptedException {
        return awaitZero(accepted, timeout, "AsyncIo over " + disk.name());
    }

    /** Parks with a growing backoff until {@code count} is zero; false at the timeout. */
    private static boolean awaitZero(AtomicInteger count, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long park = 1_000;
        while (count.get() > 0) {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for " + what + " to drain");
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            LockSupport.parkNanos(Math.min(left, park));
            park = Math.min(DRAIN_MAX_PARK_NANOS, park << 1);
        }
        return true;
    }

    /** Completes the request's future (its attachment). */
    private static final Completion<CompletableFuture<Void>> FUTURE = new Completion<>() {
        @Override
        public void completed(CompletableFuture<Void> f) {
            f.complete(null);
        }

        @Override
        public void failed(CompletableFuture<Void> f, IOException error) {
            f.completeExceptionally(error);
        }
    };

    private static final int READ = 0;
    private static final int WRITE = 1;
    private static final int FLUSH = 2;

    private void submit(
            int op,
            long offset,
            ByteBuffer buffer,
            int bufferOffset,
            int length,
            Completion<?> completion,
            Object attachment,
            Submitter owner)
            throws InterruptedException {
        Objects.requireNonNull(completion, "completion");
        if (op != FLUSH) {
            Objects.requireNonNull(buffer, "buffer");
            if (bufferOffset < 0 || length < 0 || bufferOffset > buffer.limit() - length) {
                throw new IndexOutOfBoundsException("buffer range [" + bufferOffset + ", " + bufferOffset + " + "
                        + length + ") outside a buffer of limit " + buffer.limit());
            }
            if (op == READ && buffer.isReadOnly()) {
                throw new ReadOnlyBufferException();
            }
        }
        accepted.incrementAndGet();
        if (closed) {
            completedOne();
            throw new IllegalStateException("AsyncIo over " + disk.name() + " is closed");
        }
        Request r;
        try {
            r = takeFree();
        } catch (InterruptedException e) {
            completedOne();
            throw e;
        }
        r.op = op;
        r.offset = offset;
        r.buffer = buffer;
        r.bufferOffset = bufferOffset;
        r.length = length;
        r.completion = completion;
        r.attachment = attachment;
        r.owner = owner;
        if (async != null) {
            if (op == WRITE) {
                async.writeAsync(offset, buffer, bufferOffset, length, r, 0);
            } else if (op == READ) {
                async.readAsync(offset, buffer, bufferOffset, length, r, 0);
            } else {
                async.flushAsync(r, 0);
            }
            return;
        }
        // 'pending' holds at most 'capacity' requests (there are no more), so the offer succeeds.
        while (!pending.offer(r)) {
            Thread.onSpinWait();
        }
        if (sleepers.get() > 0) {
            wakeOne();
        }
    }

    private Request takeFree() throws InterruptedException {
        Request r = free.poll();
        for (int attempt = 0; r == null; attempt++) {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for a free AsyncIo request");
            }
            Backoff.idle(attempt, this);
            r = free.poll();
        }
        return r;
    }

    private void wakeOne() {
        for (Worker w : workers) {
            if (w.sleeping.get() && w.sleeping.compareAndSet(true, false)) {
                LockSupport.unpark(w);
                return;
            }
        }
    }

    private void completedOne() {
        accepted.decrementAndGet();
    }

    /** Runs one request on the calling worker. */
    private void execute(Request r) {
        IOException error = null;
        try {
            if (r.op == WRITE) {
                disk.write(r.offset, r.buffer, r.bufferOffset, r.length);
            } else if (r.op == READ) {
                disk.read(r.offset, r.buffer, r.bufferOffset, r.length);
            } else {
                disk.flush();
            }
        } catch (IOException e) {
            error = e;
        } catch (RuntimeException e) {
            String message = e.getMessage();
            // The engine's own refusals already name the disk, the operation and the range: say them once.
            error = new IOException(
                    message != null && message.startsWith(disk.name() + ": ")
                            ? message
                            : disk.name() + ": " + (r.op == WRITE ? "write" : r.op == READ ? "read" : "flush")
                                    + " at offset " + r.offset + " length " + r.length + " failed: " + message,
                    e);
        }
        finish(r, error);
    }

    /** The end of a request, on whichever thread ran or completed it. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void finish(Request r, IOException error) {
        Completion completion = r.completion;
        Object attachment = r.attachment;
        Submitter owner = r.owner;
        r.buffer = null;
        r.completion = null;
        r.attachment = null;
        r.owner = null;
        // Give the request and the submitter's slot back before the completion, so that a
        // completion may submit the next request (chaining) without exceeding either bound.
        free.offer(r);
        if (owner != null) {
            owner.release();
        }
        try {
            if (error == null) {
                completion.completed(attachment);
            } else {
                completion.failed(attachment, error);
            }
        } catch (RuntimeException | Error e) {
            LOG.warn("AsyncIo over {}: a completion threw {}", disk.name(), e.toString());
        } finally {
            completedOne();
        }
    }

    /**
     * Refuses new submits, waits until every accepted request has completed (completions returned),
     * then stops the workers. Idempotent; the disk stays open.
     */
    @Override
    public void close() throws IOException {
        closed = true;
        long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
        boolean interrupted = false;
        long park = 1_000;
        while (accepted.get() > 0) {
            if (System.nanoTime() > deadline) {
                throw new IOException("AsyncIo over " + disk.name() + ": " + accepted.get()
                        + " requests did not complete within " + CLOSE_TIMEOUT);
            }
            LockSupport.parkNanos(this, park);
            park = Math.min(DRAIN_MAX_PARK_NANOS, park << 1);
            interrupted |= Thread.interrupted();
        }
        stopping = true;
        for (Worker w : workers) {
            LockSupport.unpark(w);
        }
        for (Worker w : workers) {
            while (w.isAlive()) {
                try {
                    w.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "AsyncIo over " + disk.name() + " (" + workers.length + " workers)";
    }

    /** One request; recycled through {@code free}. Fields are handed over by the queues' release/acquire. */
    private final class Request implements IoCallback {
        int op;
        long offset;
        ByteBuffer buffer;
        int bufferOffset;
        int length;
        Completion<?> completion;
        Object attachment;
        Submitter owner;

        /** The disk's completion-based I/O ended (direct path). */
        @Override
        public void ioDone(int tag, IOException error) {
            finish(this, error);
        }
    }

    private final class Worker extends Thread {
        final AtomicBoolean sleeping = new AtomicBoolean();

        Worker(String name) {
            super(name);
            setDaemon(true);
        }

        @Override
        public void run() {
            int idle = 0;
            while (true) {
                Request r = pending.poll();
                if (r != null) {
                    execute(r);
                    idle = 0;
                    continue;
                }
                if (stopping) {
                    return;
                }
                if (idle < WORKER_SPINS) {
                    idle++;
                    Thread.onSpinWait();
                    continue;
                }
                sleeping.set(true);
                sleepers.incrementAndGet();
                if (pending.isEmpty() && !stopping) {
                    LockSupport.park(AsyncIo.this);
                }
                sleeping.set(false);
                sleepers.decrementAndGet();
                idle = 0;
            }
        }
    }

    /**
     * Submits on behalf of one caller with its own bound: a submit waits while {@code maxInFlight}
     * of this submitter's requests are queued or running. Safe from any thread (a completion may
     * submit the next request). A request's slot is given back before its completion runs.
     */
    public final class Submitter {
        private final int maxInFlight;
        private final AtomicInteger inFlight = new AtomicInteger();

        private Submitter(int maxInFlight) {
            if (maxInFlight < 1) {
                throw new IllegalArgumentException("a submitter needs maxInFlight of at least 1, got " + maxInFlight);
            }
            this.maxInFlight = maxInFlight;
        }

        /** The most requests of this submitter in flight at once. */
        public int maxInFlight() {
            return maxInFlight;
        }

        /** This submitter's requests queued or running. */
        public int inFlight() {
            return inFlight.get();
        }

        /** {@link AsyncIo#submitRead} within this submitter's bound: waits while {@code maxInFlight} of its requests are in flight. */
        public <A> void submitRead(
                long offset,
                ByteBuffer buffer,
                int bufferOffset,
                int length,
                Completion<? super A> completion,
                A attachment)
                throws InterruptedException {
            submitOwned(READ, offset, buffer, bufferOffset, length, completion, attachment);
        }

        /** {@link AsyncIo#submitWrite} within this submitter's bound. */
        public <A> void submitWrite(
                long offset,
                ByteBuffer buffer,
                int bufferOffset,
                int length,
                Completion<? super A> completion,
                A attachment)
                throws InterruptedException {
            submitOwned(WRITE, offset, buffer, bufferOffset, length, completion, attachment);
        }

        /** {@link AsyncIo#read} within this submitter's bound. */
        public CompletableFuture<Void> read(long offset, ByteBuffer buffer, int bufferOffset, int length)
                throws InterruptedException {
            CompletableFuture<Void> f = new CompletableFuture<>();
            submitOwned(READ, offset, buffer, bufferOffset, length, FUTURE, f);
            return f;
        }

        /** {@link AsyncIo#write} within this submitter's bound. */
        public CompletableFuture<Void> write(long offset, ByteBuffer buffer, int bufferOffset, int length)
                throws InterruptedException {
            CompletableFuture<Void> f = new CompletableFuture<>();
            submitOwned(WRITE, offset, buffer, bufferOffset, length, FUTURE, f);
            return f;
        }

        /** {@link AsyncIo#flush} within this submitter's bound. */
        public CompletableFuture<Void> flush() throws InterruptedException {
            CompletableFuture<Void> f = new CompletableFuture<>();
            submitOwned(FLUSH, 0, null, 0, 0, FUTURE, f);
            return f;
        }

        /**
         * Waits until none of this submitter's requests is in flight; false on timeout. A request's
         * slot is given back just before its completion runs (so that it may submit the next one):
         * to wait for the completions too, use {@link AsyncIo#awaitDrained}.
         */
        public boolean awaitDrained(Duration timeout) throws InterruptedException {
            return awaitZero(inFlight, timeout, "a submitter of AsyncIo over " + disk.name());
        }

        private void submitOwned(
                int op,
                long offset,
                ByteBuffer buffer,
                int bufferOffset,
                int length,
                Completion<?> completion,
                Object attachment)
                throws InterruptedException {
            acquire();
            boolean queued = false;
            try {
                submit(op, offset, buffer, bufferOffset, length, completion, attachment, this);
                queued = true;
            } finally {
                if (!queued) {
                    release();
                }
            }
        }

        private void acquire() throws InterruptedException {
            for (int attempt = 0; ; attempt++) {
                int n = inFlight.get();
                if (n < maxInFlight && inFlight.compareAndSet(n, n + 1)) {
                    return;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for an AsyncIo submitter slot");
                }
                Backoff.idle(attempt, this);
            }
        }

        private void release() {
            inFlight.decrementAndGet();
        }
    }
}
