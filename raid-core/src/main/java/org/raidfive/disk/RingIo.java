package org.raidfive.disk;

import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoEvent;
import io.netty.channel.uring.IoUringIoHandle;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringIoHandlerConfig;
import io.netty.channel.uring.IoUringIoOps;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jctools.queues.MpmcArrayQueue;
import org.jctools.queues.MpscArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * File and block-device member I/O through one io_uring ({@link IoBackend#IO_URING}): netty's
 * {@link IoUringIoHandler} on one event-loop thread, with raw read, write and fdatasync operations on
 * the members' descriptors.
 *
 * <p>Submitting. A request is one of {@link #CAPACITY} pooled objects, named in the ring by its
 * index (the 16-bit user data netty passes back). On the loop thread (a completion starting the next
 * I/O) it goes into the submission queue at once; from any other thread it goes on an MPSC queue, and
 * the first request queued since the loop last drained it schedules one drain task. The SQEs reach
 * the kernel when the loop next enters the ring, together: the I/Os of a stripe phase, and anything
 * else queued meanwhile, cost one {@code io_uring_enter} and at most one wake-up of the loop.
 *
 * <p>Completing. Completions are reaped in batches on the loop thread. A short transfer is
 * continued from where it stopped; a read that finds the end of the file fails with
 * {@link java.io.EOFException}, a negative result with an {@link IOException} naming the member, the
 * operation and errno. Only that request fails: the others of the batch complete as they do. The
 * request goes back to the pool before its callback runs, so the callback may submit again.
 * Callbacks run on the loop thread and must not block (see {@link IoCallback}): while one blocks,
 * no member I/O of this process completes.
 *
 * <p>Buffers. The ring reads and writes the buffer's memory by address, so the request keeps the
 * buffer reachable until it completes; only direct buffers come here (callers send others to
 * {@link IoThreads}).
 */
final class RingIo {
    private static final Logger LOG = LoggerFactory.getLogger(RingIo.class);

    /** Requests in flight at most; beyond them, callers run their I/O on {@link IoThreads}. */
    static final int CAPACITY = 2048;
    /** Submission queue entries: a full queue is submitted to make room (netty does this). */
    private static final int RING_SIZE = 256;
    /** Completion queue entries: more than {@link #CAPACITY}, so completions never overflow. */
    private static final int CQ_SIZE = 4096;

    // include/uapi/linux/io_uring.h
    static final byte OP_FSYNC = 3;
    static final byte OP_READ = 22;
    static final byte OP_WRITE = 23;
    private static final int FSYNC_DATASYNC = 1;

    /** Why io_uring cannot run in this process, or null when it can. */
    static String unavailable() {
        if (!IoUring.isAvailable()) {
            Throwable cause = IoUring.unavailabilityCause();
            return "io_uring is unavailable: " + (cause == null ? "unknown cause" : cause.getMessage());
        }
        if (!PlatformDependent.hasUnsafe()) {
            return "netty cannot read direct buffer addresses here";
        }
        return null;
    }

    /** The version of netty's transport, for the log line. */
    static String nettyVersion() {
        return IoUringIoHandler.class.getPackage().getImplementationVersion();
    }

    /** One I/O; recycled through {@code free}, named in the ring by {@code id}. */
    private static final class Request {
        final short id;
        /** The SQE description {@link #enqueue} fills in place. */
        final IoUringIoOps sqe;

        FileDisk disk;
        int fd;
        byte op;
        long position;
        /** Kept reachable while the kernel uses its memory. */
        ByteBuffer buffer;

        long address;
        int length;
        /** Bytes moved so far (a short transfer continues from here). */
        int done;

        IoCallback callback;
        int tag;

        Request(short id) {
            this.id = id;
            this.sqe = Sqe.create(id);
        }
    }

    private final Request[] requests = new Request[CAPACITY];
    private final MpmcArrayQueue<Request> free = new MpmcArrayQueue<>(CAPACITY);
    private final MpscArrayQueue<Request> incoming = new MpscArrayQueue<>(CAPACITY);
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drain = this::drainIncoming;
    /** Drain tasks run, for the allocation test: written on the loop thread only. */
    private long drains;

    private final IoEventLoop loop;
    private final IoRegistration registration;

    /** Sets up the ring and its loop thread; throws where io_uring cannot run. */
    RingIo() {
        for (int i = 0; i < CAPACITY; i++) {
            requests[i] = new Request((short) i);
            free.offer(requests[i]);
        }
        IoUringIoHandlerConfig config =
                new IoUringIoHandlerConfig().setRingSize(RING_SIZE).setCqSize(CQ_SIZE);
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(
                1, new DefaultThreadFactory("member-io-uring", true), IoUringIoHandler.newFactory(config));
        this.loop = (IoEventLoop) group.next();
        this.registration = loop.register(new Handle()).syncUninterruptibly().getNow();
    }

    /**
     * Starts {@code op} on descriptor {@code fd} of {@code disk}: {@code length} bytes at
     * {@code position} to or from the direct {@code buffer} at {@code offset} (nothing for a flush).
     * False, having done nothing, when every request is in flight.
     */
    boolean submit(
            FileDisk disk,
            int fd,
            byte op,
            long position,
            ByteBuffer buffer,
            int offset,
            int length,
            IoCallback callback,
            int tag) {
        Request r = free.relaxedPoll();
        if (r == null) {
            return false;
        }
        r.disk = disk;
        r.fd = fd;
        r.op = op;
        r.position = position;
        r.buffer = buffer;
        r.address = buffer == null ? 0 : PlatformDependent.directBufferAddress(buffer) + offset;
        r.length = length;
        r.done = 0;
        r.callback = callback;
        r.tag = tag;
        if (loop.inEventLoop()) {
            enqueue(r);
            return true;
        }
        // Always fits: there are no more requests than the queue holds.
        while (!incoming.offer(r)) {
            Thread.onSpinWait();
        }
        // One drain task per batch: the loop clears the flag before it drains, so a request queued
        // after that either is drained by it or finds the flag clear and schedules the next.
        if (!drainScheduled.get() && !drainScheduled.getAndSet(true)) {
            loop.execute(drain);
        }
        return true;
    }

    private void drainIncoming() {
        drainScheduled.set(false);
        drains++;
        Request r;
        while ((r = incoming.relaxedPoll()) != null) {
            enqueue(r);
        }
    }

    /** Puts the request's (remaining) transfer into the submission queue; on the loop thread. */
    private void enqueue(Request r) {
        IoUringIoOps ops = r.op == OP_FSYNC
                ? Sqe.fill(r, OP_FSYNC, 0L, 0L, 0, FSYNC_DATASYNC)
                : Sqe.fill(r, r.op, r.position + r.done, r.address + r.done, r.length - r.done, 0);
        if (registration.submit(ops) == 0) { // netty's INVALID_ID: the registration is cancelled
            finish(
                    r,
                    new IOException(r.disk.name() + ": " + opName(r.op) + " at offset " + r.position
                            + " could not be queued: the io_uring is shut down"));
        }
    }

    /**
     * One reusable SQE description per request, so that a submission allocates nothing. netty's
     * {@link IoUringIoOps} is immutable, and a new one per I/O is scalar-replaced only when C2 happens
     * to inline netty's whole submit path (it did not under JFR: 72 bytes per I/O). Its fields are
     * written in place instead, which is safe because the registration copies them into the SQE
     * before {@code submit} returns when called on the loop thread (netty 4.2.18's
     * {@code submitFastPath0}/{@code submitSlowPath0}), the only thread {@link #enqueue} runs on, and
     * because HotSpot does not fold final instance fields of ordinary classes. Where the fields
     * cannot be found (another netty), each I/O gets a new object as before.
     */
    static final class Sqe {
        private static final sun.misc.Unsafe UNSAFE;
        private static final long OPCODE;
        private static final long FD;
        private static final long UNION1;
        private static final long UNION2;
        private static final long LEN;
        private static final long UNION3;

        static {
            sun.misc.Unsafe unsafe = null;
            long[] at = new long[6];
            try {
                java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                unsafe = (sun.misc.Unsafe) f.get(null);
                String[] names = {"opcode", "fd", "union1", "union2", "len", "union3"};
                Class<?>[] types = {byte.class, int.class, long.class, long.class, int.class, int.class};
                for (int i = 0; i < names.length; i++) {
                    java.lang.reflect.Field field = IoUringIoOps.class.getDeclaredField(names[i]);
                    if (field.getType() != types[i]) {
                        throw new NoSuchFieldException(names[i] + " is a " + field.getType());
                    }
                    at[i] = unsafe.objectFieldOffset(field);
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.debug("io_uring SQEs are allocated per I/O: {}", e.toString());
                unsafe = null;
            }
            UNSAFE = unsafe;
            OPCODE = at[0];
            FD = at[1];
            UNION1 = at[2];
            UNION2 = at[3];
            LEN = at[4];
            UNION3 = at[5];
        }

        private Sqe() {}

        /** Whether SQE descriptions are reused (else allocated per I/O). */
        static boolean reused() {
            return UNSAFE != null;
        }

        /** A request's own description, its user data fixed to the request's index. */
        static IoUringIoOps create(short id) {
            return new IoUringIoOps(OP_READ, (byte) 0, (short) 0, -1, 0L, 0L, 0, 0, id, (short) 0, (short) 0, 0, 0L);
        }

        /**
         * {@code r}'s description set to {@code op} on its descriptor: {@code offset} in the file,
         * memory at {@code address}, {@code len} bytes, {@code opFlags} (the fsync flags); or a new one.
         */
        static IoUringIoOps fill(Request r, byte op, long offset, long address, int len, int opFlags) {
            if (UNSAFE == null) {
                // netty's constructor: opcode, flags, ioPrio, fd, offset, address, len, op flags, user data, ...
                return new IoUringIoOps(
                        op, (byte) 0, (short) 0, r.fd, offset, address, len, opFlags, r.id, (short) 0, (short) 0, 0,
                        0L);
            }
            IoUringIoOps sqe = r.sqe;
            UNSAFE.putByte(sqe, OPCODE, op);
            UNSAFE.putInt(sqe, FD, r.fd);
            UNSAFE.putLong(sqe, UNION1, offset);
            UNSAFE.putLong(sqe, UNION2, address);
            UNSAFE.putInt(sqe, LEN, len);
            UNSAFE.putInt(sqe, UNION3, opFlags);
            return sqe;
        }
    }

    private void completed(int id, int res) {
        Request r = requests[id];
        if (res < 0) {
            finish(
                    r,
                    new IOException(r.disk.name() + ": " + opName(r.op) + " at offset " + r.position + " length "
                            + r.length + " failed: " + Errno.describe(-res)));
            return;
        }
        if (r.op == OP_FSYNC) {
            finish(r, null);
            return;
        }
        if (res == 0) {
            finish(
                    r,
                    r.op == OP_READ
                            ? r.disk.endOfFile(r.position + r.done, r.position, r.length)
                            : new IOException(
                                    r.disk.name() + ": write at offset " + (r.position + r.done) + " moved no bytes"));
            return;
        }
        r.done += res;
        if (r.done < r.length) {
            enqueue(r); // a short transfer: go on from where it stopped
            return;
        }
        finish(r, null);
    }

    private void finish(Request r, IOException error) {
        IoCallback callback = r.callback;
        int tag = r.tag;
        FileDisk disk = r.disk;
        r.callback = null;
        r.buffer = null;
        r.disk = null;
        free.offer(r); // before the callback, which may submit the next I/O
        try {
            callback.ioDone(tag, error);
        } catch (RuntimeException e) {
            LOG.warn("{}: an I/O callback threw {}", disk.name(), e.toString());
        } finally {
            disk.ringIoEnded(); // after the callback: a close returns once every callback has
        }
    }

    /**
     * Drain tasks run so far: each is one wake-up of the loop for I/O submitted from outside it.
     * Exact once a completion of every I/O counted has been seen by the caller.
     */
    long drains() {
        return drains;
    }

    /** True on the thread that runs completions (where a wait for ring I/O would never end). */
    boolean onLoopThread() {
        return loop.inEventLoop();
    }

    private static String opName(byte op) {
        return op == OP_READ ? "read" : op == OP_WRITE ? "write" : "flush";
    }

    /** Receives this ring's completions on the loop thread. */
    private final class Handle implements IoUringIoHandle {
        @Override
        public void handle(IoRegistration registration, IoEvent event) {
            IoUringIoEvent e = (IoUringIoEvent) event;
            completed(e.data() & 0xffff, e.res());
        }

        @Override
        public void close() {
            // the ring lives as long as the process
        }
    }

    /** Names for the errors a member I/O can end with. */
    static final class Errno {
        private Errno() {}

        static String describe(int errno) {
            String name = switch (errno) {
                case 1 -> "EPERM";
                case 5 -> "EIO, an I/O error";
                case 6 -> "ENXIO, no such device";
                case 9 -> "EBADF";
                case 11 -> "EAGAIN";
                case 12 -> "ENOMEM";
                case 14 -> "EFAULT";
                case 22 -> "EINVAL";
                case 27 -> "EFBIG, file too large";
                case 28 -> "ENOSPC, no space left on device";
                case 30 -> "EROFS, read-only file system";
                case 61 -> "ENODATA";
                case 95 -> "EOPNOTSUPP";
                case 122 -> "EDQUOT, disk quota exceeded";
                case 125 -> "ECANCELED";
                default -> null;
            };
            return "errno " + errno + (name == null ? "" : " (" + name + ")");
        }
    }
}
