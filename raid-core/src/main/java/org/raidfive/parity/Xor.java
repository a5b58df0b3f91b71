package org.raidfive.parity;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Word-wide XOR kernels for RAID-5 parity over heap or direct {@link ByteBuffer}s, addressed
 * absolutely within each buffer's limit (positions are neither read nor changed). No allocation.
 *
 * <p>Words are read through a native-order {@link VarHandle} view whatever each buffer's own
 * byte order, so mixing buffers of different orders is safe (XOR is bytewise; only consistency
 * between the load and the store matters). Lengths need not be multiples of 8: the tail is done
 * bytewise.
 */
public final class Xor {
    private static final VarHandle LONGS =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private Xor() {
    }

    /** {@code dst[dOff..dOff+len) ^= src[sOff..sOff+len)}. */
    public static void xorInto(ByteBuffer dst, int dOff, ByteBuffer src, int sOff, int len) {
        checkRange(dst, dOff, len);
        checkRange(src, sOff, len);
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

    /** {@code dst[dOff..dOff+len) = a[aOff..) ^ b[bOff..)}. {@code dst} may be {@code a} or {@code b} at the same offset. */
    public static void xor(ByteBuffer dst, int dOff, ByteBuffer a, int aOff, ByteBuffer b, int bOff, int len) {
        checkRange(dst, dOff, len);
        checkRange(a, aOff, len);
        checkRange(b, bOff, len);
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

    /**
     * Parity of {@code count} sources in one call: {@code dst = srcs[0] ^ ... ^ srcs[count-1]},
     * worked in 4 KiB blocks so the destination stays in L1 while every source streams past.
     */
    public static void parity(ByteBuffer dst, int dOff, ByteBuffer[] srcs, int[] srcOffs, int count, int len) {
        if (count < 1) {
            throw new IllegalArgumentException("parity needs at least one source, got " + count);
        }
        final int block = 4096;
        for (int done = 0; done < len; done += block) {
            int n = Math.min(block, len - done);
            if (count == 1) {
                checkRange(srcs[0], srcOffs[0] + done, n);
                dst.put(dOff + done, srcs[0], srcOffs[0] + done, n);
                continue;
            }
            xor(dst, dOff + done, srcs[0], srcOffs[0] + done, srcs[1], srcOffs[1] + done, n);
            for (int s = 2; s < count; s++) {
                xorInto(dst, dOff + done, srcs[s], srcOffs[s] + done, n);
            }
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
            throw new IndexOutOfBoundsException("xor range [" + off + ", " + off + " + " + len
                    + ") outside buffer of limit " + b.limit());
        }
    }
}
