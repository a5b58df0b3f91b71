package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.Superblock;

/** Create, close, reassemble, dirty/clean, and every refusal at assembly and at the I/O boundary. */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ArrayLifecycleTest {
    private static final int CHUNK = 64 * 1024;
    private static final long MEMBER = (4L << 20);

    @TempDir
    Path dir;

    private List<MemberDisk> files(String prefix, int n) throws IOException {
        List<MemberDisk> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(FileDisk.createOrExtend(dir.resolve(prefix + i + ".img"), MEMBER, false));
        }
        return list;
    }

    private List<MemberDisk> reopen(String prefix, int n) throws IOException {
        List<MemberDisk> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(FileDisk.open(dir.resolve(prefix + i + ".img")));
        }
        return list;
    }

    private static ArraySpec spec() {
        return ArraySpec.builder()
                .chunkSize(CHUNK)
                .assumeClean(true)
                .name("test:lifecycle")
                .build();
    }

    private static byte[] fill(Raid5Array array, long seed) throws IOException {
        byte[] image = new byte[(int) array.size()];
        new Random(seed).nextBytes(image);
        array.write(0, ByteBuffer.wrap(image), 0, image.length);
        return image;
    }

    private static void closeAll(List<MemberDisk> disks) throws IOException {
        for (MemberDisk d : disks) {
            d.close();
        }
    }

    @Test
    void closeAndReassembleInAnyOrderKeepsEveryByte() throws IOException {
        byte[] image;
        String uuid;
        try (Raid5Array array = Raid5Array.create(spec(), files("m", 4))) {
            image = fill(array, 1);
            uuid = array.uuid();
        }
        List<MemberDisk> shuffled = reopen("m", 4);
        Collections.shuffle(shuffled, new Random(5));
        try (Raid5Array array = Raid5Array.assemble(shuffled)) {
            assertEquals(uuid, array.uuid());
            assertFalse(array.isDegraded());
            assertTrue(array.status().clean(), "closed cleanly, assembled clean");
            ArrayOracle.assertArrayHolds(array, image);
        }
    }

    /**
     * mdadm's {@code missing}: a null member is an empty slot. The array starts degraded with no
     * resync pending (there is nothing to compare parity with), keeps every byte across a reassembly
     * of the present members, and a spare added later is rebuilt to parity that holds everywhere.
     */
    @Test
    void createWithAMissingSlotRunsDegradedUntilASpareIsRebuilt() throws Exception {
        List<MemberDisk> present = files("g", 3);
        List<MemberDisk> slots = new ArrayList<>(present);
        slots.add(1, null);
        ArraySpec notClean =
                ArraySpec.builder().chunkSize(CHUNK).name("test:missing").build();
        byte[] image;
        try (Raid5Array array = Raid5Array.create(notClean, slots)) {
            assertTrue(array.isDegraded());
            assertFalse(array.status().resyncPending(), "a degraded array has nothing to resync");
            assertEquals(null, array.status().sync(), "no pass runs");
            assertEquals(4, array.status().raidDisks());
            image = fill(array, 9);
            ArrayOracle.assertArrayHolds(array, image);
        }
        List<MemberDisk> again = reopen("g", 3);
        Superblock sb = SuperblockIo.read(again.get(2));
        assertEquals(3, sb.role(), "the member after the gap keeps slot 3");
        assertEquals(4, sb.raidDisks());
        MemberDisk spare = FileDisk.createOrExtend(dir.resolve("g-spare.img"), MEMBER, false);
        try (Raid5Array array = Raid5Array.assemble(again)) {
            assertTrue(array.isDegraded());
            ArrayOracle.assertArrayHolds(array, image);
            array.addSpare(spare);
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            assertFalse(array.isDegraded());
            ArrayOracle.assertArrayHolds(array, image);
            List<MemberDisk> all = new ArrayList<>(again);
            all.add(spare);
            ArrayOracle.assertParityConsistent(
                    all,
                    array.core.table.slots[0].dataOffsetBytes,
                    array.status().memberDataBytes());
        }
        List<MemberDisk> two = new ArrayList<>(files("h", 2));
        two.add(null);
        two.add(null);
        assertThrows(ArrayConfigException.class, () -> Raid5Array.create(notClean, two));
    }

    @Test
    void arrayIsDirtyOnDiskWhileWritingAndCleanAfterClose() throws Exception {
        List<MemberDisk> files = files("d", 3);
        List<org.raidfive.disk.FaultyDisk> disks = new ArrayList<>();
        for (MemberDisk f : files) {
            disks.add(new org.raidfive.disk.FaultyDisk(f));
        }
        Raid5Array array = Raid5Array.create(spec(), disks);
        Superblock before = SuperblockIo.read(files.get(0));
        assertTrue(before.isClean(), "clean after create with assumeClean");
        disks.get(2).latency(500, java.util.concurrent.TimeUnit.MILLISECONDS);
        Thread writer = new Thread(() -> {
            try {
                array.write(0, ByteBuffer.allocate(3 * CHUNK), 0, 3 * CHUNK);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        writer.start();
        Thread.sleep(200);
        Superblock during = SuperblockIo.read(files.get(1));
        assertEquals(0, during.resyncOffset(), "dirty: resync_offset 0 while a write is in flight");
        assertTrue(during.events() > before.events(), "events bumped");
        writer.join();
        disks.get(2).latency(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        array.close();
        try (FileDisk d = FileDisk.open(dir.resolve("d2.img"))) {
            Superblock after = SuperblockIo.read(d);
            assertTrue(after.isClean());
            assertTrue(after.events() > during.events());
        }
    }

    @Test
    void safemodeMarksAnIdleArrayCleanWithoutClosing() throws Exception {
        List<MemberDisk> disks = files("q", 3);
        try (Raid5Array array = Raid5Array.create(spec(), disks)) {
            array.write(0, ByteBuffer.allocate(4096), 0, 4096);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!SuperblockIo.read(disks.get(0)).isClean()) {
                assertTrue(System.nanoTime() < deadline, "idle array marked clean by safemode");
                Thread.sleep(20);
            }
            assertTrue(array.status().clean());
            array.write(4096, ByteBuffer.allocate(4096), 0, 4096);
            // The write's note keeps the next safemode tick from cleaning, so this read is in time.
            assertEquals(0, SuperblockIo.read(disks.get(1)).resyncOffset(), "dirty again as soon as a write arrives");
        }
    }

    @Test
    void dirtyArrayIsResyncedAtAssembly() throws Exception {
        List<MemberDisk> disks = files("r", 4);
        byte[] image;
        Raid5Array array = Raid5Array.create(spec(), disks);
        image = fill(array, 2);
        // Simulate a crash: drop the array without close (superblocks say dirty), then damage parity.
        array.flush();
        long dataOffset = array.status().members().get(0).dataOffset();
        int paritySlot = array.layout().paritySlot(0);
        disks.get(paritySlot).write(dataOffset + 100 * 512, ByteBuffer.wrap(new byte[512]), 0, 512);
        array.crashForTest();
        closeAll(disks);
        List<MemberDisk> again = reopen("r", 4);
        try (Raid5Array reassembled = Raid5Array.assemble(again)) {
            assertTrue(reassembled.awaitSync(Duration.ofSeconds(60)).ended());
            assertEquals(SyncAction.RESYNC, reassembled.syncProgress().action());
            assertTrue(reassembled.syncProgress().complete());
            ArrayOracle.assertParityConsistent(
                    again, dataOffset, reassembled.layout().memberBytesUsed());
            ArrayOracle.assertArrayHolds(reassembled, image);
        }
        try (Raid5Array clean = Raid5Array.assemble(reopen("r", 4))) {
            assertTrue(clean.status().clean(), "resynced then closed: clean");
        }
    }

    @Test
    void createWithoutAssumeCleanResyncsGarbageMembers() throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        Random random = new Random(3);
        for (int i = 0; i < 4; i++) {
            MemoryDisk d = new MemoryDisk(MEMBER);
            byte[] junk = new byte[(int) MEMBER];
            random.nextBytes(junk);
            d.write(0, ByteBuffer.wrap(junk), 0, junk.length);
            disks.add(d);
        }
        try (Raid5Array array =
                Raid5Array.create(ArraySpec.builder().chunkSize(CHUNK).build(), disks)) {
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            long dataOffset = array.status().members().get(0).dataOffset();
            ArrayOracle.assertParityConsistent(disks, dataOffset, array.layout().memberBytesUsed());
        }
    }

    @Test
    void assemblyRefusesForeignDuplicateCorruptTruncatedAndTooFewMembers() throws IOException {
        try (Raid5Array a = Raid5Array.create(spec(), files("a", 3))) {
            fill(a, 3);
        }
        try (Raid5Array b = Raid5Array.create(spec(), files("b", 3))) {
            fill(b, 4);
        }
        // a member of another array
        List<MemberDisk> mixed = reopen("a", 3);
        mixed.set(2, FileDisk.open(dir.resolve("b0.img")));
        ArrayConfigException e = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(mixed));
        assertTrue(e.getMessage().contains("b0.img") && e.getMessage().contains("another array"), e.getMessage());
        closeAll(mixed);
        // the same member twice
        List<MemberDisk> twice = reopen("a", 3);
        MemberDisk dup = FileDisk.open(dir.resolve("a0.img"));
        List<MemberDisk> withDup = new ArrayList<>(twice);
        withDup.add(dup);
        e = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(withDup));
        assertTrue(e.getMessage().contains("a0.img") && e.getMessage().contains("twice"), e.getMessage());
        closeAll(withDup);
        // too few members
        List<MemberDisk> one = reopen("a", 1);
        e = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(one));
        assertTrue(e.getMessage().contains("too few members"), e.getMessage());
        closeAll(one);
        // not a member at all
        MemberDisk blank = FileDisk.createOrExtend(dir.resolve("blank.img"), MEMBER, false);
        List<MemberDisk> withBlank = reopen("a", 2);
        withBlank.add(blank);
        e = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(withBlank));
        assertTrue(e.getMessage().contains("blank.img") && e.getMessage().contains("not an md member"), e.getMessage());
        closeAll(withBlank);
        // a corrupt superblock
        try (FileDisk d = FileDisk.open(dir.resolve("a1.img"))) {
            d.write(4096 + 40, ByteBuffer.wrap(new byte[] {'X'}), 0, 1);
        }
        List<MemberDisk> corrupt = reopen("a", 3);
        e = assertThrows(ArrayConfigException.class, () -> Raid5Array.assemble(corrupt));
        assertTrue(
                e.getMessage().contains("a1.img")
                        && e.getMessage().toLowerCase().contains("checksum"),
                e.getMessage());
        closeAll(corrupt);
        // a truncated member
        try (java.nio.channels.FileChannel ch =
                java.nio.channels.FileChannel.open(dir.resolve("b1.img"), java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(MEMBER / 2);
        }
        // a truncated member is left out as mdadm leaves out a device too small for its data: degraded
        List<MemberDisk> truncated = reopen("b", 3);
        try (Raid5Array degraded = Raid5Array.assemble(truncated, AssembleOptions.DEFAULT.withReadOnly(true))) {
            assertTrue(degraded.isDegraded());
            AssemblyReport.LeftOut out = degraded.assemblyReport().leftOut().get(0);
            assertTrue(out.disk().name().contains("b1.img") && out.reason().contains("too small"), out.reason());
        }
        closeAll(truncated);
    }

    @Test
    void staleMemberIsLeftOutLikeMdadmUnlessTakenAsSpare() throws Exception {
        List<MemberDisk> disks = files("s", 4);
        byte[] image;
        try (Raid5Array array = Raid5Array.create(spec(), disks)) {
            image = fill(array, 6);
            array.fail(disks.get(1));
            array.write(0, ByteBuffer.wrap(new byte[4096]), 0, 4096);
            System.arraycopy(new byte[4096], 0, image, 0, 4096);
        }
        List<MemberDisk> all = reopen("s", 4);
        byte[] staleBefore = java.nio.file.Files.readAllBytes(dir.resolve("s1.img"));
        try (Raid5Array array = Raid5Array.assemble(all)) {
            AssemblyReport report = array.assemblyReport();
            assertEquals(1, report.leftOut().size(), report.lines().toString());
            assertEquals(all.get(1), report.leftOut().get(0).disk());
            assertTrue(
                    report.leftOut().get(0).reason().startsWith("failed earlier"),
                    report.lines().toString());
            assertTrue(array.isDegraded(), "runs without the non-fresh member");
            ArrayOracle.assertArrayHolds(array, image);
        }
        closeAll(all);
        assertArrayEquals(
                staleBefore,
                java.nio.file.Files.readAllBytes(dir.resolve("s1.img")),
                "the member left out was not written");
        List<MemberDisk> again = reopen("s", 4);
        try (Raid5Array array = Raid5Array.assemble(again, AssembleOptions.DEFAULT.withTakeStaleAsSpare(true))) {
            assertTrue(array.awaitSync(Duration.ofSeconds(60)).ended());
            assertFalse(array.isDegraded(), "the stale member was rebuilt");
            ArrayOracle.assertArrayHolds(array, image);
            ArrayOracle.assertParityConsistent(
                    again,
                    array.status().members().get(0).dataOffset(),
                    array.layout().memberBytesUsed());
        }
    }

    @Test
    void misalignedOrOutOfRangeIoIsRefusedAndWritesNothing() throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            disks.add(new MemoryDisk(MEMBER));
        }
        try (Raid5Array array = Raid5Array.create(spec(), disks)) {
            byte[] image = fill(array, 7);
            awaitClean(array); // safemode's superblock update is not what this test is about
            byte[][] before = snapshot(disks);
            long size = array.size();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> array.write(100, buf, 0, 512));
            assertTrue(e.getMessage().contains("100") && e.getMessage().contains("512"), e.getMessage());
            java.io.EOFException eof =
                    assertThrows(java.io.EOFException.class, () -> array.write(size - 512, buf, 0, 1024));
            assertTrue(
                    eof.getMessage().contains(Long.toString(size - 512))
                            && eof.getMessage().contains("1024")
                            && eof.getMessage().contains(Long.toString(size)),
                    eof.getMessage());
            assertThrows(java.io.EOFException.class, () -> array.read(size, buf, 0, 512));
            assertThrows(java.io.EOFException.class, () -> array.read(-512, buf, 0, 512));
            assertThrows(IllegalArgumentException.class, () -> array.read(0, buf, 0, 1000));
            assertThrows(IndexOutOfBoundsException.class, () -> array.write(0, buf, 4096, 8192));
            byte[][] after = snapshot(disks);
            for (int i = 0; i < disks.size(); i++) {
                assertArrayEquals(before[i], after[i], "member " + i + " unchanged by refused I/O");
            }
            ArrayOracle.assertArrayHolds(array, image);
        }
    }

    static void awaitClean(Raid5Array array) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!array.status().clean()) {
            assertTrue(System.nanoTime() < deadline, "safemode marks the idle array clean");
            Thread.sleep(10);
        }
    }

    private static byte[][] snapshot(List<MemberDisk> disks) throws IOException {
        byte[][] out = new byte[disks.size()][];
        for (int i = 0; i < disks.size(); i++) {
            out[i] = new byte[(int) disks.get(i).size()];
            disks.get(i).read(0, ByteBuffer.wrap(out[i]), 0, out[i].length);
        }
        return out;
    }

    @Test
    void eachMemberGetsItsOwnIdentityAndTheSameArrayUuid() throws Exception {
        List<MemberDisk> disks = files("u", 3);
        try (Raid5Array array = Raid5Array.create(spec(), disks)) {
            Superblock s0 = SuperblockIo.read(disks.get(0));
            Superblock s1 = SuperblockIo.read(disks.get(1));
            assertArrayEquals(s0.setUuid(), s1.setUuid());
            assertNotEquals(
                    org.raidfive.md.MdUuid.format(s0.deviceUuid()), org.raidfive.md.MdUuid.format(s1.deviceUuid()));
            assertEquals(0, s0.devNumber());
            assertEquals(1, s1.devNumber());
            assertEquals(1, s0.devRole(1));
            assertEquals("test:lifecycle", s0.name());
            assertEquals(CHUNK / 512, s0.chunkSectors());
        }
    }
}
