package org.raidfive.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;

/**
 * md features raidfive does not implement, on arrays Linux md made (md-vm): an array with a write
 * journal, one with the partial parity log, one stopped in the middle of a reshape are refused,
 * read-only or not, and nothing is written to them. An array whose member md recorded bad blocks
 * on is opened: those sectors are rebuilt from parity (the test overwrites them with garbage on the
 * host first), and the list survives raidfive's superblock writes for md to find again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class MdFeaturesIT {
    private static final long MEMBER_BYTES = 8L << 20;
    private static final int MIB = 1 << 20;

    private Workbench bench;
    private Map<String, GuestReport> reports;
    private final List<Path> journal = new ArrayList<>();
    private final List<Path> reshape = new ArrayList<>();
    private final List<Path> bad = new ArrayList<>();
    private byte[] data;
    private static final int BAD_SLOT = 1;
    /** Device sectors md is told are bad on the BAD_SLOT member: 8 sectors into its data, 16 of them. */
    private long badSector;

    @BeforeAll
    void mdMakesTheArrays() throws Exception {
        MdVm vm = MdVm.locate();
        bench = Workbench.of("md-features");
        data = new byte[24 * MIB];
        new Random(0xfea7L).nextBytes(data);
        Path dataImage = bench.dataImage("data", data);
        journal.addAll(bench.images("journal", 4, MEMBER_BYTES));
        reshape.addAll(bench.images("reshape", 4, MEMBER_BYTES));
        bad.addAll(bench.images("bad", 4, MEMBER_BYTES));
        GuestScript s = new GuestScript("md-features");
        String d = s.disk(dataImage);
        List<String> j = s.disks(journal);
        s.call(
                "md_create_opts",
                "journal",
                "md0",
                2,
                "--raid-devices=3",
                "--write-journal=" + j.get(3),
                j.subList(0, 3));
        s.call("md_fill", "journal", "md0", d, 0, 8);
        s.call("md_stop", "journal", "md0");
        List<String> r = s.disks(reshape);
        s.call("md_create_opts", "reshape", "md2", 2, "--raid-devices=3", "--chunk=64", r.subList(0, 3));
        s.call("md_fill", "reshape", "md2", d, 0, 8);
        s.call("md_grow_stalled", "reshape", "md2", r.get(3));
        List<String> b = s.disks(bad);
        s.call("md_create_opts", "bad", "md3", 2, "--raid-devices=4", "--chunk=64", b);
        s.call("md_fill", "bad", "md3", d, 0, 20);
        s.call("md_report", "bad", "md3");
        long dataOffset = 2048; // mdadm 4.2's data offset for 8 MiB members (1 MiB), checked below
        badSector = dataOffset + 8;
        s.call("md_bad_blocks", "bad", "md3", b.get(BAD_SLOT), badSector, 16);
        s.call("md_stop", "bad", "md3");
        reports = BootRunner.run(
                vm, List.of(s), false, Duration.ofMinutes(10), bench.dir(), List.of("journal", "reshape", "bad"));
    }

    @AfterAll
    void cleanUp() {
        if (bench != null) {
            bench.deleteImages();
        }
    }

    private Map<String, String> guest(String c) {
        return reports.get(c).result(c);
    }

    private void assertRefusedUnchanged(List<Path> members, String... words) throws Exception {
        List<byte[]> before = new ArrayList<>();
        for (Path m : members) {
            before.add(Files.readAllBytes(m));
        }
        for (boolean readOnly : new boolean[] {false, true}) {
            List<MemberDisk> disks = Workbench.open(members);
            IOException e = assertThrows(
                    IOException.class,
                    () -> Raid5Array.assemble(
                            disks,
                            AssembleOptions.DEFAULT.withReadOnly(readOnly).withStartSync(false)));
            for (String w : words) {
                assertTrue(e.getMessage().contains(w), "'" + w + "' in: " + e.getMessage());
            }
            System.out.println("raidfive refuses: " + e.getMessage());
            for (MemberDisk d : disks) {
                d.close();
            }
        }
        for (int i = 0; i < members.size(); i++) {
            assertArrayEquals(before.get(i), Files.readAllBytes(members.get(i)), members.get(i) + " was written");
        }
    }

    @Test
    void anArrayWithAWriteJournalIsRefused() throws Exception {
        assertEquals(
                "0", guest("journal").get("create_rc"), reports.get("journal").describe("journal"));
        assertRefusedUnchanged(journal, "journal");
        assertRefusedUnchanged(journal.subList(0, 3), "journal"); // without the journal device too
    }

    @Test
    void anArrayStoppedMidReshapeIsRefused() throws Exception {
        Map<String, String> g = guest("reshape");
        assertEquals("0", g.get("grow_rc"), reports.get("reshape").describe("reshape"));
        Superblock sb = ExamineCheck.decode(reshape.get(0));
        assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md recorded the reshape: " + sb);
        assertRefusedUnchanged(reshape, "reshape");
        // md_grow_stalled gave mdadm a backup file: the data offset stays, which raidfive does not continue.
        List<byte[]> before = new ArrayList<>();
        for (Path m : reshape) {
            before.add(Files.readAllBytes(m));
        }
        List<MemberDisk> disks = Workbench.open(reshape);
        IOException e = assertThrows(IOException.class, () -> org.raidfive.array.OfflineReshape.resume(disks));
        assertTrue(e.getMessage().contains("backup file"), e.getMessage());
        for (MemberDisk d : disks) {
            d.close();
        }
        for (int i = 0; i < reshape.size(); i++) {
            assertArrayEquals(before.get(i), Files.readAllBytes(reshape.get(i)), reshape.get(i) + " was written");
        }
    }

    @Test
    void badBlocksMdRecordedAreRebuiltNeverReadAndKept() throws Exception {
        Map<String, String> g = guest("bad");
        assertEquals("0", g.get("badblocks_rc"), reports.get("bad").describe("bad"));
        Superblock sb = ExamineCheck.decode(bad.get(BAD_SLOT));
        assertEquals(2048, sb.dataOffset(), "the data offset this test assumed");
        assertTrue(sb.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS), "md wrote its bad block log: " + sb);
        // What those sectors hold now is garbage: a reader that trusted them would return it.
        try (RandomAccessFile f = new RandomAccessFile(bad.get(BAD_SLOT).toFile(), "rw")) {
            byte[] junk = new byte[16 * 512];
            new Random(1).nextBytes(junk);
            f.seek(badSector * 512);
            f.write(junk);
        }
        long size = Long.parseLong(g.get("size"));
        byte[] want = java.util.Arrays.copyOf(data, (int) Math.min(size, 20L * MIB));
        try (Raid5Array array = Raid5Array.assemble(Workbench.open(bad), AssembleOptions.DEFAULT.withReadOnly(true))) {
            byte[] got = new byte[want.length];
            array.read(0, java.nio.ByteBuffer.wrap(got), 0, got.length);
            assertArrayEquals(want, got, "md's listed sectors are rebuilt from parity, never returned");
            assertFalse(array.isDegraded());
        }
        try (Raid5Array array =
                Raid5Array.assemble(Workbench.open(bad), AssembleOptions.DEFAULT.withStartSync(false))) {
            array.write(8L * MIB, java.nio.ByteBuffer.wrap(new byte[4096]), 0, 4096); // elsewhere
        }
        Superblock after = ExamineCheck.decode(bad.get(BAD_SLOT));
        assertTrue(after.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS), "the list is kept for md: " + after);
        org.raidfive.md.Mdadm.Result out = org.raidfive.md.Mdadm.run(
                "--examine-badblocks", bad.get(BAD_SLOT).toString());
        assertTrue(
                out.stdout().contains(badSector + " for 16 sectors"),
                "mdadm --examine-badblocks still lists " + "them:\n" + out.stdout() + out.stderr());
    }
}
