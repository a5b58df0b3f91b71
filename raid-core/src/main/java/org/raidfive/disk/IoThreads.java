package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jctools.queues.MpmcArrayQueue;

/**
 * The threads that run blocking member calls (pread/pwrite on files, and any disk without
 * completion-based I/O of its own) for {@link AsyncDisk}: one process-wide pool that grows to the
 * number of I/Os in flight, up to {@link #MAX_THREADS}, so that a queue depth of 64 on a file is 64
 * preads in the kernel at once, whatever the number of cores. Idle threads park, and leave after
 * {@link #IDLE_NANOS}.
 *
 * <p>Allocation-free in steady state: each I/O is a pooled {@link Task} taken from a free list,
 * filled, and handed to a worker through a bounded MPMC queue (JCTools), as {@code AsyncIo} does.
 *
 * <p>Wake-up: a worker going to sleep sets its {@code parked} flag, puts itself on {@code sleepers}
 * (both full fences) and then polls once more before it parks; a submitter offers the task (a full
 * fence), then takes sleepers until it wins one's {@code parked} flag by CAS and unparks it. Of the
 * worker's last poll and the submitter's offer, one comes first: either the worker finds the task,
 * or the submitter finds the worker on {@code sleepers} (stale entries, of workers that woke by
 * themselves, lose the CAS and are skipped). When no worker is asleep the submitter starts a new
 * one, up to the cap: the pool is as large as the I/O in flight.
 */
public final class IoThreads {
    static final int MAX_THREADS = 256;
    static final int CAPACITY = 4096;
    private static final long IDLE_NANOS = 30_000_000_000L;
    private static final int SPINS = 16;
    static final IoThreads SHARED = new IoThreads("member-io");
    /** The pool of {@link #runContinuation}: apart from the blocking calls, so its threads are known by name. */
    static final IoThreads CONTINUATIONS = new IoThreads("member-continuation");

    /** What a queued call does on its member. */
    enum Op {
        READ,
        WRITE,
        FLUSH,
        /** Runs {@link Task#job}: blocking work a completion must not do on its own thread. */
        RUN
    }

    /** One blocking call, reused. */
    static final class Task {
        MemberDisk disk;
        Op op;
        long position;
        ByteBuffer buffer;
        int offset;
        int length;
        IoCallback callback;
        int tag;
        Runnable job;
    }

    private final String name;
    private final MpmcArrayQueue<Task> free = new MpmcArrayQueue<>(CAPACITY);
    private final MpmcArrayQueue<Task> pending = new MpmcArrayQueue<>(CAPACITY);
    private final AtomicInteger threads = new AtomicInteger();
    /** Tasks in their blocking call now: how much parallelism the pool already has. */
    private final AtomicInteger busy = new AtomicInteger();
    /**
     * {@link #saturated()} from this many blocking calls at once. Measured on 2 cores with O_DIRECT
     * files at a queue depth of 64 random writes (bench/real-members): handing every member I/O
     * off was CPU-bound (about 150k context switches a second, 77% CPU); handing none off left the
     * device waiting (42% CPU, four member I/Os in series per write); switching at about the depth
     * in flight did best (bench/NOTES.md).
     */
    static final int SATURATION = Math.max(16, 32 * Runtime.getRuntime().availableProcessors());
    /** Workers about to park or parked; may hold stale entries (see the class comment). */
    private final MpmcArrayQueue<Worker> sleepers = new MpmcArrayQueue<>(4 * MAX_THREADS);

    private static final class Worker {
        final Thread thread;
        final AtomicBoolean parked = new AtomicBoolean();

        Worker(Thread thread) {
            this.thread = thread;
        }
    }

    private final AtomicInteger ids = new AtomicInteger();

    private IoThreads(String name) {
        this.name = name;
    }

    /** Queues a blocking call; its callback runs on an I/O thread. */
    void submit(
            MemberDisk disk,
            Op op,
            long position,
            ByteBuffer buffer,
            int offset,
            int length,
            IoCallback callback,
            int tag) {
        Task t = free.relaxedPoll();
        if (t == null) {
            t = new Task(); // first use, or more in flight than ever before: the pool grows once
        }
        t.disk = disk;
        t.op = op;
        t.position = position;
        t.buffer = buffer;
        t.offset = offset;
        t.length = length;
        t.callback = callback;
        t.tag = tag;
        enqueue(t);
    }

    /** Queues a filled task and wakes (or starts) a worker for it. */
    private void enqueue(Task t) {
        while (!pending.offer(t)) {
            Thread.yield(); // more than CAPACITY in flight: wait for the workers
        }
        Thread current = Thread.currentThread();
        if (current instanceof IoThread io && io.pool == this && io.inCallback && !io.deferred) {
            // Submitted from a callback (a completion starting the next I/O): this worker polls the
            // queue as soon as the callback returns, so it takes the task itself, sparing a wake-up.
            io.deferred = true;
            return;
        }
        Worker w;
        while ((w = sleepers.poll()) != null) {
            if (w.parked.compareAndSet(true, false)) {
                LockSupport.unpark(w.thread);
                return;
            }
        }
        int n = threads.get();
        if (n < MAX_THREADS && threads.compareAndSet(n, n + 1)) {
            Thread thread = new IoThread(this, name + "-" + ids.incrementAndGet());
            thread.setDaemon(true);
            thread.start();
        }
    }

    private void work() {
        Worker me = new Worker(Thread.currentThread());
        long idleSince = System.nanoTime();
        try {
            while (true) {
                Task t = pending.relaxedPoll();
                for (int i = 0; t == null && i < SPINS; i++) {
                    Thread.onSpinWait();
                    t = pending.relaxedPoll();
                }
                if (t == null) {
                    me.parked.set(true);
                    if (!sleepers.offer(me)) {
                        me.parked.set(false);
                        Thread.yield();
                        continue;
                    }
                    t = pending.poll(); // after announcing: pairs with the submitter's offer-then-take
                    if (t == null) {
                        LockSupport.parkNanos(this, 1_000_000_000L);
                        t = pending.poll();
                    }
                    me.parked.set(false); // a submitter that still takes our entry skips it
                    if (t == null) {
                        if (System.nanoTime() - idleSince > IDLE_NANOS && pending.isEmpty()) {
                            return;
                        }
                        continue;
                    }
                }
                run(t);
                idleSince = System.nanoTime();
            }
        } finally {
            threads.decrementAndGet();
        }
    }

    /** A worker of a pool; {@code inCallback}/{@code deferred} are touched by itself only. */
    private static final class IoThread extends Thread {
        final IoThreads pool;
        boolean inCallback;
        boolean deferred;

        IoThread(IoThreads pool, String name) {
            super(name);
            this.pool = pool;
        }

        @Override
        public void run() {
            pool.work();
        }
    }

    /**
     * Runs {@code job} on one of the shared I/O threads: for a completion (on the io_uring's loop
     * thread) whose next step blocks, such as failing a member. {@code job} must catch its own
     * errors; nothing is allocated when callers reuse their job objects.
     */
    public static void runBlocking(Runnable job) {
        SHARED.runJob(job);
    }

    /**
     * Runs {@code job}, the next step of a stripe operation, on a thread of a pool of its own: for a
     * completion on a connection's reader thread ({@link AsyncDisk#pipelinesOnConnection}), which
     * must never wait, while the step may (for a request slot, for a socket to take a request). The
     * pool grows with the steps waiting at once; {@code job} must catch its own errors, and nothing
     * is allocated when callers reuse their job objects.
     */
    public static void runContinuation(Runnable job) {
        CONTINUATIONS.runJob(job);
    }

    private void runJob(Runnable job) {
        Task t = free.relaxedPoll();
        if (t == null) {
            t = new Task();
        }
        t.op = Op.RUN;
        t.job = job;
        enqueue(t);
    }

    private void run(Task t) {
        if (t.op == Op.RUN) {
            Runnable job = t.job;
            t.job = null;
            free.relaxedOffer(t);
            job.run();
            return;
        }
        MemberDisk disk = t.disk;
        IoCallback cb = t.callback;
        int tag = t.tag;
        IOException error = null;
        busy.incrementAndGet();
        try {
            switch (t.op) {
                case READ -> disk.read(t.position, t.buffer, t.offset, t.length);
                case WRITE -> disk.write(t.position, t.buffer, t.offset, t.length);
                case FLUSH -> disk.flush();
            }
        } catch (IOException e) {
            error = e;
        } catch (RuntimeException e) {
            error = new IOException(disk.name() + ": " + e, e);
        } finally {
            busy.decrementAndGet();
        }
        t.disk = null;
        t.buffer = null;
        t.callback = null;
        free.relaxedOffer(t);
        IoThread self = (IoThread) Thread.currentThread();
        self.inCallback = true;
        try {
            cb.ioDone(tag, error);
        } finally {
            self.inCallback = false;
            self.deferred = false;
        }
    }

    /**
     * True when at least {@link #SATURATION} blocking calls run on the shared pool at once. Then a
     * caller with several blocking calls to make gains nothing from handing them to other threads
     * (the device and the cores are kept busy by the calls already running) and only pays the
     * hand-offs: it makes them itself, one after another.
     */
    public static boolean saturated() {
        return SHARED.busy.get() >= SATURATION;
    }

    /** Blocking calls at once from which the pool counts as {@link #saturated()}. */
    public static int saturation() {
        return SATURATION;
    }

    /** Threads alive now (for tests and diagnostics). */
    int threadCount() {
        return threads.get();
    }
}
