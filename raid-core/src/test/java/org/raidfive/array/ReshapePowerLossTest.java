package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.raidfive.array.ReshapeTestDisks.InjectedCrash;
import org.raidfive.array.ReshapeTestDisks.VolatileCache;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.Superblock;

/**
 * A power loss during a reshape, on members with a volatile write cache: only what was flushed
 * survives, plus (the worst case for a checkpoint) the superblock writes that were not. md's rule
 * is that the superblock recording a new position is written only once the data below it is
 * durable on every member; a checkpoint that broke it would leave a superblock recording stripes
 * whose new data the power loss took, and the resumed reshape would read them wrong.
 */
@Timeout(120)
class ReshapePowerLossTest {

    @ParameterizedTest(name = "{0}, power lost at {1} #{2}")
    @CsvSource({
        "grow, CHECKPOINT_MEMBER, 1",
        "grow, CHECKPOINT_MEMBER, 3",
        "grow, CHECKPOINT_MEMBER, 7",
        "grow, MEMBER_WRITTEN, 40",
        "grow, FINISH_MEMBER, 2",
        "shrink, CHECKPOINT_MEMBER, 2",
        "shrink, CHECKPOINT_MEMBER, 5",
        "shrink, MEMBER_WRITTEN, 30",
        "chunk change, CHECKPOINT_MEMBER, 1",
        "chunk change, CHECKPOINT_MEMBER, 6",
    })
    void aPowerLossLeavesOnlyDurableDataAndTheReshapeResumesFromIt(String what, OfflineReshape.Point point, int nth)
            throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapePowerLossTest seed " + seed + ": " + what + ", power lost at " + point + " #" + nth);
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            members.add(new VolatileCache(RoomyArrays.MEMBER, "m" + i));
        }
        byte[] image;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(RoomyArrays.CHUNK)
                        .algorithm(Raid5Algorithm.LEFT_SYMMETRIC)
                        .memberDataBytes(RoomyArrays.DATA)
                        .assumeClean(true)
                        .build(),
                members)) {
            image = LoadGenerator.fillRandom(array, seed);
        }
        List<MemberDisk> added =
                what.equals("grow") ? List.of(new VolatileCache(RoomyArrays.MEMBER, "new0")) : List.of();
        List<MemberDisk> all = new ArrayList<>(members);
        all.addAll(added);
        for (MemberDisk d : all) {
            d.flush(); // a clean start: the array as made is durable
        }
        AtomicInteger seen = new AtomicInteger();
        assertThrows(InjectedCrash.class, () -> {
            try (OfflineReshape r = RoomyArrays.start(what, members, added)) {
                r.setBatchMemberBytes(RoomyArrays.CHUNK * 4); // many batches, and checkpoints between them
                r.hook((p, at) -> {
                    if (p == point && seen.incrementAndGet() == nth) {
                        throw new InjectedCrash(p + " #" + nth + " at " + at);
                    }
                });
                r.run(() -> false, p -> {});
            }
        });
        List<MemberDisk> after = new ArrayList<>();
        for (MemberDisk d : all) {
            after.add(((VolatileCache) d).afterPowerLoss());
        }
        boolean ended = true;
        for (MemberDisk d : after) {
            ended &= !SuperblockIo.read(d).hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE);
        }
        if (!ended) {
            try (OfflineReshape r = OfflineReshape.resume(after)) {
                assertTrue(r.run(() -> false, p -> {}));
            }
        }
        Superblock any = null;
        for (MemberDisk d : after) {
            Superblock sb = SuperblockIo.read(d);
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), d.name() + " still reshaping");
            any = sb;
        }
        int disks = what.equals("grow") ? 5 : what.equals("shrink") ? 3 : 4;
        assertEquals(disks, any.raidDisks());
        List<MemberDisk> active = new ArrayList<>();
        for (MemberDisk d : after) {
            if (SuperblockIo.read(d).role() < disks) {
                active.add(d);
            }
        }
        ArrayOracle.assertParityConsistent(active, any.dataOffset() * 512, any.size() * 512);
        try (Raid5Array array = Raid5Array.assemble(active)) {
            ArrayOracle.assertArrayHolds(array, Arrays.copyOf(image, (int) array.size()));
        }
    }
}
