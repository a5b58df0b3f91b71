package org.raidfive.parity;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Word-wide XOR kernels for RAID-5 parity over heap or direct {@link ByteBuffer}s, addressed
 * absolutely within each buffer's limit (positions are neither read nor changed). No allocation.
 *
 * <p>Words are loaded and stored in native order whatever each buffer's own byte order, so mixing
 * buffers of different orders is safe (XOR is bytewise; only consistency between the load and the
 * store matters). Lengths need not be multiples of 8: the tail is done bytewise.
 *
 * <p>Speed. The hot kernels ({@link #xorInto}, {@link #xor}, {@link #parity}) read and write
 * through {@code sun.misc.Unsafe} with a {@code (base object, long offset)} address computed once
 * per call: on JDK 17 C2's SuperWord pass vectorises such loops (AVX2/AVX-512), while the same loop
 * through a {@code ByteBuffer} view {@code VarHandle} or {@code ByteBuffer.getLong(int)} at an
 * offset stays scalar (measured 3-4x slower; see BENCHMARKS.md). {@code parity} fuses up to four
 * sources per pass so the destination is loaded and stored once per three sources. Every address
 * is range-checked against the buffer's limit before the loop, and {@code reachabilityFence} keeps
 * a direct buffer's memory alive until the loop that uses its raw address is done. Buffers the
 * fast path cannot address (read-only heap buffers, which hide their array) and JVMs without
 * {@code sun.misc.Unsafe} take the portable {@link VarHandle} path.
 */
public final class Xor {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    /** Rows per pass of {@link #parity}: the destination and up to four sources stay in L1/L2. */
    private static final int PARITY_BLOCK = 16 * 1024;

    private Xor() {}

    /** {@code dst[dOff..dOff+len) ^= src[sOff..sOff+len)}. */
    public static void xorInto(ByteBuffer dst, int dOff, ByteBuffer src, int sOff, int len) {
        checkRange(dst, dOff, len);
        checkRange(src, sOff, len);
        if (Raw.ENABLED && Raw.addressable(dst) && Raw.addressable(src)) {
            Raw.xorInto(dst, dOff, src, sOff, len);
        } else {
            portableXorInto(dst, dOff, src, sOff, len);
        }
    }

    /** {@code dst[dOff..dOff+len) = a[aOff..) ^ b[bOff..)}. {@code dst} may be {@code a} or {@code b} at the same offset. */
    public static void xor(ByteBuffer dst, int dOff, ByteBuffer a, int aOff, ByteBuffer b, int bOff, int len) {
        checkRange(dst, dOff, len);
        checkRange(a, aOff, len);
        checkRange(b, bOff, len);
        if (Raw.ENABLED && Raw.addressable(dst) && Raw.addressable(a) && Raw.addressable(b)) {
            Raw.xor(dst, dOff, a, aOff, b, bOff, len);
        } else {
            portableXor(dst, dOff, a, aOff, b, bOff, len);
        }
    }

    /**
     * Parity of {@code count} sources in one call: {@code dst = srcs[0] ^ ... ^ srcs[count-1]},
     * worked in blocks so the destination stays in cache while the sources stream past; within a
     * block up to four sources are combined per pass. {@code dst} may be {@code srcs[0]} at the same
     * offset (parity updated in place); it must not overlap any other source.
     */
    public static void parity(ByteBuffer dst, int dOff, ByteBuffer[] srcs, int[] srcOffs, int count, int len) {
        if (count < 1) {
            throw new IllegalArgumentException("parity needs at least one source, got " + count);
        }
        checkRange(dst, dOff, len);
        boolean raw = Raw.ENABLED && Raw.addressable(dst);
        for (int s = 0; s < count; s++) {
            checkRange(srcs[s], srcOffs[s], len);
            raw &= Raw.addressable(srcs[s]);
        }
        if (count == 1) {
            dst.put(dOff, srcs[0], srcOffs[0], len);
            return;
        }
        for (int done = 0; done < len; done += PARITY_BLOCK) {
            int n = Math.min(PARITY_BLOCK, len - done);
            if (raw) {
                Raw.parityBlock(dst, dOff + done, srcs, srcOffs, done, count, n);
            } else {
                portableXor(dst, dOff + done, srcs[0], srcOffs[0] + done, srcs[1], srcOffs[1] + done, n);
                for (int s = 2; s < count; s++) {
                    portableXorInto(dst, dOff + done, srcs[s], srcOffs[s] + done, n);
                }
            }
        }
    }

    private static void portableXorInto(ByteBuffer dst, int dOff, ByteBuffer src, int sOff, int len) {
        int i = 0;
        int words = len & ~31;
        for (; i < words; i += 32) {
            long a0 = (long) LONGS.get(src, sOff + i);
            long a1 = (long) LONGS.get(src, sOff + i + 8);
            long a2 = (long) LONGS.get(src, sOff + i + 16);
            long a3 = (long) LONGS.get(src, sOff + i + 24);
            LONGS.set(dst, dOff + i, a0 ^ (long) LONGS.get(dst, dOff + i));
            LONGS.set(dst, dOff + i + 8, a1 ^ (long) LONGS.get(dst, dOff + i + 8));
            LONGS.set(dst, dOff + i + 16, a2 ^ (long) LONGS.get(dst, dOff + i + 16));
            LONGS.set(dst, dOff + i + 24, a3 ^ (long) LONGS.get(dst, dOff + i + 24));
        }
        for (; i + 8 <= len; i += 8) {
            LONGS.set(dst, dOff + i, (long) LONGS.get(src, sOff + i) ^ (long) LONGS.get(dst, dOff + i));
        }
        for (; i < len; i++) {
            dst.put(dOff + i, (byte) (dst.get(dOff + i) ^ src.get(sOff + i)));
        }
    }

    private static void portableXor(ByteBuffer dst, int dOff, ByteBuffer a, int aOff, ByteBuffer b, int bOff, int len) {
        int i = 0;
        int words = len & ~31;
        for (; i < words; i += 32) {
            long x0 = (long) LONGS.get(a, aOff + i) ^ (long) LONGS.get(b, bOff + i);
            long x1 = (long) LONGS.get(a, aOff + i + 8) ^ (long) LONGS.get(b, bOff + i + 8);
            long x2 = (long) LONGS.get(a, aOff + i + 16) ^ (long) LONGS.get(b, bOff + i + 16);
            long x3 = (long) LONGS.get(a, aOff + i + 24) ^ (long) LONGS.get(b, bOff + i + 24);
            LONGS.set(dst, dOff + i, x0);
            LONGS.set(dst, dOff + i + 8, x1);
            LONGS.set(dst, dOff + i + 16, x2);
            LONGS.set(dst, dOff + i + 24, x3);
        }
        for (; i + 8 <= len; i += 8) {
            LONGS.set(dst, dOff + i, (long) LONGS.get(a, aOff + i) ^ (long) LONGS.get(b, bOff + i));
        }
        for (; i < len; i++) {
            dst.put(dOff + i, (byte) (a.get(aOff + i) ^ b.get(bOff + i)));
        }
    }

    /** True when {@code a[aOff..aOff+len)} and {@code b[bOff..bOff+len)} hold the same bytes. */
    public static boolean equal(ByteBuffer a, int aOff, ByteBuffer b, int bOff, int len) {
        checkRange(a, aOff, len);
        checkRange(b, bOff, len);
        int i = 0;
        for (; i + 8 <= len; i += 8) {
            if ((long) LONGS.get(a, aOff + i) != (long) LONGS.get(b, bOff + i)) {
                return false;
            }
        }
        for (; i < len; i++) {
            if (a.get(aOff + i) != b.get(bOff + i)) {
                return false;
            }
        }
        return true;
    }

    /** True when {@code buf[off..off+len)} is all zero bytes. */
    public static boolean isZero(ByteBuffer buf, int off, int len) {
        checkRange(buf, off, len);
        int i = 0;
        long acc = 0;
        for (; i + 8 <= len; i += 8) {
            acc |= (long) LONGS.get(buf, off + i);
            if ((i & 4095) == 4088 && acc != 0) {
                return false;
            }
        }
        for (; i < len; i++) {
            acc |= buf.get(off + i);
        }
        return acc == 0;
    }

    private static void checkRange(ByteBuffer b, int off, int len) {
        if (off < 0 || len < 0 || off > b.limit() - len) {
            throw new IndexOutOfBoundsException(
                    "xor range [" + off + ", " + off + " + " + len + ") outside buffer of limit " + b.limit());
        }
    }

    /**
     * The vectorisable kernels: plain {@code long} loads and stores at {@code (base, offset + i)},
     * {@code base} null and {@code offset} the address for a direct buffer, {@code base} the array
     * for a heap one. Callers have range-checked every buffer.
     */
    private static final class Raw {
        static final sun.misc.Unsafe U;
        static final long ADDRESS;
        static final long BYTES_BASE;
        static final boolean ENABLED;

        static {
            sun.misc.Unsafe u = null;
            long address = -1;
            long base = -1;
            try {
                Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                u = (sun.misc.Unsafe) f.get(null);
                address = u.objectFieldOffset(Buffer.class.getDeclaredField("address"));
                base = u.arrayBaseOffset(byte[].class);
            } catch (ReflectiveOperationException | RuntimeException e) {
                u = null;
            }
            U = u;
            ADDRESS = address;
            BYTES_BASE = base;
            ENABLED = u != null;
        }

        private Raw() {}

        /** Direct buffers, and heap buffers that expose their array (not read-only ones). */
        static boolean addressable(ByteBuffer b) {
            return b.isDirect() || b.hasArray();
        }

        static Object base(ByteBuffer b) {
            return b.isDirect() ? null : b.array();
        }

        static long offset(ByteBuffer b, int off) {
            return b.isDirect() ? U.getLong(b, ADDRESS) + off : BYTES_BASE + b.arrayOffset() + off;
        }

        static void xorInto(ByteBuffer dst, int dOff, ByteBuffer src, int sOff, int len) {
            into1(base(dst), offset(dst, dOff), base(src), offset(src, sOff), len);
            Reference.reachabilityFence(dst);
            Reference.reachabilityFence(src);
        }

        static void xor(ByteBuffer dst, int dOff, ByteBuffer a, int aOff, ByteBuffer b, int bOff, int len) {
            x2(base(dst), offset(dst, dOff), base(a), offset(a, aOff), base(b), offset(b, bOff), len);
            Reference.reachabilityFence(dst);
            Reference.reachabilityFence(a);
            Reference.reachabilityFence(b);
        }

        /** {@code n} bytes of parity at {@code dst[dOff..)} from every source at {@code srcOffs[s] + done}. */
        static void parityBlock(
                ByteBuffer dst, int dOff, ByteBuffer[] srcs, int[] srcOffs, int done, int count, int n) {
            Object d = base(dst);
            long dO = offset(dst, dOff);
            int k;
            if (count == 2) {
                x2(
                        d,
                        dO,
                        base(srcs[0]),
                        offset(srcs[0], srcOffs[0] + done),
                        base(srcs[1]),
                        offset(srcs[1], srcOffs[1] + done),
                        n);
                k = 2;
            } else if (count == 3) {
                x3(
                        d,
                        dO,
                        base(srcs[0]),
                        offset(srcs[0], srcOffs[0] + done),
                        base(srcs[1]),
                        offset(srcs[1], srcOffs[1] + done),
                        base(srcs[2]),
                        offset(srcs[2], srcOffs[2] + done),
                        n);
                k = 3;
            } else {
                x4(
                        d,
                        dO,
                        base(srcs[0]),
                        offset(srcs[0], srcOffs[0] + done),
                        base(srcs[1]),
                        offset(srcs[1], srcOffs[1] + done),
                        base(srcs[2]),
                        offset(srcs[2], srcOffs[2] + done),
                        base(srcs[3]),
                        offset(srcs[3], srcOffs[3] + done),
                        n);
                k = 4;
            }
            for (; k + 3 <= count; k += 3) {
                into3(
                        d,
                        dO,
                        base(srcs[k]),
                        offset(srcs[k], srcOffs[k] + done),
                        base(srcs[k + 1]),
                        offset(srcs[k + 1], srcOffs[k + 1] + done),
                        base(srcs[k + 2]),
                        offset(srcs[k + 2], srcOffs[k + 2] + done),
                        n);
            }
            if (k + 2 == count) {
                into2(
                        d,
                        dO,
                        base(srcs[k]),
                        offset(srcs[k], srcOffs[k] + done),
                        base(srcs[k + 1]),
                        offset(srcs[k + 1], srcOffs[k + 1] + done),
                        n);
            } else if (k + 1 == count) {
                into1(d, dO, base(srcs[k]), offset(srcs[k], srcOffs[k] + done), n);
            }
            Reference.reachabilityFence(dst);
            Reference.reachabilityFence(srcs);
        }

        // Each kernel: a word loop C2 vectorises, then a byte tail.

        static void x2(Object d, long dO, Object a, long aO, Object b, long bO, int len) {
            int words = len & ~7;
            for (int i = 0; i < words; i += 8) {
                U.putLong(d, dO + i, U.getLong(a, aO + i) ^ U.getLong(b, bO + i));
            }
            for (int i = words; i < len; i++) {
                U.putByte(d, dO + i, (byte) (U.getByte(a, aO + i) ^ U.getByte(b, bO + i)));
            }
        }

        static void x3(Object d, long dO, Object a, long aO, Object b, long bO, Object c, long cO, int len) {
            int words = len & ~7;
            for (int i = 0; i < words; i += 8) {
                U.putLong(d, dO + i, U.getLong(a, aO + i) ^ U.getLong(b, bO + i) ^ U.getLong(c, cO + i));
            }
            for (int i = words; i < len; i++) {
                U.putByte(d, dO + i, (byte) (U.getByte(a, aO + i) ^ U.getByte(b, bO + i) ^ U.getByte(c, cO + i)));
            }
        }

        static void x4(
                Object d,
                long dO,
                Object a,
                long aO,
                Object b,
                long bO,
                Object c,
                long cO,
                Object e,
                long eO,
                int len) {
            int words = len & ~7;
            for (int i = 0; i < words; i += 8) {
                U.putLong(
                        d,
                        dO + i,
                        U.getLong(a, aO + i) ^ U.getLong(b, bO + i) ^ U.getLong(c, cO + i) ^ U.getLong(e, eO + i));
            }
            for (int i = words; i < len; i++) {
                U.putByte(d, dO + i, (byte)
                        (U.getByte(a, aO + i) ^ U.getByte(b, bO + i) ^ U.getByte(c, cO + i) ^ U.getByte(e, eO + i)));
            }
        }

        static void into1(Object d, long dO, Object a, long aO, int len) {
            int words = len & ~7;
            for (int i = 0; i < words; i += 8) {
                U.putLong(d, dO + i, U.getLong(d, dO + i) ^ U.getLong(a, aO + i));
            }
            for (int i = words; i < len; i++) {
                U.putByte(d, dO + i, (byte) (U.getByte(d, dO + i) ^ U.getByte(a, aO + i)));
            }
        }

        static void into2(Object d, long dO, Object a, long aO, Object b, long bO, int len) {
            int words = len & ~7;
            for (int i = 0; i < words; i += 8) {
                U.putLong(d, dO + i, U.getLong(d, dO + i) ^ U.getLong(a, aO + i) ^ U.getLong(b, bO + i));
            }
            for (int i = words; i < len; i++) {
                U.putByte(d, dO + i, (byte) (U.getByte(d, dO + i) ^ U.getByte(a, aO + i) ^ U.getByte(b, bO + i)));
            }
        }

        static void into3(Object d, long dO, Object a, long aO, Object b, long bO, Object c, long cO, int len) {
            int words = len & ~7;
            for (int i = 0; i < words; i += 8) {
                U.putLong(
                        d,
                        dO + i,
                        U.getLong(d, dO + i) ^ U.getLong(a, aO + i) ^ U.getLong(b, bO + i) ^ U.getLong(c, cO + i));
            }
            for (int i = words; i < len; i++) {
                U.putByte(d, dO + i, (byte)
                        (U.getByte(d, dO + i) ^ U.getByte(a, aO + i) ^ U.getByte(b, bO + i) ^ U.getByte(c, cO + i)));
            }
        }
    }
}
