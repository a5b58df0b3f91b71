package org.raidfive.layout;

/**
 * Address maths of one RAID-5 geometry, bit-exact with Linux {@code raid5_compute_sector}.
 *
 * <p>Array bytes are cut into chunks; chunk {@code c} lies in stripe {@code c / dataDisks} at
 * data index {@code c % dataDisks}. Every stripe holds one chunk per member at the same member
 * offset ({@code stripe * chunkSize}, relative to the data area); the algorithm decides which
 * member slot holds parity and how data indices map to slots. Immutable and allocation free.
 */
public final class Raid5Layout {
    /** The smallest chunk md allows (a page). */
    public static final int MIN_CHUNK = 4096;
    /** The largest chunk accepted. */
    public static final int MAX_CHUNK = 1 << 30;
    /** The fewest members of a RAID-5. */
    public static final int MIN_DISKS = 3;
    /** md's limit for v1 metadata (MD_SB_1_MAX... raid5 allows up to 1920 members; mdadm caps lower). */
    public static final int MAX_DISKS = 384;

    private final Raid5Algorithm algorithm;
    private final int disks;
    private final int dataDisks;
    private final int chunkSize;
    private final int chunkShift;
    private final long stripes;

    /**
     * @param memberDataBytes usable bytes per member (after data_offset); rounded down to a chunk
     */
    public Raid5Layout(Raid5Algorithm algorithm, int disks, int chunkSize, long memberDataBytes) {
        if (algorithm == null) {
            throw new IllegalArgumentException("layout algorithm must be given");
        }
        if (disks < MIN_DISKS || disks > MAX_DISKS) {
            throw new IllegalArgumentException(
                    "RAID-5 needs " + MIN_DISKS + " to " + MAX_DISKS + " members, got " + disks);
        }
        checkChunk(chunkSize);
        if (memberDataBytes < 0) {
            throw new IllegalArgumentException("member data size must not be negative: " + memberDataBytes);
        }
        this.algorithm = algorithm;
        this.disks = disks;
        this.dataDisks = disks - 1;
        this.chunkSize = chunkSize;
        this.chunkShift = Integer.numberOfTrailingZeros(chunkSize);
        this.stripes = memberDataBytes >>> chunkShift;
    }

    /** Throws with a message naming the value and the rule unless {@code chunkSize} is a valid chunk. */
    public static void checkChunk(long chunkSize) {
        if (chunkSize < MIN_CHUNK || chunkSize > MAX_CHUNK || Long.bitCount(chunkSize) != 1) {
            throw new IllegalArgumentException(
                    "chunk size " + chunkSize + " bytes is invalid: it must be a power of two from 4 KiB to 1 GiB");
        }
    }

    /** md's parity placement. */
    public Raid5Algorithm algorithm() {
        return algorithm;
    }

    /** Members, parity included. */
    public int disks() {
        return disks;
    }

    /** Members' worth of data per stripe: {@code disks() - 1}. */
    public int dataDisks() {
        return dataDisks;
    }

    /** Bytes per chunk. */
    public int chunkSize() {
        return chunkSize;
    }

    /** log2 of the chunk size. */
    public int chunkShift() {
        return chunkShift;
    }

    /** Number of whole stripes. */
    public long stripes() {
        return stripes;
    }

    /** Bytes of each member's data area in use: stripes x chunk. */
    public long memberBytesUsed() {
        return stripes << chunkShift;
    }

    /** Bytes of data one full stripe holds. */
    public long stripeDataBytes() {
        return (long) dataDisks << chunkShift;
    }

    /** Array capacity in bytes. */
    public long arrayBytes() {
        return stripes * stripeDataBytes();
    }

    /** Stripe holding array chunk {@code chunk}. */
    public long stripeOfChunk(long chunk) {
        return chunk / dataDisks;
    }

    /** Data index (0..dataDisks-1) of array chunk {@code chunk} within its stripe. */
    public int dataIndexOfChunk(long chunk) {
        return (int) (chunk % dataDisks);
    }

    /** Member slot that holds parity in {@code stripe}. */
    public int paritySlot(long stripe) {
        switch (algorithm) {
            case LEFT_ASYMMETRIC:
            case LEFT_SYMMETRIC:
                return dataDisks - (int) (stripe % disks);
            case RIGHT_ASYMMETRIC:
            case RIGHT_SYMMETRIC:
                return (int) (stripe % disks);
            case PARITY_FIRST:
                return 0;
            case PARITY_LAST:
                return dataDisks;
            default:
                throw new AssertionError(algorithm);
        }
    }

    /** Member slot holding data index {@code dataIndex} of {@code stripe}. */
    public int dataSlot(long stripe, int dataIndex) {
        int parity = paritySlot(stripe);
        switch (algorithm) {
            case LEFT_ASYMMETRIC:
            case RIGHT_ASYMMETRIC:
                return dataIndex >= parity ? dataIndex + 1 : dataIndex;
            case LEFT_SYMMETRIC:
            case RIGHT_SYMMETRIC:
                int slot = parity + 1 + dataIndex;
                return slot >= disks ? slot - disks : slot;
            case PARITY_FIRST:
                return dataIndex + 1;
            case PARITY_LAST:
                return dataIndex;
            default:
                throw new AssertionError(algorithm);
        }
    }

    /**
     * Inverse of {@link #dataSlot}: the data index held by member {@code slot} in {@code stripe},
     * or -1 when that slot holds parity (md's {@code raid5_compute_blocknr}).
     */
    public int dataIndexOfSlot(long stripe, int slot) {
        int parity = paritySlot(stripe);
        if (slot == parity) {
            return -1;
        }
        switch (algorithm) {
            case LEFT_ASYMMETRIC:
            case RIGHT_ASYMMETRIC:
                return slot > parity ? slot - 1 : slot;
            case LEFT_SYMMETRIC:
            case RIGHT_SYMMETRIC:
                int index = slot - parity - 1;
                return index < 0 ? index + disks : index;
            case PARITY_FIRST:
                return slot - 1;
            case PARITY_LAST:
                return slot;
            default:
                throw new AssertionError(algorithm);
        }
    }

    /** Offset within the member's data area of the chunk of {@code stripe}. */
    public long memberOffset(long stripe) {
        return stripe << chunkShift;
    }

    /** The array chunk number of data index {@code dataIndex} in {@code stripe}. */
    public long chunkNumber(long stripe, int dataIndex) {
        return stripe * dataDisks + dataIndex;
    }

    @Override
    public String toString() {
        return "raid5 " + algorithm + ", " + disks + " members, chunk " + chunkSize + " bytes, " + stripes
                + " stripes, " + arrayBytes() + " bytes";
    }
}
