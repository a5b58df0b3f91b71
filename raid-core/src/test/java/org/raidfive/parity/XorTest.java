package org.raidfive.parity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** XOR kernels against a bytewise oracle, over heap, direct, sliced and opposite-order buffers and odd sizes. */
class XorTest {
    private static final long SEED = System.nanoTime();

    static Stream<Arguments> buffers() {
        IntFunction<ByteBuffer> heap = ByteBuffer::allocate;
        IntFunction<ByteBuffer> direct = ByteBuffer::allocateDirect;
        IntFunction<ByteBuffer> sliced =
                n -> ByteBuffer.allocateDirect(n + 13).position(13).slice();
        IntFunction<ByteBuffer> bigEndianHeap = n -> ByteBuffer.allocate(n).order(ByteOrder.BIG_ENDIAN);
        IntFunction<ByteBuffer> littleDirect = n -> ByteBuffer.allocateDirect(n).order(ByteOrder.LITTLE_ENDIAN);
        return Stream.of(
                Arguments.of("heap", heap, heap),
                Arguments.of("direct", direct, direct),
                Arguments.of("sliced", sliced, heap),
                Arguments.of("mixed-order", bigEndianHeap, littleDirect));
    }

    private static ByteBuffer fill(IntFunction<ByteBuffer> kind, byte[] content) {
        ByteBuffer b = kind.apply(content.length);
        b.put(0, content);
        return b;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buffers")
    void kernelsMatchBytewiseXor(String label, IntFunction<ByteBuffer> dstKind, IntFunction<ByteBuffer> srcKind) {
        System.out.println("XorTest seed " + SEED);
        Random random = new Random(SEED);
        int[] sizes = {0, 1, 7, 8, 9, 31, 32, 33, 4095, 4096, 4097, 65536 + 24};
        for (int size : sizes) {
            for (int rep = 0; rep < 3; rep++) {
                int off = random.nextInt(17);
                byte[] a = new byte[size + 40];
                byte[] b = new byte[size + 40];
                random.nextBytes(a);
                random.nextBytes(b);
                byte[] expected = a.clone();
                for (int i = 0; i < size; i++) {
                    expected[off + i] ^= b[off + 3 + i];
                }
                ByteBuffer dst = fill(dstKind, a);
                ByteBuffer src = fill(srcKind, b);
                Xor.xorInto(dst, off, src, off + 3, size);
                byte[] got = new byte[a.length];
                dst.get(0, got);
                assertArrayEquals(expected, got, label + " xorInto size " + size);

                ByteBuffer out = dstKind.apply(size + 40);
                Xor.xor(out, 5, fill(srcKind, a), off, fill(dstKind, b), off + 3, size);
                for (int i = 0; i < size; i++) {
                    if (out.get(5 + i) != (byte) (a[off + i] ^ b[off + 3 + i])) {
                        throw new AssertionError(label + " xor size " + size + " byte " + i);
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buffers")
    void parityOfManySourcesMatchesOracleAndIsReusable(
            String label, IntFunction<ByteBuffer> dstKind, IntFunction<ByteBuffer> srcKind) {
        Random random = new Random(SEED + 1);
        ByteBuffer dst = dstKind.apply(70000);
        for (int count = 1; count <= 8; count++) {
            int len = 1 + random.nextInt(69000);
            byte[][] data = new byte[count][len + 8];
            ByteBuffer[] srcs = new ByteBuffer[count];
            int[] offs = new int[count];
            byte[] expected = new byte[len];
            for (int s = 0; s < count; s++) {
                random.nextBytes(data[s]);
                srcs[s] = fill(srcKind, data[s]);
                offs[s] = s % 8;
                for (int i = 0; i < len; i++) {
                    expected[i] ^= data[s][offs[s] + i];
                }
            }
            Xor.parity(dst, 1, srcs, offs, count, len);
            byte[] got = new byte[len];
            dst.get(1, got);
            assertArrayEquals(expected, got, label + " parity of " + count + " sources, " + len + " bytes");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buffers")
    void readOnlySourcesTakeThePortablePathWithTheSameResult(
            String label, IntFunction<ByteBuffer> dstKind, IntFunction<ByteBuffer> srcKind) {
        Random random = new Random(SEED + 2);
        int len = 4096 * 3 + 13;
        byte[][] data = new byte[5][len];
        ByteBuffer[] srcs = new ByteBuffer[5];
        byte[] expected = new byte[len];
        for (int s = 0; s < 5; s++) {
            random.nextBytes(data[s]);
            srcs[s] = fill(srcKind, data[s]).asReadOnlyBuffer();
            for (int i = 0; i < len; i++) {
                expected[i] ^= data[s][i];
            }
        }
        ByteBuffer dst = dstKind.apply(len);
        Xor.parity(dst, 0, srcs, new int[5], 5, len);
        byte[] got = new byte[len];
        dst.get(0, got);
        assertArrayEquals(expected, got, label + " parity of read-only sources");
        Xor.xorInto(dst, 0, srcs[4], 0, len);
        Xor.xor(dst, 0, dst, 0, srcs[3], 0, len);
        for (int i = 0; i < len; i++) {
            expected[i] ^= data[4][i] ^ data[3][i];
        }
        dst.get(0, got);
        assertArrayEquals(expected, got, label + " xorInto/xor with read-only sources");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buffers")
    void isZeroFindsAnySetByte(String label, IntFunction<ByteBuffer> kind, IntFunction<ByteBuffer> unused) {
        ByteBuffer b = kind.apply(9000);
        assertTrue(Xor.isZero(b, 0, 9000));
        for (int pos : new int[] {0, 7, 8, 4095, 4096, 8999}) {
            b.put(pos, (byte) 0x10);
            assertFalse(Xor.isZero(b, 0, 9000), label + " set byte at " + pos);
            b.put(pos, (byte) 0);
        }
        b.put(100, (byte) 1);
        assertTrue(Xor.isZero(b, 101, 8899));
    }
}
