package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import org.raidfive.counter.ThreadStats;
import org.raidfive.disk.MemberDisk;

/**
 * An array changing its shape while it serves I/O, as md's arrays do under {@code mdadm --grow}:
 * made by {@link Raid5Array#reshape} (or {@link #resume} for a reshape the members record), it is
 * the array as a {@link MemberDisk} (reads and writes mapped at the reshape's position, md's
 * mapping: below it the new geometry, above it the old; see {@link OfflineReshape#read} and {@link
 * OfflineReshape#write}), while a thread of its own moves the data at the spec's speed limits,
 * yielding to the I/O served as md's reshape does, in batches of at most 512 KiB per member (a
 * write into the batch being moved waits for it, at most one batch; one elsewhere does not wait). Its size is md's: the old size while a grow runs,
 * the new one from its end.
 *
 * <p>{@link #completion()} ends true when the reshape is done; {@link #finish()} then gives back a
 * {@link Raid5Array} of the new shape on the same disks. {@link #close()} before the end stops the
 * reshape at its next batch with the position checkpointed on every member, marks them clean and
 * closes the disks: {@link #resume}, {@code raid grow --continue}, {@code raid serve} or Linux md
 * carry it on. A crash at any point loses nothing (see {@link OfflineReshape}). {@link #paused} opens
 * a recorded reshape to serve it before its data moves ({@link #start}); {@link #readOnly}, to read
 * the array at its position without moving or writing anything.
 */
public final class OnlineReshape implements MemberDisk {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(OnlineReshape.class);
    /**
     * Per member per batch, as {@code raid serve} moves them mid-reshape: a write into the batch
     * waits for at most one batch (the reshape's own default is 4 MiB, for a reshape that serves no I/O).
     */
    static final int BATCH_MEMBER_BYTES = 512 << 10;

    private final OfflineReshape reshape;
    /** The reshape's own view of the array ({@link OfflineReshape#reader}): what this serves until it ends. */
    private final MemberDisk served;
    /** Every disk of the array (members, the disks added, the members a shrink frees), closed by {@link #close}. */
    private final List<MemberDisk> disks;

    private final AtomicBoolean stop = new AtomicBoolean();
    private final CompletableFuture<Boolean> completion = new CompletableFuture<>();

    private final Object lock = new Object();
    /** The reshape's thread once {@link #start}ed (under {@link #lock}); null before, and always when read-only. */
    private Thread mover;
    /** Set when the disks are handed on ({@link #finish}) or closed; set under {@link #lock}, read without it. */
    private volatile boolean ended;

    private volatile long position;

    /** The reshape's events: PASS_STARTED, PASS_PROGRESS, PASS_FINISHED, MEMBER_FAILED, DEGRADED. */
    private final ArrayEvents events;
    /** Where the served reads and writes are counted while {@link #publishCounters} publishes, else null. */
    volatile ThreadStats ioStats;
    /** Under {@link #lock}; null until {@link #publishCounters}. */
    private ReshapeCounters counters;

    /** When {@link #start} ran ({@link System#nanoTime}) and the position then; for the rate. */
    private volatile long startNanos;

    private volatile long startPosition;
    /** The mover's own: the last 20% step told, and whether a missing member was told. */
    private int stepTold;

    private boolean missingTold;

    private OnlineReshape(OfflineReshape reshape, List<MemberDisk> disks) {
        this.reshape = reshape;
        this.served = reshape.reader();
        this.disks = List.copyOf(disks);
        this.position = reshape.position();
        this.events = new ArrayEvents(reshape.name());
        reshape.setBatchMemberBytes(BATCH_MEMBER_BYTES);
    }

    /**
     * {@link Raid5Array#reshape}: the array's members, closed to it, in slot order; the reshape's
     * start recorded on them, paused until the array has handed over its listeners and counters.
     */
    static OnlineReshape begin(List<MemberDisk> members, ReshapeSpec spec) throws IOException {
        OfflineReshape started = spec.start(members);
        List<MemberDisk> all = new ArrayList<>(members);
        all.addAll(spec.added());
        return new OnlineReshape(started, all);
    }

    /**
     * Continues online the reshape that {@code disks} (every member of the array, any order) record,
     * raidfive's or Linux md's, as md continues it when it assembles the array.
     */
    public static OnlineReshape resume(List<? extends MemberDisk> disks, SyncLimits limits) throws IOException {
        OnlineReshape online = paused(disks);
        online.start(limits, p -> {});
        return online;
    }

    /**
     * The reshape that {@code disks} (every member of the array, any order) record, opened as {@link
     * #resume} opens it, serving reads and writes at its recorded position, but with the data not
     * moving until {@link #start}: for a caller that has more to set up first (an export, say) and
     * closes it unstarted if that fails.
     */
    public static OnlineReshape paused(List<? extends MemberDisk> disks) throws IOException {
        return new OnlineReshape(OfflineReshape.resume(disks), new ArrayList<>(disks));
    }

    /**
     * The reshape that {@code disks} record, opened to read the array at its recorded position
     * without writing anything (see {@link OfflineReshape#readOnly}): it cannot {@link #start},
     * writes are refused, and {@link #completion} ends false when it is closed.
     */
    public static OnlineReshape readOnly(List<? extends MemberDisk> disks) throws IOException {
        return new OnlineReshape(OfflineReshape.readOnly(disks), new ArrayList<>(disks));
    }

    /**
     * Starts moving the data of a {@link #paused} reshape on a thread of its own at {@code limits},
     * {@code progress} hearing the position after each batch on that thread (it must not block;
     * {@link #state} tells the rest).
     *
     * @throws IOException when it is closed, already started, or opened {@link #readOnly}
     */
    public void start(SyncLimits limits, LongConsumer progress) throws IOException {
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(progress, "progress");
        synchronized (lock) {
            checkOpen();
            if (mover != null) {
                throw new IOException(reshape.name() + "'s reshape has started already");
            }
            if (reshape.readOnly()) {
                throw new IOException(reshape.name() + "'s reshape was opened read-only: it does not move");
            }
            reshape.setSyncLimits(limits);
            startPosition = reshape.position();
            startNanos = System.nanoTime();
            stepTold = step(startPosition);
            missingTold = reshape.missingMember() != null;
            mover = new Thread(() -> move(progress), "raid-reshape-" + reshape.name());
            mover.setDaemon(true);
            events.publish(ArrayEvent.Kind.PASS_STARTED, null, describe(), progress());
            mover.start();
        }
    }

    private void move(LongConsumer progress) {
        boolean done = false;
        Throwable failure = null;
        try {
            done = reshape.run(stop::get, p -> {
                position = p;
                tell(p);
                progress.accept(p);
            });
        } catch (IOException | RuntimeException e) {
            failure = e;
        } finally {
            position = reshape.position();
        }
        SyncProgress last = snapshot(false, failure == null ? null : failure.getMessage());
        events.publish(
                ArrayEvent.Kind.PASS_FINISHED,
                null,
                failure != null ? "failed: " + failure.getMessage() : done ? "done" : "stopped, position checkpointed",
                last);
        if (failure != null) {
            completion.completeExceptionally(failure);
        } else {
            completion.complete(done);
        }
    }

    /** The events a batch's end makes: a member left out, a 20% step passed. On the mover's thread. */
    private void tell(long at) {
        String missing = reshape.missingMember();
        if (!missingTold && missing != null) {
            missingTold = true;
            events.publish(
                    ArrayEvent.Kind.MEMBER_FAILED,
                    missing,
                    "failed during the reshape; it goes on without it, as md's does",
                    null);
            events.publish(ArrayEvent.Kind.DEGRADED, missing, null, null);
        }
        int step = step(at);
        while (stepTold < step) {
            stepTold += 20;
            events.publish(ArrayEvent.Kind.PASS_PROGRESS, null, null, progress(), stepTold);
        }
    }

    /** The 20% step (0, 20, 40, 60 or 80) the reshape has passed at {@code at}. */
    private int step(long at) {
        long total = reshape.sectorsTotal();
        return total == 0 ? 80 : (int) Math.min(80, 100 * reshape.sectorsDone(at) / total / 20 * 20);
    }

    private String describe() {
        return reshape.oldDisks() + " -> " + reshape.newDisks() + " members, chunk " + reshape.oldChunkBytes()
                + " -> " + reshape.newChunkBytes() + " bytes, layout "
                + reshape.oldAlgorithm().mdadmName() + " -> "
                + reshape.newAlgorithm().mdadmName();
    }

    /**
     * The reshape as a pass ({@link SyncAction#RESHAPE}), as {@link Raid5Array#syncProgress} gives
     * its own: member bytes per new data member (the array's bytes moved over the data members of the
     * new shape), the rate averaged since {@link #start}; not running before start and after the end.
     */
    public SyncProgress progress() {
        return snapshot(startNanos != 0 && !completion.isDone() && !ended, null);
    }

    private SyncProgress snapshot(boolean running, String error) {
        long at = position;
        int newData = reshape.newDisks() - 1;
        long done = reshape.sectorsDone(at) * 512 / newData;
        long total = reshape.sectorsTotal() * 512 / newData;
        long began = startNanos;
        long elapsed = began == 0 ? 0 : System.nanoTime() - began;
        long moved = (reshape.sectorsDone(at) - reshape.sectorsDone(startPosition)) * 512 / newData;
        double rate = elapsed <= 0 ? 0 : moved / (elapsed / 1e9);
        return new SyncProgress(
                SyncAction.RESHAPE, done, total, rate, 0, running, error, null, java.time.Duration.ofNanos(elapsed));
    }

    /**
     * Registers a listener for the reshape's events, delivered in order on a thread of its own: its
     * start, each 20% passed, its end (PASS_STARTED, PASS_PROGRESS, PASS_FINISHED, with {@link
     * SyncAction#RESHAPE}), and a member failing mid-way (MEMBER_FAILED, DEGRADED). {@link
     * Raid5Array#reshape} hands the array's listeners over to it, and {@link #finish} hands them on to
     * the new array.
     */
    public void addListener(ArrayListener listener) {
        events.add(listener);
    }

    /** Stops delivering events to {@code listener}. */
    public void removeListener(ArrayListener listener) {
        events.remove(listener);
    }

    /**
     * Publishes the reshaping array's live counters and events to a memory-mapped file at {@code
     * file}, as {@link Raid5Array#publishCounters} does for an array ({@code raid stat}, {@code raid
     * monitor}, {@code raid stop} read it): the reads and writes served, each member's I/O (the
     * reshape's and the served), the reshape's position, total and rate as the pass, {@code
     * RESHAPING} 1. {@link #close} and {@link #finish} end it ({@link #finish} publishes the new
     * array's at the same file).
     *
     * @throws IllegalStateException if it publishes already
     */
    public ReshapeCounters publishCounters(java.nio.file.Path file) throws IOException {
        synchronized (lock) {
            checkOpen();
            if (counters != null) {
                throw new IllegalStateException(name() + " already publishes its counters to " + counters.path());
            }
            counters = ReshapeCounters.start(this, reshape, file);
            return counters;
        }
    }

    ArrayEvents events() {
        return events;
    }

    /** The counters' file when published, else null; closes them. */
    private java.nio.file.Path closeCounters() {
        ReshapeCounters published;
        synchronized (lock) {
            published = counters;
            counters = null;
        }
        if (published == null) {
            return null;
        }
        published.close();
        return published.path();
    }

    /**
     * Ends true when the reshape is done, false when {@link #close} stopped it first; exceptionally
     * when it stopped on a failure (a second member failing): the members keep the last checkpoint.
     */
    public CompletableFuture<Boolean> completion() {
        return completion;
    }

    /** The reshape's position, in array sectors (md's {@code reshape_position}), after its last batch. */
    public long position() {
        return position;
    }

    /** Of the reshape's work, the fraction done at {@link #position}: 0 to 1. */
    public double fractionDone() {
        long total = reshape.sectorsTotal();
        return total == 0 ? 1 : (double) reshape.sectorsDone(position) / total;
    }

    /** The member the reshape runs without (one failed), or null. */
    public String missingMember() {
        return reshape.missingMember();
    }

    /** The reshape's shapes, position and state, read-only. */
    public ReshapeState state() {
        return reshape;
    }

    /** Changes the speed limits of the running reshape. */
    public void setSyncLimits(SyncLimits limits) {
        reshape.setSyncLimits(limits);
    }

    /**
     * Waits for the reshape's end, stops serving I/O (a call after this one fails), marks the members
     * clean and assembles the array of the new shape on the same disks: the caller owns it (closing
     * it closes the disks). A shrink's freed members come back as its spares. The reshape's listeners
     * are the new array's, and its live counters, if published, go on in the same file.
     *
     * @throws IOException when the reshape failed, was stopped by {@link #close}, or was never
     *     {@link #start}ed
     */
    public Raid5Array finish() throws IOException, InterruptedException {
        synchronized (lock) {
            if (mover == null) {
                throw new IOException(reshape.name() + "'s reshape was not started: it does not end");
            }
        }
        boolean done;
        try {
            done = completion.get();
        } catch (ExecutionException e) {
            throw new IOException(
                    reshape.name() + ": the reshape failed: " + e.getCause().getMessage(), e.getCause());
        }
        synchronized (lock) {
            if (ended || !done) {
                throw new IOException(reshape.name() + "'s reshape was closed before its end");
            }
            ended = true;
        }
        reshape.markClean();
        reshape.close();
        java.nio.file.Path published = closeCounters();
        events.close();
        Raid5Array next = Raid5Array.assemble(disks);
        for (ArrayListener l : events.listeners()) {
            next.addListener(l);
        }
        if (published != null) {
            try {
                next.publishCounters(published);
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: the reshaped array is not publishing live counters: {}", name(), e.getMessage());
            }
        }
        return next;
    }

    private void checkOpen() throws IOException {
        if (ended) {
            throw new IOException(reshape.name() + "'s reshape is closed");
        }
    }

    @Override
    public long size() {
        return served.size();
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        checkOpen();
        ThreadStats counted = ioStats;
        try {
            served.read(position, dst, dstOffset, length);
        } catch (IOException e) {
            countFailure(counted);
            throw e;
        }
        count(counted, IoStats.READS, IoStats.READ_BYTES, length);
    }

    /** Refused (IOException) where {@link OfflineReshape#whyNoWrites} says. */
    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        checkOpen();
        ThreadStats counted = ioStats;
        try {
            served.write(position, src, srcOffset, length);
        } catch (IOException e) {
            countFailure(counted);
            throw e;
        }
        count(counted, IoStats.WRITES, IoStats.WRITE_BYTES, length);
    }

    private static void count(ThreadStats counted, int ops, int bytes, int length) {
        if (counted != null) {
            long[] own = counted.mine();
            ThreadStats.add(own, ops, 1);
            ThreadStats.add(own, bytes, length);
        }
    }

    private static void countFailure(ThreadStats counted) {
        if (counted != null) {
            counted.add(IoStats.ERRORS, 1);
        }
    }

    @Override
    public void flush() throws IOException {
        checkOpen();
        served.flush();
    }

    @Override
    public String name() {
        return served.name();
    }

    /**
     * Stops the reshape at its next batch (the position checkpointed on every member) unless it has
     * ended, marks the members clean and closes the disks; idempotent, and nothing after {@link
     * #finish} (the disks are the new array's).
     */
    @Override
    public void close() throws IOException {
        Thread started;
        synchronized (lock) {
            if (ended) {
                return;
            }
            ended = true;
            started = mover;
        }
        stop.set(true);
        if (started == null) {
            completion.complete(false);
        } else {
            try {
                started.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException(reshape.name() + ": interrupted while stopping the reshape");
            }
        }
        IOException failure = null;
        try {
            if (!completion.isCompletedExceptionally() && reshape.whyNoWrites() == null) {
                reshape.markClean();
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            closeCounters();
            events.close();
            reshape.close();
            for (MemberDisk d : disks) {
                try {
                    d.close();
                } catch (IOException e) {
                    if (failure == null) {
                        failure = e;
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return reshape.name() + " reshaping at " + position;
    }
}
