package org.raidfive.interop;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.raidfive.array.ArrayOracle;
import org.raidfive.array.Raid5Array;

/**
 * What an array must hold: a flat image of its whole content, kept in step with every write made
 * through raidfive (and with what the guest writes through md, applied by the test).
 */
final class Reference {
    private static final int SECTOR = 512;
    private final byte[] image;
    private final Random random;

    Reference(long bytes, long seed) {
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("array of " + bytes + " bytes is too big for a test reference");
        }
        this.image = new byte[(int) bytes];
        this.random = new Random(seed);
    }

    private Reference(byte[] image, Random random) {
        this.image = image;
        this.random = random;
    }

    /**
     * The reference of the same array after it grew to {@code bytes}: the data kept, the new region
     * as the members hold it (zeros on fresh image files, parity resynced over them), the same random
     * stream.
     */
    Reference grownTo(long bytes) {
        return new Reference(java.util.Arrays.copyOf(image, Math.toIntExact(bytes)), random);
    }

    byte[] image() {
        return image;
    }

    String sha256() {
        return Workbench.sha256(image);
    }

    Random random() {
        return random;
    }

    /** Writes the whole array with random data, 1 MiB at a time (full-stripe writes). */
    void fill(Raid5Array array) throws IOException {
        byte[] block = new byte[1 << 20];
        for (int pos = 0; pos < image.length; pos += block.length) {
            int n = Math.min(block.length, image.length - pos);
            random.nextBytes(block);
            System.arraycopy(block, 0, image, pos, n);
            array.write(pos, ByteBuffer.wrap(block), 0, n);
        }
    }

    /**
     * {@code count} writes of random sector-aligned ranges, from one sector to {@code maxBytes},
     * anywhere in the array: partial-stripe writes (read-modify-write and reconstruct-write).
     */
    void scatter(Raid5Array array, int count, int maxBytes) throws IOException {
        for (int i = 0; i < count; i++) {
            int len = SECTOR * (1 + random.nextInt(maxBytes / SECTOR));
            int off = SECTOR * random.nextInt((image.length - len) / SECTOR + 1);
            byte[] data = new byte[len];
            random.nextBytes(data);
            System.arraycopy(data, 0, image, off, len);
            array.write(off, ByteBuffer.wrap(data), 0, len);
        }
    }

    /** Takes the array's current content as the reference (for arrays made over garbage). */
    void readFrom(Raid5Array array) throws IOException {
        int step = 1 << 20;
        for (int pos = 0; pos < image.length; pos += step) {
            array.read(pos, ByteBuffer.wrap(image), pos, Math.min(step, image.length - pos));
        }
    }

    /** Overwrites {@code len} bytes at {@code offset} with {@code src[from..]} (a write the guest made). */
    void put(long offset, byte[] src, long from, int len) {
        System.arraycopy(src, (int) from, image, (int) offset, len);
    }

    void assertHeldBy(Raid5Array array) throws IOException {
        ArrayOracle.assertArrayHolds(array, image);
    }
}
