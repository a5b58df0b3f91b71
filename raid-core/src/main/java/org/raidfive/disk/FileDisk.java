package org.raidfive.disk;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A member stored in a regular file or a block device, through {@link FileChannel} positional I/O
 * (pread/pwrite: no shared file position, so concurrent calls are safe).
 *
 * <p>With {@code direct} the file is opened with O_DIRECT: offsets and lengths must be multiples
 * of {@link #DIRECT_ALIGNMENT}. Heap buffers and direct buffers whose address at the offset is not
 * aligned are copied through a per-thread aligned bounce buffer. (The JDK 17 bounce for heap
 * buffers under O_DIRECT frees a sliced buffer and fails with a NullPointerException, so heap
 * buffers must never reach the channel in this mode.)
 */
public final class FileDisk implements MemberDisk {
    public static final int DIRECT_ALIGNMENT = 4096;

    private final Path path;
    private final FileChannel channel;
    private final long size;
    private final boolean direct;
    private final boolean readOnly;
    private final ThreadLocal<ByteBuffer> bounce;

    private FileDisk(Path path, FileChannel channel, long size, boolean direct) {
        this(path, channel, size, direct, false);
    }

    private FileDisk(Path path, FileChannel channel, long size, boolean direct, boolean readOnly) {
        this.readOnly = readOnly;
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.direct = direct;
        this.bounce = direct ? ThreadLocal.withInitial(() -> alignedBuffer(1 << 20)) : null;
    }

    /** Opens an existing file or block device for reading and writing. */
    public static FileDisk open(Path path) throws IOException {
        return open(path, false);
    }

    public static FileDisk open(Path path, boolean direct) throws IOException {
        if (!Files.exists(path)) {
            throw new java.nio.file.NoSuchFileException(path.toString(), null, "member file does not exist");
        }
        FileChannel channel = FileChannel.open(path, options(direct, false));
        try {
            return new FileDisk(path, channel, sizeOf(path, channel), direct);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Opens an existing file or block device for reading only: every write fails, nothing is changed. */
    public static FileDisk openReadOnly(Path path) throws IOException {
        if (!Files.exists(path)) {
            throw new java.nio.file.NoSuchFileException(path.toString(), null, "member file does not exist");
        }
        FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
        try {
            return new FileDisk(path, channel, sizeOf(path, channel), false, true);
        } catch (IOException | RuntimeException e) {
            channel.close();
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
        FileChannel channel = FileChannel.open(path, options(direct, true));
        try {
            long current = sizeOf(path, channel);
            if (current < size && Files.isRegularFile(path)) {
                // Writing one zero byte at the new end extends the file without allocating the gap.
                ByteBuffer zero = ByteBuffer.allocate(1);
                if (direct) {
                    try (FileChannel plain = FileChannel.open(path, StandardOpenOption.WRITE)) {
                        plain.write(zero, size - 1);
                    }
                } else {
                    channel.write(zero, size - 1);
                }
                current = size;
            }
            return new FileDisk(path, channel, current, direct);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
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

    public Path path() {
        return path;
    }

    public boolean isReadOnly() {
        return readOnly;
    }

    public boolean isDirect() {
        return direct;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        DiskRanges.check(name(), size, position, length);
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
        DiskRanges.check(name(), size, position, length);
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
    private void transfer(long position, ByteBuffer buffer, int offset, int length, boolean write)
            throws IOException {
        int savedPosition = buffer.position();
        int savedLimit = buffer.limit();
        try {
            buffer.limit(offset + length).position(offset);
            long at = position;
            while (buffer.hasRemaining()) {
                int n = write ? channel.write(buffer, at) : channel.read(buffer, at);
                if (n < 0) {
                    throw new EOFException(name() + ": end of file at offset " + at
                            + " while reading " + length + " bytes at " + position);
                }
                at += n;
            }
        } finally {
            buffer.limit(savedLimit).position(savedPosition);
        }
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
            b = alignedBuffer(length);
            bounce.set(b);
        }
        return b;
    }

    private static ByteBuffer alignedBuffer(int length) {
        return ByteBuffer.allocateDirect(length + DIRECT_ALIGNMENT).alignedSlice(DIRECT_ALIGNMENT);
    }

    @Override
    public void flush() throws IOException {
        if (readOnly) {
            return;
        }
        channel.force(false);
    }

    @Override
    public String name() {
        return path.toString();
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public String toString() {
        return "file " + path + " (" + size + " bytes" + (direct ? ", O_DIRECT" : "") + ")";
    }
}
