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
import org.raidfive.disk.MemberDisk;

/**
 * An array changing its shape while it serves I/O, as md's arrays do under {@code mdadm --grow}:
 * made by {@link Raid5Array#reshape} (or {@link #resume} for a reshape the members record), it is
 * the array as a {@link MemberDisk} (reads and writes mapped at the reshape's position, md's
 * mapping: below it the new geometry, above it the old; see {@link OfflineReshape#read} and {@link
 * OfflineReshape#write}), while a thread of its own moves the data at the spec's speed limits,
 * yielding to the I/O served as md's reshape does, in batches of at most 512 KiB per member (a
 * write waits for one batch at most). Its size is md's: the old size while a grow runs,
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
    /**
     * Per member per batch, as {@code raid serve} moves them mid-reshape: a write waits for at most
     * one batch (the reshape's own default is 4 MiB, for a reshape that serves no I/O).
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

    private OnlineReshape(OfflineReshape reshape, List<MemberDisk> disks) {
        this.reshape = reshape;
        this.served = reshape.reader();
        this.disks = List.copyOf(disks);
        this.position = reshape.position();
        reshape.setBatchMemberBytes(BATCH_MEMBER_BYTES);
    }

    /** {@link Raid5Array#reshape}: the array's members, closed to it, in slot order. */
    static OnlineReshape start(List<MemberDisk> members, ReshapeSpec spec) throws IOException {
        OfflineReshape started = spec.start(members);
        List<MemberDisk> all = new ArrayList<>(members);
        all.addAll(spec.added());
        OnlineReshape online = new OnlineReshape(started, all);
        online.start(spec.syncLimits(), p -> {});
        return online;
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
            mover = new Thread(() -> move(progress), "raid-reshape-" + reshape.name());
            mover.setDaemon(true);
            mover.start();
        }
    }

    private void move(LongConsumer progress) {
        try {
            completion.complete(reshape.run(stop::get, p -> {
                position = p;
                progress.accept(p);
            }));
        } catch (IOException | RuntimeException e) {
            completion.completeExceptionally(e);
        } finally {
            position = reshape.position();
        }
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
     * it closes the disks). A shrink's freed members come back as its spares.
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
        return Raid5Array.assemble(disks);
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
        served.read(position, dst, dstOffset, length);
    }

    /** Refused (IOException) where {@link OfflineReshape#whyNoWrites} says. */
    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        checkOpen();
        served.write(position, src, srcOffset, length);
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
