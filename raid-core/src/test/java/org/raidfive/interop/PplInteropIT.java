package org.raidfive.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.ArrayOracle;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;

/**
 * md's partial parity log in both directions, against the real kernel in md-vm.
 *
 * <p>md to raidfive: {@code mdadm --create --consistency-policy=ppl} (4 members), filled, then
 * written on with sub-page O_DIRECT writes while md holds the array dirty, and its members copied
 * as a power cut leaves them; a second array the same, degraded. On the host the parity of every
 * stripe the newest io_unit of each member names is overwritten with garbage (torn writes): an
 * independent XOR check sees the damage. raidfive then starts the dirty array, recovers it from md's
 * log, its parity is consistent again and the data is md's; the dirty degraded copy starts without
 * force and reads md's data. raidfive's own PPL array of the same members has mdadm's data offset,
 * PPL place and size.
 *
 * <p>raidfive to md: raidfive's PPL array, one member failed, written by a writer process that is
 * killed with SIGKILL in the middle of its writes; the stripes its newest io_units name get torn
 * parity on the host. md assembles it degraded (its PPL recovery runs), the array is dumped for the
 * host, a fresh member is added and rebuilt, and md's check finds 0 mismatches; the missing
 * member's data, which no write touched, reads back through md as it was.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 25, unit = TimeUnit.MINUTES)
class PplInteropIT {
    private static final long MEMBER_BYTES = 16L << 20;
    private static final int MIB = 1 << 20;
    private static final int CHUNK_KIB = 64;
    private static final int CHUNK = CHUNK_KIB * 1024;
    private static final int DISKS = 4;
    private static final int ALGORITHM = 2; // mdadm's default, left-symmetric

    private Workbench bench;
    private Map<String, GuestReport> reports;
    private byte[] data;
    private byte[] mdImage;
    private final List<Path> md = new ArrayList<>();
    private final List<Path> mdDirty = new ArrayList<>();
    private final List<Path> deg = new ArrayList<>();
    private final List<Path> degDirty = new ArrayList<>();
    private final List<Path> ours = new ArrayList<>();
    private Path fresh;
    private Path dump;
    private byte[] missingBefore;
    private long oursDataOffset;
    private int tornByRaidfive;

    @BeforeAll
    void bothDirections() throws Exception {
        MdVm vm = MdVm.locate();
        bench = Workbench.of("ppl");
        data = new byte[24 * MIB];
        new Random(0x99L).nextBytes(data);
        Path dataImage = bench.dataImage("data", data);
        md.addAll(bench.images("md", DISKS, MEMBER_BYTES));
        mdDirty.addAll(bench.images("mdcopy", DISKS, MEMBER_BYTES));
        deg.addAll(bench.images("deg", DISKS, MEMBER_BYTES));
        degDirty.addAll(bench.images("degcopy", DISKS - 1, MEMBER_BYTES));

        // The array md writes: the data, then sub-page patches while held dirty (logged by md).
        mdImage = Arrays.copyOf(data, 24 * MIB);
        String[] patches = {"9:20001:3", "4100:30007:9", "40000:1234:16", "11111:40000:1", "45000:500:64"};
        for (String p : patches) {
            String[] f = p.split(":");
            int seek = Integer.parseInt(f[0]);
            int skip = Integer.parseInt(f[1]);
            int count = Integer.parseInt(f[2]);
            System.arraycopy(data, skip * 512, mdImage, seek * 512, count * 512);
        }

        GuestScript a = new GuestScript("ppl-md");
        String d = a.disk(dataImage);
        a.call(
                "md_create_opts",
                "mdppl",
                "md0",
                3,
                "--raid-devices=" + DISKS,
                "--consistency-policy=ppl",
                "--chunk=" + CHUNK_KIB,
                a.disks(md));
        a.call("md_fill", "mdppl", "md0", d, 0, 24);
        a.call("md_hold_dirty", "mdppl", "md0");
        a.call("md_patch", "mdppl", "md0", d, List.of(patches));
        for (int i = 0; i < DISKS; i++) {
            a.call("copy_dev", "mdppl", "m" + i, a.disk(md.get(i)), a.disk(mdDirty.get(i)));
        }
        a.call("md_report", "mdppl", "md0");
        a.call("md_stop", "mdppl", "md0");
        a.call(
                "md_create_opts",
                "degppl",
                "md1",
                3,
                "--raid-devices=" + DISKS,
                "--consistency-policy=ppl",
                "--chunk=" + CHUNK_KIB,
                a.disks(deg));
        a.call("md_fill", "degppl", "md1", d, 0, 24);
        a.call("md_fail_remove", "degppl", "md1", a.disk(deg.get(DISKS - 1)));
        a.call("md_hold_dirty", "degppl", "md1");
        a.call("md_patch", "degppl", "md1", d, List.of(patches));
        for (int i = 0; i < DISKS - 1; i++) {
            a.call("copy_dev", "degppl", "m" + i, a.disk(deg.get(i)), a.disk(degDirty.get(i)));
        }
        a.call("md_stop", "degppl", "md1");

        // raidfive's degraded PPL array, written by a process killed mid-write, parity torn on the host.
        ours.addAll(bench.images("ours", DISKS, MEMBER_BYTES));
        fresh = bench.image("fresh", MEMBER_BYTES);
        dump = bench.image("dump", 64L * MIB);
        makeRaidfiveArrayKilledMidWrite();
        GuestScript b = new GuestScript("ppl-raidfive");
        List<String> present = b.disks(ours.subList(0, DISKS - 1));
        b.call("md_assemble", "ours", "md0", "--run", present);
        b.call("md_report", "ours", "md0");
        b.call("md_dump", "ours", "md0", b.disk(dump));
        b.call("md_add", "ours", "md0", b.disk(fresh));
        b.call("md_check", "ours", "md0");
        b.call("md_report", "ours", "md0");
        b.call("md_stop", "ours", "md0");

        reports = BootRunner.run(
                vm, List.of(a, b), false, Duration.ofMinutes(15), bench.dir(), List.of("mdppl", "degppl", "ours"));
    }

    @AfterAll
    void cleanUp() {
        if (bench != null) {
            bench.deleteImages();
        }
    }

    private void makeRaidfiveArrayKilledMidWrite() throws Exception {
        List<MemberDisk> disks = Workbench.openNew(ours, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .consistencyPolicy(ConsistencyPolicy.PPL)
                        .build(),
                disks)) {
            byte[] fill = Arrays.copyOf(data, (int) Math.min(array.size(), data.length));
            array.write(0, ByteBuffer.wrap(fill), 0, fill.length);
            oursDataOffset = 0;
            array.fail(disks.get(DISKS - 1));
        }
        Superblock sb = ExamineCheck.decode(ours.get(0));
        oursDataOffset = sb.dataOffset() * 512;
        missingBefore = new byte[(int) (sb.size() * 512)];
        try (RandomAccessFile f = new RandomAccessFile(ours.get(DISKS - 1).toFile(), "r")) {
            f.seek(oursDataOffset);
            f.readFully(missingBefore);
        }
        // The writer of org.raidfive.array's write-hole test, on these files: killed after a few generations.
        Path dir = ours.get(0).getParent();
        Path link = Files.createTempDirectory("ppl-ours");
        for (int i = 0; i < DISKS; i++) {
            Files.createSymbolicLink(link.resolve("c" + i + ".img"), ours.get(i));
        }
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        "org.raidfive.array.WriteHoleWriter",
                        link.toString(),
                        Integer.toString(DISKS),
                        "0",
                        "4",
                        "false")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        org.raidfive.array.CrashWriter.killAfterFlushes(child, 12, 0, line -> {});
        for (Path p : Files.list(link).toList()) {
            Files.delete(p);
        }
        Files.delete(link);
        assertEquals(
                "active",
                ExamineCheck.decode(ours.get(0)).isClean() ? "clean" : "active",
                "the killed writer left the array dirty: " + dir);
        tornByRaidfive = tearLoggedStripes(ours.subList(0, DISKS - 1), oursDataOffset, DISKS - 1);
        assertTrue(tornByRaidfive > 0, "the writer's newest io_units named stripes to tear");
    }

    private Map<String, String> guest(String c) {
        return reports.get(c).result(c);
    }

    /**
     * Overwrites, on the member images, the parity of every stripe the newest io_unit of each
     * member's PPL names (found with md's format read straight from the bytes), except stripes
     * whose modified data is on a member at or beyond {@code present} (md leaves those alone).
     * Returns the number of entries torn.
     */
    private static int tearLoggedStripes(List<Path> members, long dataOffset, int present) throws Exception {
        int torn = 0;
        long chunkSectors = CHUNK / 512;
        Random junk = new Random(7);
        for (int slot = 0; slot < members.size(); slot++) {
            ByteBuffer h = newestHeader(members.get(slot));
            if (h == null) {
                continue;
            }
            for (int e = 0; e < h.getInt(528); e++) {
                int at = 536 + e * 24;
                long first = h.getLong(at);
                int ppSize = h.getInt(at + 8);
                int dataSize = h.getInt(at + 12);
                int parity = h.getInt(at + 16);
                int dataDisks = ppSize > 0 ? dataSize / ppSize : DISKS - 1;
                long strip = ppSize > 0 ? ppSize / 512 : (dataSize / 512) / dataDisks;
                boolean allPresent = true;
                for (int k = 0; k < dataDisks; k++) {
                    long chunk = (first + k * chunkSectors) / chunkSectors;
                    allPresent &= ArrayOracle.linuxSlots(ALGORITHM, DISKS, chunk)[1] < present;
                }
                long chunk = first / chunkSectors;
                assertEquals(parity, ArrayOracle.linuxSlots(ALGORITHM, DISKS, chunk)[0], "parity_disk of an entry");
                assertEquals(slot, parity, "an entry is logged on its stripe's parity member");
                if (!allPresent) {
                    continue;
                }
                long stripe = chunk / (DISKS - 1);
                long offset = dataOffset + stripe * CHUNK + (first % chunkSectors) * 512;
                byte[] garbage = new byte[(int) (strip * 512)];
                junk.nextBytes(garbage);
                try (RandomAccessFile f =
                        new RandomAccessFile(members.get(parity).toFile(), "rw")) {
                    f.seek(offset);
                    f.write(garbage);
                }
                torn++;
            }
        }
        return torn;
    }

    /** The newest valid io_unit header of a member's PPL area (mdadm's place), read as md lays it out. */
    private static ByteBuffer newestHeader(Path member) throws Exception {
        Superblock sb = ExamineCheck.decode(member);
        long pos = (sb.superOffset() + sb.pplOffset()) * 512;
        long end = pos + sb.pplSize() * 512L;
        ByteBuffer newest = null;
        long generation = -1;
        CRC32C uuid = new CRC32C();
        uuid.update(sb.setUuid());
        try (RandomAccessFile f = new RandomAccessFile(member.toFile(), "r")) {
            while (pos + 4096 <= end) {
                byte[] b = new byte[4096];
                f.seek(pos);
                f.readFully(b);
                ByteBuffer h = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
                int stored = h.getInt(532);
                h.putInt(532, 0);
                CRC32C crc = new CRC32C();
                crc.update(b);
                h.putInt(532, stored);
                if (stored != (int) crc.getValue()
                        || h.getInt(512) != (int) uuid.getValue()
                        || h.getLong(520) < generation) {
                    break;
                }
                generation = h.getLong(520);
                newest = h;
                long pp = 0;
                for (int e = 0; e < h.getInt(528); e++) {
                    pp += h.getInt(536 + e * 24 + 8);
                }
                pos += 4096 + pp;
            }
        }
        return newest;
    }

    /** Sets resync_offset to 0 (md's "active") in a member image's superblock, checksum and all. */
    private static void markDirty(Path member) throws Exception {
        Superblock sb = ExamineCheck.decode(member).resyncOffset(0);
        ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        try (RandomAccessFile f = new RandomAccessFile(member.toFile(), "rw")) {
            f.seek(sb.superOffset() * 512);
            f.readFully(b.array());
            sb.encode(b.clear());
            f.seek(sb.superOffset() * 512);
            f.write(b.array());
        }
        assertTrue(!ExamineCheck.decode(member).isClean());
    }

    private static long parityMismatches(List<Path> members) throws Exception {
        List<MemberDisk> disks = Workbench.open(members);
        try {
            Superblock sb = ExamineCheck.decode(members.get(0));
            ArrayOracle.assertParityConsistent(disks, sb.dataOffset() * 512, sb.size() * 512);
            return 0;
        } catch (AssertionError e) {
            return 1;
        } finally {
            for (MemberDisk d : disks) {
                d.close();
            }
        }
    }

    @Test
    void raidfiveRecoversAnArrayMdLeftDirtyFromMdsLog() throws Exception {
        Map<String, String> g = guest("mdppl");
        assertEquals("0", g.get("create_rc"), reports.get("mdppl").describe("mdppl"));
        assertEquals("ppl", g.get("consistency").toLowerCase(java.util.Locale.ROOT));
        // md may or may not have marked the array clean on disk by the time a member was copied; a
        // power cut during the writes leaves it dirty, which is what the copies are made to say.
        for (Path copy : mdDirty) {
            markDirty(copy);
        }
        Superblock sb = ExamineCheck.decode(mdDirty.get(0));
        assertEquals(
                Superblock.MD_FEATURE_MULTIPLE_PPLS,
                sb.featureMap() & (Superblock.MD_FEATURE_PPL | Superblock.MD_FEATURE_MULTIPLE_PPLS),
                "the kernel writes MULTIPLE_PPLS alone for a 1 MiB area: " + sb);
        int torn = tearLoggedStripes(mdDirty, sb.dataOffset() * 512, DISKS);
        assertTrue(torn > 0, "md's newest io_units named stripes");
        System.out.println("PPL interop: tore the parity of " + torn + " entries md logged; raidfive recovers them");
        assertEquals(1, parityMismatches(mdDirty), "the torn stripes are visible to an independent parity check");
        try (Raid5Array array =
                Raid5Array.assemble(Workbench.open(mdDirty), AssembleOptions.DEFAULT.withStartSync(false))) {
            assertEquals(ConsistencyPolicy.PPL, array.consistencyPolicy());
            byte[] got = new byte[mdImage.length];
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            assertArrayEquals(mdImage, got, "raidfive reads what md wrote");
        }
        assertEquals(
                0,
                parityMismatches(mdDirty),
                "raidfive's recovery from md's log made " + torn + " torn entries' parity consistent again");
    }

    @Test
    void raidfiveStartsMdsDirtyDegradedPplArrayWithoutForceAndReadsMdsData() throws Exception {
        Map<String, String> g = guest("degppl");
        assertEquals("0", g.get("fail_remove_rc"), reports.get("degppl").describe("degppl"));
        try (Raid5Array array =
                Raid5Array.assemble(Workbench.open(degDirty), AssembleOptions.DEFAULT.withStartSync(false))) {
            assertTrue(array.isDegraded());
            byte[] got = new byte[mdImage.length];
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            assertArrayEquals(mdImage, got, "raidfive reads what md wrote, degraded");
        }
    }

    @Test
    void raidfiveCreatesPplWithMdadmsPlaces() throws Exception {
        Superblock theirs = ExamineCheck.decode(md.get(0));
        List<Path> mine = bench.images("mine", DISKS, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .consistencyPolicy(ConsistencyPolicy.PPL)
                        .assumeClean(true)
                        .build(),
                Workbench.openNew(mine, MEMBER_BYTES))) {
            assertEquals(ConsistencyPolicy.PPL, array.consistencyPolicy());
        }
        Superblock sb = ExamineCheck.decode(mine.get(0));
        assertEquals(theirs.dataOffset(), sb.dataOffset(), "data offset");
        assertEquals(theirs.pplOffset(), sb.pplOffset(), "PPL offset");
        assertEquals(theirs.pplSize(), sb.pplSize(), "PPL size");
        assertEquals(theirs.bblogOffset(), sb.bblogOffset(), "bad block log offset");
        assertEquals(
                theirs.featureMap() & (Superblock.MD_FEATURE_PPL | Superblock.MD_FEATURE_MULTIPLE_PPLS),
                sb.featureMap() & (Superblock.MD_FEATURE_PPL | Superblock.MD_FEATURE_MULTIPLE_PPLS),
                "PPL feature bits as the kernel writes them");
    }

    @Test
    void mdRecoversRaidfivesTornStripesFromItsLog() throws Exception {
        Map<String, String> g = guest("ours");
        String why = reports.get("ours").describe("ours");
        assertEquals("0", g.get("assemble_rc"), why);
        assertEquals("0", g.get("dump_rc"), why);
        assertEquals("0", g.get("add_rc"), why);
        assertEquals(
                "0",
                g.get("mismatch"),
                "md's check after recovering " + tornByRaidfive + " torn entries and rebuilding the missing member: "
                        + why);
        byte[] array = new byte[(int) ((DISKS - 1) * (long) missingBefore.length)];
        try (RandomAccessFile f = new RandomAccessFile(dump.toFile(), "r")) {
            f.readFully(array);
        }
        long chunks = array.length / CHUNK;
        int checked = 0;
        for (long c = 0; c < chunks; c++) {
            if (ArrayOracle.linuxSlots(ALGORITHM, DISKS, c)[1] != DISKS - 1) {
                continue;
            }
            long stripe = c / (DISKS - 1);
            int at = (int) (stripe * CHUNK);
            assertArrayEquals(
                    Arrays.copyOfRange(missingBefore, at, at + CHUNK),
                    Arrays.copyOfRange(array, (int) (c * CHUNK), (int) (c * CHUNK) + CHUNK),
                    "the missing member's chunk " + c + " reads back through md as it was");
            checked++;
        }
        assertTrue(checked > 0);
        System.out.println("PPL interop: md recovered " + tornByRaidfive + " torn entries raidfive logged, rebuilt the "
                + "missing member, check found " + g.get("mismatch") + " mismatches; " + checked
                + " chunks of the missing member read back as they were");
    }
}
