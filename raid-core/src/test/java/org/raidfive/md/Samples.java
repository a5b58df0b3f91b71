package org.raidfive.md;

import java.nio.ByteBuffer;

/** Valid superblocks for tests: a clean 4-member raid5 on 64 MiB members, as mdadm 4.2 would lay it out. */
final class Samples {
    static final String ARRAY_UUID = "0df5eb39:41befa48:ee45b56f:52c10d17";
    static final long MEMBER_BYTES = 64L << 20;
    static final long MEMBER_SECTORS = MEMBER_BYTES / 512;
    static final int CHUNK_SECTORS = 1024; // 512 KiB, mdadm's default
    static final long CTIME = MdTime.of(1_700_000_000L, 0);
    static final long UTIME = MdTime.of(1_700_000_123L, 456_789);

    private Samples() {}

    /** Member {@code devNumber} (0..3, role = dev number) of a clean 4-disk raid5, events 42. */
    static Superblock member(final int devNumber) {
        return member(devNumber, CHUNK_SECTORS);
    }

    static Superblock member(final int devNumber, final int chunkSectors) {
        final long dataOffset = DataOffset.forNewMember(MEMBER_SECTORS, chunkSectors);
        final Superblock sb = new Superblock()
                .setUuid(MdUuid.parse(ARRAY_UUID))
                .name("rf-testhost:r5")
                .ctime(CTIME)
                .level(Superblock.LEVEL_RAID5)
                .layout(MdLayout.LEFT_SYMMETRIC)
                .chunkSectors(chunkSectors)
                .raidDisks(4)
                .size(DataOffset.usableSectors(MEMBER_SECTORS, chunkSectors))
                .dataOffset(dataOffset)
                .dataSize(MEMBER_SECTORS - dataOffset)
                .devNumber(devNumber)
                .deviceUuid(deviceUuid(devNumber))
                .utime(UTIME)
                .events(42)
                .resyncOffset(Superblock.RESYNC_CLEAN);
        for (int d = 0; d < 4; d++) {
            sb.devRole(d, d);
        }
        return sb;
    }

    static byte[] deviceUuid(final int devNumber) {
        final byte[] uuid = MdUuid.parse("a1b2c3d4:e5f60718:293a4b5c:6d7e8f90");
        uuid[15] = (byte) devNumber;
        return uuid;
    }

    /** The encoded bytes, exactly {@code encodedLength()} long. */
    static byte[] encode(final Superblock sb) {
        final byte[] bytes = new byte[sb.encodedLength()];
        sb.encode(ByteBuffer.wrap(bytes));
        return bytes;
    }

    /** A 4 KiB block as the kernel reads it: the superblock, then zeros. */
    static byte[] block(final Superblock sb) {
        final byte[] block = new byte[Superblock.MAX_SUPERBLOCK_BYTES];
        sb.encode(ByteBuffer.wrap(block));
        return block;
    }
}
