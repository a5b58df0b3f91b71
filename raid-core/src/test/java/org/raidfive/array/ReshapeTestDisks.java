package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.raidfive.disk.ForwardingAsyncDisk;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.Superblock;

/** What the reshape tests share: members that outlive their arrays, an injected crash, whole-member copies. */
final class ReshapeTestDisks {
    private ReshapeTestDisks() {}

    /** A crash injected at a reshape's test hook: the reshape stops there, as a killed process would. */
    static final class InjectedCrash extends IOException {
        private static final long serialVersionUID = 1L;

        InjectedCrash(String what) {
            super(what);
        }
    }

    /** A memory member that outlives the arrays opened on it (closing an array closes its members). */
    static final class Kept extends ForwardingDisk {
        Kept(long size, String name) {
            super(new MemoryDisk(size, name));
        }

        @Override
        public void close() {}
    }

    /**
     * A member through the page cache as Linux reports its write-back errors: one flush, the
     * {@code failing}-th, fails, and every flush after it succeeds (an error is reported to one fsync
     * of a descriptor only). A reshape on such members streams its batches on the lanes and starts
     * a flush after each.
     */
    static final class PageCacheOnceFailing extends ForwardingAsyncDisk {
        private final java.util.concurrent.atomic.AtomicInteger flushes =
                new java.util.concurrent.atomic.AtomicInteger();
        private final int failing;

        PageCacheOnceFailing(MemberDisk inner, int failing) {
            super(inner);
            this.failing = failing;
        }

        int flushes() {
            return flushes.get();
        }

        @Override
        public void flush() throws IOException {
            super.flush();
            if (flushes.incrementAndGet() == failing) {
                throw new IOException(name() + ": write-back failed (injected, reported once)");
            }
        }

        @Override
        public void flushAsync(org.raidfive.disk.IoCallback callback, int tag) {
            IOException error = null;
            try {
                flush();
            } catch (IOException e) {
                error = e;
            }
            callback.ioDone(tag, error);
        }

        @Override
        public boolean bufferedByPageCache() {
            return true;
        }
    }

    /**
     * Any member (a {@link org.raidfive.disk.FaultyDisk} say) that a reshape takes for one whose I/O
     * completes inline, as a memory member's does: its batches stream stripe by stripe on the lanes.
     */
    static final class Inline extends ForwardingAsyncDisk {
        Inline(MemberDisk inner) {
            super(inner);
        }

        @Override
        public boolean completesInline() {
            return true;
        }
    }

    /**
     * A memory member, like {@link Kept}, whose completion-based I/O runs inline as a {@link
     * MemoryDisk}'s does: a reshape on such members moves its batches stripe by stripe over its
     * lanes, the path memory members take.
     */
    static final class InlineKept extends ForwardingAsyncDisk {
        InlineKept(long size, String name) {
            super(new MemoryDisk(size, name));
        }

        @Override
        public void close() {}
    }

    /**
     * A memory member with a volatile write cache: a write is seen at once, and is durable only once
     * a flush follows it. {@link #afterPowerLoss} keeps what was flushed plus the unflushed writes
     * to the superblock's block, the worst order a cache may write back in for a checkpoint (its
     * superblock reached the medium, the data written before it did not).
     */
    static final class VolatileCache extends ForwardingDisk {
        private record Pending(long position, byte[] bytes) {}

        private final MemoryDisk durable;
        private final List<Pending> pending = new ArrayList<>();

        VolatileCache(long size, String name) {
            super(new MemoryDisk(size, name));
            durable = new MemoryDisk(size, name + "-durable");
        }

        @Override
        public synchronized void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            byte[] copy = new byte[length];
            src.get(srcOffset, copy, 0, length);
            super.write(position, src, srcOffset, length);
            pending.add(new Pending(position, copy));
        }

        @Override
        public synchronized void flush() throws IOException {
            super.flush();
            for (Pending p : pending) {
                durable.write(p.position, ByteBuffer.wrap(p.bytes), 0, p.bytes.length);
            }
            pending.clear();
        }

        /** What the medium holds after a power loss now: flushed writes, and the unflushed superblock writes. */
        synchronized MemberDisk afterPowerLoss() throws IOException {
            Kept after = new Kept(size(), name());
            ByteBuffer all = ByteBuffer.allocate((int) size());
            durable.read(0, all, 0, (int) size());
            after.write(0, all, 0, (int) size());
            for (Pending p : pending) {
                if (p.position == Superblock.SUPERBLOCK_OFFSET) {
                    after.write(p.position, ByteBuffer.wrap(p.bytes), 0, p.bytes.length);
                }
            }
            return after;
        }

        @Override
        public void close() {}
    }

    /**
     * Opens the reshape recorded on {@code members} read-only and checks that the array reads as
     * {@code image} (zeros past its end) at the recorded position: whole, and again in pieces of 37
     * sectors, so that some piece crosses the position; nothing is written. Returns the position,
     * or -1 when a member's superblock already says the reshape is done (a crash while its end was
     * written), which {@link OfflineReshape#readOnly} refuses.
     */
    static long assertReadsMidReshape(List<MemberDisk> members, byte[] image) throws Exception {
        byte[][] before = snapshot(members);
        for (MemberDisk d : members) {
            if (!SuperblockIo.read(d).hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE)) {
                ArrayConfigException e =
                        assertThrows(ArrayConfigException.class, () -> OfflineReshape.readOnly(members));
                assertTrue(e.getMessage().contains("is not reshaping"), e.getMessage());
                return -1;
            }
        }
        long position;
        try (OfflineReshape r = OfflineReshape.readOnly(members)) {
            position = r.position();
            int size = (int) r.reshapingArrayBytes();
            byte[] expected = Arrays.copyOf(image, size);
            byte[] whole = new byte[size];
            r.read(0, ByteBuffer.wrap(whole), 0, size);
            assertSameBytes(expected, whole, "read whole at position " + position);
            byte[] pieces = new byte[size];
            for (int at = 0; at < size; at += 37 * 512) {
                r.read(at, ByteBuffer.wrap(pieces), at, Math.min(37 * 512, size - at));
            }
            assertSameBytes(expected, pieces, "read in pieces at position " + position);
            assertThrows(IllegalStateException.class, () -> r.run(() -> false, p -> {}));
        }
        byte[][] after = snapshot(members);
        for (int i = 0; i < before.length; i++) {
            assertArrayEquals(before[i], after[i], members.get(i).name() + " unchanged by reading mid-reshape");
        }
        return position;
    }

    private static void assertSameBytes(byte[] expected, byte[] got, String what) {
        int mismatch = Arrays.mismatch(expected, got);
        if (mismatch >= 0) {
            throw new AssertionError(what + ": the array differs from the reference at byte " + mismatch + " (sector "
                    + mismatch / 512 + ")");
        }
    }

    /** Every byte of each disk, to show a refusal wrote nothing. */
    static byte[][] snapshot(List<MemberDisk> disks) throws IOException {
        byte[][] out = new byte[disks.size()][];
        for (int i = 0; i < out.length; i++) {
            MemberDisk d = disks.get(i);
            ByteBuffer b = ByteBuffer.allocate((int) d.size());
            d.read(0, b, 0, (int) d.size());
            out[i] = b.array();
        }
        return out;
    }
}
