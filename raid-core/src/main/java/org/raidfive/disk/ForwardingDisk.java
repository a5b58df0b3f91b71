package org.raidfive.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A {@link MemberDisk} that hands every call to another: the base of wrappers that watch, delay or
 * fail some calls and pass the rest on. Claims stay the wrapper's own ({@link MemberDisk#claim}'s
 * default, per object in this process); a wrapper that should claim the storage beneath it
 * overrides {@link #claim} to forward it.
 */
public abstract class ForwardingDisk implements MemberDisk {
    /** The disk every call goes on to. */
    protected final MemberDisk inner;

    /** A disk that hands every call to {@code inner}. */
    protected ForwardingDisk(MemberDisk inner) {
        this.inner = Objects.requireNonNull(inner, "inner");
    }

    /** The disk beneath this one. */
    public final MemberDisk inner() {
        return inner;
    }

    @Override
    public long size() {
        return inner.size();
    }

    @Override
    public long refreshSize() throws IOException {
        return inner.refreshSize();
    }

    @Override
    public int logicalBlockSize() {
        return inner.logicalBlockSize();
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        inner.read(position, dst, dstOffset, length);
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        inner.write(position, src, srcOffset, length);
    }

    @Override
    public void flush() throws IOException {
        inner.flush();
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }
}
