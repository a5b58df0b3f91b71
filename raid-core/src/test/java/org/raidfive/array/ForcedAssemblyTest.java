package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * A passing fault on two members (a full file system, a file-size limit) fails the array, though
 * every acknowledged byte is still on the members. Plain assembly refuses it and names force;
 * forced assembly takes both members back (they failed together), marks the array dirty, and after
 * the resync every acknowledged write reads back and parity is consistent.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ForcedAssemblyTest {
    private static final long MEMBER = 4L << 20;
    private static final int CHUNK = 64 * 1024;

    @TempDir
    Path dir;

    private List<MemberDisk> open(int n) throws IOException {
        List<MemberDisk> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(FileDisk.open(dir.resolve("f" + i + ".img")));
        }
        return out;
    }

    @Test
    void membersThatFailedTogetherAreTakenBackByForceAndEveryAcknowledgedWriteSurvives() throws Exception {
        long seed = System.nanoTime();
        System.out.println("forced assembly seed " + seed);
        Random random = new Random(seed);
        List<FaultyDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(new FaultyDisk(FileDisk.createOrExtend(dir.resolve("f" + i + ".img"), MEMBER, false)));
        }
        byte[] image;
        int at;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            image = new byte[(int) array.size()];
            random.nextBytes(image);
            array.write(0, ByteBuffer.wrap(image), 0, image.length);
            array.flush();
            // The file system fills: from now on every write to two members fails (EFBIG/ENOSPC).
            disks.get(1).failWrites(0, MEMBER);
            disks.get(2).failWrites(0, MEMBER);
            // A full-stripe write: every member is written, two of them fail.
            int stripeBytes = 3 * CHUNK;
            at = random.nextInt((int) (array.size() / stripeBytes)) * stripeBytes;
            int where = at;
            assertThrows(
                    IOException.class,
                    () -> array.write(
                            where, ByteBuffer.wrap(new byte[stripeBytes]), 0, stripeBytes)); // not acknowledged
            assertTrue(array.isFailed(), "two members out: failed");
        }
        for (FaultyDisk d : disks) {
            d.close();
        }
        List<MemberDisk> plain = open(4);
        ArrayConfigException refused = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(plain));
        assertTrue(
                refused.getMessage().contains("too few members")
                        && refused.getMessage().contains("force"),
                refused.getMessage());
        for (MemberDisk d : plain) {
            d.close();
        }
        List<MemberDisk> again = open(4);
        try (Raid5Array array = Raid5Array.assemble(
                again, AssembleOptions.DEFAULT.withForce(true).withSyncLimits(SyncLimits.UNLIMITED))) {
            AssemblyReport report = array.assemblyReport();
            assertEquals(2, report.forced().size(), report.lines().toString());
            assertTrue(report.resyncForced());
            assertTrue(
                    report.lines().get(0).startsWith("forcing event count in "),
                    report.lines().toString());
            assertFalse(array.isDegraded(), "both failed-together members are back");
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            assertEquals(SyncAction.RESYNC, array.syncProgress().action());
            byte[] got = new byte[image.length];
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            // The write that failed was never acknowledged: each of its blocks holds the old bytes or
            // the new (zeros), whole; every other byte is as acknowledged.
            for (int b = at; b < at + 3 * CHUNK; b += 4096) {
                boolean old = java.util.Arrays.equals(got, b, b + 4096, image, b, b + 4096);
                boolean fresh = java.util.Arrays.equals(got, b, b + 4096, new byte[4096], 0, 4096);
                assertTrue(old || fresh, "the unacknowledged block at " + b + " is whole");
            }
            System.arraycopy(image, at, got, at, 3 * CHUNK);
            assertTrue(java.util.Arrays.equals(got, image), "every acknowledged write reads back");
            ArrayOracle.assertParityConsistent(
                    again,
                    array.status().members().get(0).dataOffset(),
                    array.layout().memberBytesUsed());
        }
        List<MemberDisk> after = open(4);
        try (Raid5Array array = Raid5Array.assemble(after)) {
            assertTrue(array.assemblyReport().forced().isEmpty(), "an ordinary array again");
            assertFalse(array.isDegraded());
        }
    }

    @Test
    void forceTakesBackOnlyWhatMdWouldWhenTheArrayCanRunWithoutIt() throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(FileDisk.createOrExtend(dir.resolve("f" + i + ".img"), MEMBER, false));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), disks)) {
            array.fail(disks.get(3));
            for (int i = 0; i < 20; i++) { // the array moves on: events far past the failure
                array.write(0, ByteBuffer.wrap(new byte[4096]), 0, 4096);
                array.flush();
                array.quiesce(() -> array.meta.markClean());
            }
        }
        List<MemberDisk> again = open(4);
        try (Raid5Array array = Raid5Array.assemble(
                again, AssembleOptions.DEFAULT.withForce(true).withStartSync(false))) {
            assertTrue(array.assemblyReport().forced().isEmpty(), "it can run degraded: nothing forced");
            assertEquals(1, array.assemblyReport().leftOut().size());
            assertTrue(array.isDegraded());
        }
    }
}
