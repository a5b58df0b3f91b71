package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.raidfive.disk.MemberDisk;

/**
 * Independent checks of an array's members, written without the engine's layout code: parity is
 * checked as "every byte offset XORs to zero across all members", and data placement with a
 * transcription of Linux {@code raid5_compute_sector}.
 */
public final class ArrayOracle {
    private ArrayOracle() {}

    /** Linux raid5_compute_sector for RAID-5: {parity slot, data slot} of array chunk {@code chunk}. */
    public static int[] linuxSlots(int algorithm, int raidDisks, long chunk) {
        int dataDisks = raidDisks - 1;
        long stripe = chunk / dataDisks;
        int dd = (int) (chunk % dataDisks);
        int pd;
        switch (algorithm) {
            case 0:
                pd = dataDisks - (int) (stripe % raidDisks);
                if (dd >= pd) {
                    dd++;
                }
                break;
            case 1:
                pd = (int) (stripe % raidDisks);
                if (dd >= pd) {
                    dd++;
                }
                break;
            case 2:
                pd = dataDisks - (int) (stripe % raidDisks);
                dd = (pd + 1 + dd) % raidDisks;
                break;
            case 3:
                pd = (int) (stripe % raidDisks);
                dd = (pd + 1 + dd) % raidDisks;
                break;
            case 4:
                pd = 0;
                dd++;
                break;
            case 5:
                pd = dataDisks;
                break;
            default:
                throw new IllegalArgumentException("algorithm " + algorithm);
        }
        return new int[] {pd, dd};
    }

    /** Asserts that the XOR of all members is zero over the first {@code memberBytes} of their data areas. */
    public static void assertParityConsistent(List<? extends MemberDisk> members, long dataOffset, long memberBytes)
            throws IOException {
        int block = 256 * 1024;
        ByteBuffer acc = ByteBuffer.allocate(block);
        ByteBuffer buf = ByteBuffer.allocate(block);
        for (long pos = 0; pos < memberBytes; pos += block) {
            int n = (int) Math.min(block, memberBytes - pos);
            java.util.Arrays.fill(acc.array(), (byte) 0);
            for (MemberDisk m : members) {
                m.read(dataOffset + pos, buf, 0, n);
                byte[] a = acc.array();
                byte[] b = buf.array();
                for (int i = 0; i < n; i++) {
                    a[i] ^= b[i];
                }
            }
            for (int i = 0; i < n; i++) {
                if (acc.get(i) != 0) {
                    throw new AssertionError("parity mismatch at member offset " + (pos + i) + " (stripe " + "byte "
                            + (pos + i) + " XORs to " + acc.get(i) + ")");
                }
            }
        }
    }

    /**
     * Asserts that the members, read directly at the places Linux md would look, hold {@code image}.
     * {@code slots} are the members in role order.
     */
    public static void assertDataPlacement(
            List<? extends MemberDisk> slots, int algorithm, int chunk, long dataOffset, byte[] image)
            throws IOException {
        int n = slots.size();
        byte[] got = new byte[chunk];
        for (long c = 0; (c + 1) * chunk <= image.length; c++) {
            int[] s = linuxSlots(algorithm, n, c);
            long stripe = c / (n - 1);
            slots.get(s[1]).read(dataOffset + stripe * chunk, ByteBuffer.wrap(got), 0, chunk);
            byte[] want = java.util.Arrays.copyOfRange(image, (int) (c * chunk), (int) ((c + 1) * chunk));
            assertArrayEquals(want, got, "array chunk " + c + " on slot " + s[1]);
        }
    }

    /** Reads the whole array and compares it with the reference image. */
    public static void assertArrayHolds(Raid5Array array, byte[] image) throws IOException {
        assertEquals(image.length, array.size());
        byte[] got = new byte[image.length];
        int step = 1 << 20;
        for (int pos = 0; pos < image.length; pos += step) {
            int len = Math.min(step, image.length - pos);
            array.read(pos, ByteBuffer.wrap(got), pos, len);
        }
        for (int i = 0; i < image.length; i += 512) {
            if (!java.util.Arrays.equals(got, i, i + 512, image, i, i + 512)) {
                throw new AssertionError("array sector at offset " + i + " differs from the reference image");
            }
        }
    }
}
