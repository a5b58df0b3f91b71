package org.raidfive.disk;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A member stored in a regular file or a block device, through {@link FileChannel} positional I/O
 * (pread/pwrite: no shared file position, so concurrent calls are safe).
 *
 * <p>With {@code direct} the file is opened with O_DIRECT: offsets and lengths must be multiples
 * of {@link #DIRECT_ALIGNMENT}. Heap buffers and direct buffers whose address at the offset is not
 * aligned are copied through a per-thread aligned bounce buffer. (The JDK 17 bounce for heap
 * buffers under O_DIRECT frees a sliced buffer and fails with a NullPointerException, so heap
 * buffers must never reach the channel in this mode.)
 *
 * <p>Only regular files and block devices are members: a FIFO, socket, character device or
 * directory is refused when opened (it would block or lie about its size). A regular file is
 * checked before every write: one that shrank under the disk (truncated by someone else) fails
 * the write rather than being grown back with a hole that would read as zeros; a read past its
 * new end fails too ({@link EOFException}).
 *
 * <p>Ownership ({@link #claim}): an OS lock on the file ({@link FileChannel#tryLock}, exclusive or
 * shared), which the kernel drops when the process dies, plus this process's table of open files
 * ({@link OpenFiles}), which also keeps one descriptor per file and mode so that closing a second
 * open of a claimed file cannot drop the first one's lock. A block device is known by its device
 * number, and an exclusive claim of one also holds the kernel's exclusive claim ({@code O_EXCL}, as
 * md and mkfs take it), which no other node of the same device gets past.
 *
 * <p>Completion-based I/O ({@link AsyncDisk}) goes to the process's io_uring where
 * {@link IoBackend} chose it: through a plain descriptor of the file that lives exactly as long as
 * the channel (opened without {@code O_TRUNC}, checked to be the same file). Buffers the ring cannot
 * take (heap buffers, and under O_DIRECT unaligned addresses), zero-length or refused requests (their
 * error is the blocking call's) and I/O beyond the ring's capacity run the blocking calls on
 * {@link IoThreads}. Closing waits for this disk's ring I/O in flight and their callbacks.
 */
public final class FileDisk implements AsyncDisk {
    /** Offsets, lengths and buffer addresses of O_DIRECT I/O are multiples of this. */
    public static final int DIRECT_ALIGNMENT = 4096;

    private final Path path;
    private final OpenFiles.Entry entry;
    private final FileChannel channel;
    /** Grows only, in {@link #refreshSize}; every range check reads it once. */
    private volatile long size;

    private final boolean direct;
    private final boolean readOnly;
    private final boolean regular;
    private final ThreadLocal<ByteBuffer> bounce;
    private volatile boolean closed;
    /** The process's io_uring, or null when this disk's completion-based I/O runs on {@link IoThreads}. */
    private final RingIo ring;
    /** The descriptor ring I/O uses, or -1. */
    private final int ringFd;
    /** Ring I/Os of this disk submitted and not yet completed; close waits for zero. */
    private final AtomicInteger ringInFlight = new AtomicInteger();

    // include/uapi/asm-generic/fcntl.h, x86_64 (io_uring is used on x86_64 only)
    private static final int O_RDONLY = 0;
    private static final int O_RDWR = 2;
    private static final int O_DIRECT = 040000;
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private FileDisk(Path path, OpenFiles.Opened opened, long size, boolean direct, boolean readOnly, boolean regular)
            throws IOException {
        RingChoice.checkPinned();
        this.readOnly = readOnly;
        this.path = path;
        this.entry = opened.entry();
        this.channel = opened.channel();
        this.size = size;
        this.direct = direct;
        this.regular = regular;
        this.bounce = direct ? ThreadLocal.withInitial(() -> AlignedBuffers.allocate(1 << 20)) : null;
        RingIo shared = RingChoice.RING;
        int fd = shared == null
                ? -1
                : entry.descriptor(mode(direct, readOnly), readOnly ? O_RDONLY : direct ? O_RDWR | O_DIRECT : O_RDWR);
        this.ring = fd >= 0 ? shared : null;
        this.ringFd = fd;
    }

    /** Opens an existing file or block device for reading and writing. */
    public static FileDisk open(Path path) throws IOException {
        return open(path, false);
    }

    /** Opens an existing file or block device read-write, with O_DIRECT when {@code direct}. */
    public static FileDisk open(Path path, boolean direct) throws IOException {
        boolean regular = checkStorage(path);
        return opened(path, OpenFiles.open(path, mode(direct, false), options(direct, false)), direct, false, regular);
    }

    /** Opens an existing file or block device for reading only: every write fails, nothing is changed. */
    public static FileDisk openReadOnly(Path path) throws IOException {
        boolean regular = checkStorage(path);
        return opened(path, OpenFiles.open(path, "ro", StandardOpenOption.READ), false, true, regular);
    }

    private static FileDisk opened(Path path, OpenFiles.Opened o, boolean direct, boolean readOnly, boolean regular)
            throws IOException {
        try {
            return new FileDisk(path, o, sizeOf(path, o.channel()), direct, readOnly, regular);
        } catch (IOException | RuntimeException e) {
            o.entry().release();
            throw e;
        }
    }

    /**
     * Opens {@code path}, creating it as a sparse file of {@code size} bytes when absent and
     * extending (sparsely) a smaller regular file. A larger file keeps its size.
     */
    public static FileDisk createOrExtend(Path path, long size, boolean direct) throws IOException {
        if (size < 0) {
            throw new IllegalArgumentException("file disk size must not be negative: " + size);
        }
        RingChoice.checkPinned(); // before the file is made or extended: a refused open writes nothing
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS) || !Files.exists(path)) {
            try {
                Files.createFile(path);
            } catch (FileAlreadyExistsException raced) {
                // made meanwhile: open it as it is
            }
        }
        boolean regular = checkStorage(path);
        OpenFiles.Opened o = OpenFiles.open(path, mode(direct, false), options(direct, false));
        try {
            long current = sizeOf(path, o.channel());
            if (current < size && regular) {
                // Writing one zero byte at the new end extends the file without allocating the gap;
                // O_DIRECT cannot write one byte, so that goes through this process's plain channel.
                OpenFiles.Opened plain = direct ? OpenFiles.open(path, mode(false, false), options(false, false)) : o;
                try {
                    plain.channel().write(ByteBuffer.allocate(1), size - 1);
                } finally {
                    if (plain != o) {
                        plain.entry().release();
                    }
                }
                current = size;
            }
            return new FileDisk(path, o, current, direct, false, regular);
        } catch (IOException | RuntimeException e) {
            o.entry().release();
            throw e;
        }
    }

    /**
     * Refuses what is not a regular file or a block device, before anything opens it (opening or
     * reading a FIFO can block forever); true for a regular file.
     */
    static boolean checkStorage(Path path) throws IOException {
        FileKind kind = FileKind.of(path);
        switch (kind) {
            case REGULAR_FILE:
                return true;
            case BLOCK_DEVICE:
            case UNKNOWN: // no unix view: the OS cannot tell us more, treat it as a device
                return false;
            case DIRECTORY:
                throw new FileSystemException(path.toString(), null, "is a directory, not a file or block device");
            default:
                throw new FileSystemException(
                        path.toString(),
                        null,
                        "is " + kind.description() + ", not a file or block device: it cannot be a member");
        }
    }

    private static String mode(boolean direct, boolean readOnly) {
        return readOnly ? "ro" : direct ? "rw-direct" : "rw";
    }

    private static OpenOption[] options(boolean direct, boolean create) {
        List<OpenOption> options = new ArrayList<>(4);
        options.add(StandardOpenOption.READ);
        options.add(StandardOpenOption.WRITE);
        if (create) {
            options.add(StandardOpenOption.CREATE);
        }
        if (direct) {
            options.add(ExtendedOpenOption.DIRECT);
        }
        return options.toArray(new OpenOption[0]);
    }

    private static long sizeOf(Path path, FileChannel channel) throws IOException {
        long size = channel.size();
        if (size == 0 && !Files.isRegularFile(path)) {
            // A block device: fstat reports 0, so ask sysfs (size in 512-byte sectors).
            Path real = path.toRealPath();
            Path sys = Path.of("/sys/class/block", real.getFileName().toString(), "size");
            if (Files.exists(sys)) {
                size = Long.parseLong(Files.readString(sys).trim()) * 512L;
            } else {
                size = channel.position(Long.MAX_VALUE).position();
            }
        }
        return size;
    }

    /**
     * Who holds the file or block device at {@code path}, without taking or disturbing any lock:
     * an array of this process, or another process holding a lock on it (from {@code /proc/locks},
     * with its pid and command line); null when nobody does, or it cannot be told.
     */
    public static String holderOf(Path path) {
        try {
            String here = OpenFiles.holderInProcess(path);
            if (here != null) {
                return here + " in this process";
            }
        } catch (IOException e) {
            return null;
        }
        LockHolders.Holder other = LockHolders.find(path);
        return other == null
                ? null
                : other.pid() == ProcessHandle.current().pid() ? null : "another process (" + other + ")";
    }

    /**
     * The pid of another process holding a lock on the file or block device at {@code path}
     * (from {@code /proc/locks}), or -1 when none does or it cannot be told.
     */
    public static long holderPid(Path path) {
        LockHolders.Holder other = LockHolders.find(path);
        return other == null || other.pid() == ProcessHandle.current().pid() ? -1 : other.pid();
    }

    /** The file. */
    public Path path() {
        return path;
    }

    /** True when opened read-only (writes fail). */
    public boolean isReadOnly() {
        return readOnly;
    }

    /** True when opened with O_DIRECT. */
    public boolean isDirect() {
        return direct;
    }

    /** {@link #DIRECT_ALIGNMENT} under O_DIRECT, else 512. */
    @Override
    public int logicalBlockSize() {
        return direct ? DIRECT_ALIGNMENT : 512;
    }

    @Override
    public long size() {
        return size;
    }

    /** Asks the file system (or, for a block device, sysfs) for the size now; takes it when larger. */
    @Override
    public synchronized long refreshSize() throws IOException {
        checkOpen();
        long now = sizeOf(path, channel);
        if (now > size) {
            size = now;
        }
        return size;
    }

    /**
     * Claims the file for {@code holder}: refused when another array holds it, in this process or
     * another (an exclusive claim needs a disk opened for writing).
     */
    @Override
    public DiskClaim claim(ClaimMode mode, String holder) throws IOException {
        checkOpen();
        return entry.claim(channel, name(), mode, holder, !readOnly);
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        DiskRanges.check(this, size, position, length);
        checkOpen();
        if (direct) {
            checkDirectAlignment(position, length);
            if (needsBounce(dst, dstOffset)) {
                ByteBuffer b = bounceBuffer(length);
                transfer(position, b, 0, length, false);
                dst.put(dstOffset, b, 0, length);
                return;
            }
        }
        transfer(position, dst, dstOffset, length, false);
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        if (readOnly) {
            throw new IOException(name() + ": opened read-only; refusing to write " + length + " bytes at " + position);
        }
        long size = this.size;
        DiskRanges.check(this, size, position, length);
        checkOpen();
        if (regular) {
            long now = channel.size();
            if (now < size) {
                throw new IOException(name() + ": the file shrank to " + now + " bytes under the disk (it had " + size
                        + "); refusing to write, which would grow it back with a hole that reads as zeros");
            }
        }
        if (direct) {
            checkDirectAlignment(position, length);
            if (needsBounce(src, srcOffset)) {
                ByteBuffer b = bounceBuffer(length);
                b.put(0, src, srcOffset, length);
                transfer(position, b, 0, length, true);
                return;
            }
        }
        transfer(position, src, srcOffset, length, true);
    }

    /** Moves exactly {@code length} bytes, looping over short transfers; restores position and limit. */
    private void transfer(long position, ByteBuffer buffer, int offset, int length, boolean write) throws IOException {
        int savedPosition = buffer.position();
        int savedLimit = buffer.limit();
        try {
            buffer.limit(offset + length).position(offset);
            long at = position;
            while (buffer.hasRemaining()) {
                int n = write ? channel.write(buffer, at) : channel.read(buffer, at);
                if (n < 0) {
                    throw endOfFile(at, position, length);
                }
                at += n;
            }
        } finally {
            buffer.limit(savedLimit).position(savedPosition);
        }
    }

    /** A read of {@code length} bytes at {@code position} found the end of the file at {@code at}. */
    EOFException endOfFile(long at, long position, int length) {
        return new EOFException(name() + ": end of file at offset " + at + " while reading " + length + " bytes at "
                + position + " (the file is shorter than the " + size + " bytes it had when opened)");
    }

    private void checkDirectAlignment(long position, int length) {
        if ((position | length) % DIRECT_ALIGNMENT != 0) {
            throw new IllegalArgumentException(name() + ": O_DIRECT I/O needs offset and length aligned to "
                    + DIRECT_ALIGNMENT + " bytes, got offset " + position + " length " + length);
        }
    }

    private static boolean needsBounce(ByteBuffer buffer, int offset) {
        return !buffer.isDirect() || buffer.alignmentOffset(offset, DIRECT_ALIGNMENT) != 0;
    }

    private ByteBuffer bounceBuffer(int length) {
        ByteBuffer b = bounce.get();
        if (b.capacity() < length) {
            b = AlignedBuffers.allocate(length);
            bounce.set(b);
        }
        return b;
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public void flush() throws IOException {
        checkOpen();
        if (readOnly) {
            return;
        }
        channel.force(false);
    }

    @Override
    public String name() {
        return path.toString();
    }

    /** Closes this disk; the file's descriptor closes when this process's last user of the file is gone. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        awaitRingIo();
        entry.release();
    }

    /**
     * Waits for this disk's ring I/O in flight: the descriptor must not close (and its number be
     * reused) under a request not yet submitted to the kernel. Not on the ring's own thread, which
     * is the one that would complete them.
     */
    private void awaitRingIo() {
        if (ring == null || ring.onLoopThread()) {
            return;
        }
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        while (ringInFlight.get() > 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(100_000);
        }
    }

    /** A ring I/O of this disk ended and its callback returned (called by {@link RingIo}). */
    void ringIoEnded() {
        ringInFlight.decrementAndGet();
    }

    @Override
    public String toString() {
        return "file " + path + " (" + size + " bytes" + (direct ? ", O_DIRECT" : "") + ")";
    }

    // Completion-based I/O: on the io_uring when there is one and it can take the request, else the
    // blocking pread/pwrite on the shared I/O threads, as many at once as are in flight.

    @Override
    public void readAsync(long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
        if (ring != null
                && !dst.isReadOnly()
                && ringTakes(position, dst, dstOffset, length)
                && toRing(RingIo.OP_READ, position, dst, dstOffset, length, callback, tag)) {
            return;
        }
        IoThreads.SHARED.submit(this, IoThreads.Op.READ, position, dst, dstOffset, length, callback, tag);
    }

    @Override
    public void writeAsync(long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
        if (ring != null
                && !readOnly
                && ringTakes(position, src, srcOffset, length)
                && !shrank()
                && toRing(RingIo.OP_WRITE, position, src, srcOffset, length, callback, tag)) {
            return;
        }
        IoThreads.SHARED.submit(this, IoThreads.Op.WRITE, position, src, srcOffset, length, callback, tag);
    }

    @Override
    public void flushAsync(IoCallback callback, int tag) {
        if (ring != null && !readOnly && !closed && toRing(RingIo.OP_FSYNC, 0, null, 0, 0, callback, tag)) {
            return;
        }
        IoThreads.SHARED.submit(this, IoThreads.Op.FLUSH, 0, null, 0, 0, callback, tag);
    }

    /**
     * True when the ring can run this transfer exactly as the blocking call would: open, inside the
     * disk, not empty, inside the buffer's capacity, a direct buffer, and under O_DIRECT aligned. The
     * kernel writes a read's bytes at the buffer's address, so the bounds are checked here, not by
     * the buffer. Anything else goes to the blocking call, which refuses it with its own error.
     */
    private boolean ringTakes(long position, ByteBuffer buffer, int offset, int length) {
        return !closed
                && length > 0
                && position >= 0
                && position <= size - length
                && offset >= 0
                && offset <= buffer.capacity() - length
                && buffer.isDirect()
                && (!direct || ((position | length) % DIRECT_ALIGNMENT == 0 && !needsBounce(buffer, offset)));
    }

    /** As the blocking write's check: a regular file smaller than the disk's size (the write then refuses). */
    private boolean shrank() {
        if (!regular) {
            return false;
        }
        try {
            return channel.size() < size;
        } catch (IOException e) {
            return true; // the blocking call reports it
        }
    }

    private boolean toRing(
            byte op, long position, ByteBuffer buffer, int offset, int length, IoCallback callback, int tag) {
        ringInFlight.incrementAndGet();
        if (ring.submit(this, ringFd, op, position, buffer, offset, length, callback, tag)) {
            return true;
        }
        ringInFlight.decrementAndGet(); // every request in flight: this one runs on the I/O threads
        return false;
    }

    @Override
    public boolean bufferedByPageCache() {
        return !direct;
    }

    @Override
    public boolean batchesOnRing() {
        return ring != null;
    }

    /** Always: on the ring, an I/O completes on its loop thread, which then wakes the waiter. */
    @Override
    public boolean handsOffLocalIo() {
        return true;
    }
}
