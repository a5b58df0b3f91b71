package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;
import static org.raidfive.md.Superblock.*;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * encode then decode gives back every field, and encoding the result again
 * gives the same bytes, for random valid superblocks. jqwik prints the seed
 * of every run; rerun a failure with {@code @Property(seed = "...")}.
 */
class SuperblockRoundTripTest {
    @Property(tries = 300)
    void decodeOfEncodeIsIdentity(@ForAll("superblocks") final Superblock sb) throws SuperblockException {
        final byte[] block = new byte[MAX_SUPERBLOCK_BYTES];
        sb.encode(ByteBuffer.wrap(block));
        final Superblock back = Superblock.decode(ByteBuffer.wrap(block), "random");
        assertEquals(sb, back, () -> "wrote " + sb + "\nread  " + back);
        assertEquals(sb.sbCsum(), back.sbCsum());
        assertEquals(sb.toString(), back.toString());

        final byte[] again = new byte[MAX_SUPERBLOCK_BYTES];
        back.encode(ByteBuffer.wrap(again));
        assertArrayEquals(block, again);
        assertEquals(ChecksumOracleTest.le32(ChecksumOracleTest.handBuilt(sb), 216), sb.sbCsum());
    }

    @Provide
    Arbitrary<Superblock> superblocks() {
        return Arbitraries.randomValue(SuperblockRoundTripTest::randomSuperblock);
    }

    /** A random superblock that satisfies every decode rule, with every field exercised. */
    static Superblock randomSuperblock(final Random r) {
        final int[] optional = {
            MD_FEATURE_BITMAP_OFFSET,
            MD_FEATURE_RECOVERY_OFFSET,
            MD_FEATURE_RESHAPE_ACTIVE,
            MD_FEATURE_BAD_BLOCKS,
            MD_FEATURE_REPLACEMENT,
            MD_FEATURE_RESHAPE_BACKWARDS,
            MD_FEATURE_NEW_OFFSET,
            MD_FEATURE_RECOVERY_BITMAP,
            MD_FEATURE_CLUSTERED,
            MD_FEATURE_JOURNAL
        };
        int features = 0;
        for (final int f : optional) {
            features |= r.nextInt(3) == 0 ? f : 0;
        }
        if (r.nextInt(8) == 0) {
            features &= ~(MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_JOURNAL);
            features |= r.nextBoolean() ? MD_FEATURE_PPL : MD_FEATURE_MULTIPLE_PPLS;
        }

        final int raidDisks = r.nextInt(10) == 0 ? 2 + r.nextInt(MAX_DEV_LIMIT - 1) : 2 + r.nextInt(30);
        final int maxDev = r.nextInt(5) == 0 ? r.nextInt(MAX_DEV_LIMIT + 1) : mdadmMaxDev(Math.min(raidDisks, 1920));
        final int devNumber = r.nextInt(Math.max(1, Math.min(maxDev + 3, MAX_DEV_LIMIT)));
        final long superEnd = SUPERBLOCK_OFFSET_SECTORS + (256 + 2 * Math.max(maxDev, devNumber + 1) + 511) / 512;
        final long dataOffset = superEnd + (r.nextBoolean() ? r.nextInt(300_000) : (r.nextLong() >>> 20));
        final long dataSize = 10 + (r.nextLong() >>> 24);
        final long size = 1 + Math.floorMod(r.nextLong(), dataSize);

        final Superblock sb = new Superblock()
                .featureMap(features)
                .setUuid(MdUuid.random(r))
                .name(randomName(r))
                .ctime(r.nextLong())
                .level(LEVEL_RAID5)
                .layout(r.nextInt(6))
                .size(size)
                .chunkSectors(1 << (3 + r.nextInt(20)))
                .raidDisks(raidDisks)
                .bitmapOffset(r.nextInt())
                .newLevel(r.nextInt())
                .reshapePosition(r.nextLong())
                .deltaDisks(r.nextInt(9) - 4)
                .newLayout(r.nextInt())
                .newChunk(r.nextInt())
                .newOffset(r.nextInt(1 << 20))
                .dataOffset(dataOffset)
                .dataSize(dataSize)
                .recoveryOffset(r.nextLong())
                .maxDev(maxDev)
                .devNumber(devNumber)
                .cntCorrectedRead(r.nextInt())
                .deviceUuid(MdUuid.random(r))
                .devflags(r.nextInt(256))
                .bblogShift(r.nextInt(256))
                .bblogSize((features & MD_FEATURE_BAD_BLOCKS) != 0 ? r.nextInt(9) : r.nextInt(65536))
                .bblogOffset((features & MD_FEATURE_BAD_BLOCKS) != 0 ? 1 + r.nextInt(1000) : r.nextInt())
                .utime(r.nextLong())
                .events(r.nextLong())
                .resyncOffset(r.nextBoolean() ? RESYNC_CLEAN : r.nextLong());
        for (int d = 0; d < sb.maxDev(); d++) {
            sb.devRole(d, randomRole(r, raidDisks, (features & MD_FEATURE_JOURNAL) != 0));
        }
        return sb;
    }

    private static int randomRole(final Random r, final int raidDisks, final boolean journal) {
        switch (r.nextInt(5)) {
            case 0:
                return ROLE_FAULTY;
            case 1:
                return journal ? ROLE_JOURNAL : ROLE_SPARE;
            case 2:
                return ROLE_SPARE;
            default:
                return r.nextInt(raidDisks);
        }
    }

    private static String randomName(final Random r) {
        final int length = r.nextInt(5) == 0 ? 32 : r.nextInt(33);
        final StringBuilder name = new StringBuilder();
        while (name.toString().getBytes(StandardCharsets.UTF_8).length < length) {
            name.append((char) (r.nextInt(10) == 0 ? 0xe9 : 'a' + r.nextInt(26))); // some 2-byte UTF-8
        }
        String s = name.toString();
        while (s.getBytes(StandardCharsets.UTF_8).length > 32) {
            s = s.substring(0, s.length() - 1);
        }
        return s;
    }
}
