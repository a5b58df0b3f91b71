package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The whole storage contract of one RAID member: a fixed-size array of bytes with positional I/O.
 *
 * <p>Thread safety: every implementation accepts concurrent positional reads and writes from many
 * threads. Two overlapping writes in flight at once leave either one's bytes (the engine never
 * issues them; it serialises per stripe).
 *
 * <p>Buffers: the {@code (buffer, offset, length)} methods address the buffer absolutely and do not
 * change its position or limit as seen by the caller after return; an implementation may move
 * them during the call, so a buffer must not be shared with another thread while a call that
 * uses it is running. A short transfer is never returned: a call either moves every byte or
 * throws.
 */
public interface MemberDisk extends AutoCloseable {

    /**
     * Size in bytes, as last learned: fixed for the life of the object unless {@link #refreshSize}
     * finds that the storage beneath grew.
     */
    long size();

    /**
     * Asks the storage for its size now and returns {@link #size()} after: a disk whose storage can
     * grow under it (a file extended, a block device resized) takes the larger size from here on, so
     * an open array can use the room ({@code Raid5Array.growMemberBytes}). The size never shrinks
     * here: storage found smaller keeps the size it had, and I/O past its end fails as before. The
     * default learns nothing (memory, NBD exports, whose size the handshake fixed).
     */
    default long refreshSize() throws IOException {
        return size();
    }

    /**
     * The smallest unit this disk reads and writes whole, md's logical block size: offsets and
     * lengths of metadata I/O are rounded up to it (md rounds a bitmap page's write the same way).
     * 512 by default; a file opened with O_DIRECT answers {@link FileDisk#DIRECT_ALIGNMENT}.
     */
    default int logicalBlockSize() {
        return 512;
    }

    /**
     * Reads {@code length} bytes at {@code position} into {@code dst[dstOffset, dstOffset+length)}.
     *
     * @throws java.io.EOFException if the range ends beyond {@link #size()}
     * @throws IOException on any device error
     */
    void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException;

    /**
     * Writes {@code src[srcOffset, srcOffset+length)} at {@code position}.
     *
     * @throws java.io.EOFException if the range ends beyond {@link #size()}
     * @throws IOException on any device error
     */
    void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException;

    /** Makes every completed write durable (fsync for files, a no-op for memory). */
    void flush() throws IOException;

    /** A short human name for messages: a path, a URI or {@code memory#3}. */
    String name();

    /**
     * Takes ownership of this member's storage for {@code holder} (an array's name, for messages)
     * until the returned claim is closed: a second claim while one is held is refused with
     * {@link MemberInUseException}, in this process and, for files and block devices, in any other
     * process (an OS lock the kernel drops when the holder dies). Arrays claim every member for as
     * long as they are open: {@link ClaimMode#EXCLUSIVE} when writable, {@link ClaimMode#SHARED}
     * when read-only.
     *
     * <p>The default excludes other claims on this same object in this process; storage reached over
     * the network (NBD) cannot be locked from here, so its claim excludes only this process.
     *
     * @throws MemberInUseException if another holder has it
     */
    default DiskClaim claim(ClaimMode mode, String holder) throws IOException {
        return Claims.inProcess(this, name(), mode, holder);
    }

    /** Releases the storage. Further calls fail. Idempotent. */
    @Override
    void close() throws IOException;

    /** Reads {@code dst.remaining()} bytes at {@code position}; advances {@code dst}'s position to its limit. */
    default void read(long position, ByteBuffer dst) throws IOException {
        int length = dst.remaining();
        read(position, dst, dst.position(), length);
        dst.position(dst.limit());
    }

    /** Writes {@code src.remaining()} bytes at {@code position}; advances {@code src}'s position to its limit. */
    default void write(long position, ByteBuffer src) throws IOException {
        int length = src.remaining();
        write(position, src, src.position(), length);
        src.position(src.limit());
    }
}
