package org.raidfive.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.array.DataAreaTally;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncAction;
import org.raidfive.array.SyncLimits;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;

/**
 * md's internal write-intent bitmap in both directions, against the real kernel in md-vm.
 *
 * <p>md to raidfive: {@code mdadm --create --bitmap=internal} (1 MiB bitmap chunks), filled, then
 * patched in a few places while md holds the array dirty; the members are copied as a power cut
 * leaves them and mdadm -X reads the copies. raidfive's examine of the bitmap agrees with mdadm -X field
 * by field; raidfive opens the dirty copy, resyncs only the chunks with bits set (counted at the member
 * files), finds parity consistent and md's data, and leaves the bitmap clean.
 *
 * <p>raidfive to md: a clean bitmap array; one a writer process left dirty when it was SIGKILLed;
 * one written degraded (its last member failed, kept aside), whose bits stay set. md assembles each:
 * the dirty one resyncs, the degraded one takes its member back with {@code mdadm --re-add} (md's
 * bitmap-based recovery, which mdadm refuses when the bitmap cannot serve it); md's check then finds
 * 0 mismatches everywhere and the data is raidfive's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 25, unit = TimeUnit.MINUTES)
class BitmapInteropIT {
    private static final long MEMBER_BYTES = 16L << 20;
    private static final int MIB = 1 << 20;
    private static final int DISKS = 4;
    private static final int CHUNK = 64 * 1024;
    private static final int BITMAP_CHUNK = MIB;

    private Workbench bench;
    private Map<String, GuestReport> reports;
    private byte[] data;
    private byte[] mdImage;
    private final List<Path> md = new ArrayList<>();
    private final List<Path> mdDirty = new ArrayList<>();
    private final List<Path> clean = new ArrayList<>();
    private final List<Path> killed = new ArrayList<>();
    private final List<Path> degraded = new ArrayList<>();
    private byte[] cleanImage;
    private byte[] degradedImage;
    /** raidfive's reading of each case's first member's bitmap, taken before md sees it. */
    private final Map<String, Map<String, String>> oursBefore = new LinkedHashMap<>();

    @BeforeAll
    void bothDirections() throws Exception {
        MdVm vm = MdVm.locate();
        bench = Workbench.of("bitmap");
        data = new byte[24 * MIB];
        new Random(0xb17L).nextBytes(data);
        Path dataImage = bench.dataImage("data", data);
        md.addAll(bench.images("md", DISKS, MEMBER_BYTES));
        mdDirty.addAll(bench.images("mdcopy", DISKS, MEMBER_BYTES));
        mdImage = Arrays.copyOf(data, 24 * MIB);
        String[] patches = {"9:20001:3", "20000:30007:9", "41000:1234:16"};
        for (String p : patches) {
            String[] f = p.split(":");
            System.arraycopy(
                    data,
                    Integer.parseInt(f[1]) * 512,
                    mdImage,
                    Integer.parseInt(f[0]) * 512,
                    Integer.parseInt(f[2]) * 512);
        }
        GuestScript a = new GuestScript("bitmap-md");
        String d = a.disk(dataImage);
        a.call(
                "md_create_opts",
                "mdbm",
                "md0",
                4,
                "--raid-devices=" + DISKS,
                "--bitmap=internal",
                "--bitmap-chunk=" + BITMAP_CHUNK / 1024,
                "--chunk=" + CHUNK / 1024,
                a.disks(md));
        a.call("md_fill", "mdbm", "md0", d, 0, 24);
        a.call("md_stop", "mdbm", "md0");
        a.call("md_assemble", "mdbm", "md0", a.disks(md));
        a.call("md_hold_dirty", "mdbm", "md0");
        a.call("md_patch", "mdbm", "md0", d, List.of(patches));
        for (int i = 0; i < DISKS; i++) {
            a.call("copy_dev", "mdbm", "m" + i, a.disk(md.get(i)), a.disk(mdDirty.get(i)));
        }
        a.call("md_examine_bitmap", "mdbm", "copy0", a.disk(mdDirty.get(0)));
        a.call("md_stop", "mdbm", "md0");

        clean.addAll(bench.images("clean", DISKS, MEMBER_BYTES));
        killed.addAll(bench.images("killed", DISKS, MEMBER_BYTES));
        degraded.addAll(bench.images("degraded", DISKS, MEMBER_BYTES));
        makeRaidfiveArrays();
        oursBefore.put("clean", ours(clean.get(0)));
        oursBefore.put("killed", ours(killed.get(0)));
        oursBefore.put("degraded", ours(degraded.get(0)));
        GuestScript b = new GuestScript("bitmap-raidfive");
        b.call("md_examine_bitmap", "clean", "c0", b.disk(clean.get(0)));
        b.call("md_assemble", "clean", "md0", b.disks(clean));
        b.call("md_check", "clean", "md0");
        b.call("md_sha", "clean", "md0");
        b.call("md_stop", "clean", "md0");
        b.call("md_examine_bitmap", "killed", "k0", b.disk(killed.get(0)));
        b.call("md_assemble", "killed", "md1", b.disks(killed));
        b.call("md_resync_done", "killed", "md1");
        b.call("md_check", "killed", "md1");
        b.call("md_stop", "killed", "md1");
        b.call("md_examine_bitmap", "degraded", "d0", b.disk(degraded.get(0)));
        b.call("md_assemble", "degraded", "md2", "--run", b.disks(degraded.subList(0, DISKS - 1)));
        b.call("md_re_add", "degraded", "md2", b.disk(degraded.get(DISKS - 1)));
        b.call("md_check", "degraded", "md2");
        b.call("md_sha", "degraded", "md2");
        b.call("md_stop", "degraded", "md2");
        reports = BootRunner.run(
                vm,
                List.of(a, b),
                false,
                Duration.ofMinutes(15),
                bench.dir(),
                List.of("mdbm", "clean", "killed", "degraded"));
    }

    @AfterAll
    void cleanUp() {
        if (bench != null) {
            bench.deleteImages();
        }
    }

    private ArraySpec spec() {
        return ArraySpec.builder()
                .chunkSize(CHUNK)
                .assumeClean(true)
                .consistencyPolicy(ConsistencyPolicy.BITMAP)
                .bitmapChunk(BITMAP_CHUNK)
                .build();
    }

    private void makeRaidfiveArrays() throws Exception {
        try (Raid5Array array = Raid5Array.create(spec(), Workbench.openNew(clean, MEMBER_BYTES))) {
            cleanImage = Arrays.copyOf(data, (int) array.size());
            array.write(0, ByteBuffer.wrap(cleanImage), 0, cleanImage.length);
        }
        // A writer process (the crash test's), on a bitmap array of these files, SIGKILLed mid-write.
        Path link = Files.createTempDirectory("bitmap-killed");
        for (int i = 0; i < DISKS; i++) {
            Files.createSymbolicLink(link.resolve("c" + i + ".img"), killed.get(i));
        }
        try (Raid5Array array = Raid5Array.create(spec(), Workbench.openNew(killed, MEMBER_BYTES))) {
            array.write(0, ByteBuffer.wrap(Arrays.copyOf(data, (int) array.size())), 0, (int) array.size());
        }
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        "org.raidfive.array.CrashWriter",
                        link.toString(),
                        Integer.toString(DISKS),
                        Long.toString(MEMBER_BYTES),
                        "0",
                        "bitmap")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        org.raidfive.array.CrashWriter.killAfterFlushes(child, 20, 0, line -> {});
        for (Path p : Files.list(link).toList()) {
            Files.delete(p);
        }
        Files.delete(link);
        assertTrue(!ExamineCheck.decode(killed.get(0)).isClean(), "the killed writer left the array dirty");
        // Degraded: the last member failed, writes land on the others and keep their bits.
        List<MemberDisk> disks = Workbench.openNew(degraded, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(spec(), disks)) {
            degradedImage = Arrays.copyOf(data, (int) array.size());
            array.write(0, ByteBuffer.wrap(degradedImage), 0, degradedImage.length);
            array.fail(disks.get(DISKS - 1));
            byte[] patch = new byte[64 * 1024];
            new Random(3).nextBytes(patch);
            for (long off : new long[] {4096, 17L * MIB}) {
                array.write(off, ByteBuffer.wrap(patch), 0, patch.length);
                System.arraycopy(patch, 0, degradedImage, (int) off, patch.length);
            }
        }
    }

    private Map<String, String> guest(String c) {
        return reports.get(c).result(c);
    }

    /** mdadm -X's lines for one member, as the guest logged them ("xbm NAME field : value"). */
    private Map<String, String> mdadmX(String c, String name) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : reports.get(c).log(c)) {
            String prefix = "xbm " + name + " ";
            if (line.startsWith(prefix)) {
                String rest = line.substring(prefix.length());
                int colon = rest.indexOf(" : ");
                if (colon > 0) {
                    m.put(
                            rest.substring(0, colon).trim(),
                            rest.substring(colon + 3).trim());
                }
            }
        }
        m.remove("Filename");
        return m;
    }

    /** raid-core's reading of a member's bitmap, in mdadm -X's fields (what raid examine-bitmap prints). */
    private static Map<String, String> ours(Path member) throws IOException {
        Superblock sb = ExamineCheck.decode(member);
        Map<String, String> m = new LinkedHashMap<>();
        try (RandomAccessFile f = new RandomAccessFile(member.toFile(), "r")) {
            byte[] head = new byte[256];
            long at = (sb.superOffset() + sb.bitmapOffset()) * 512;
            f.seek(at);
            f.readFully(head);
            ByteBuffer b = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
            long sync = b.getLong(40);
            int chunk = b.getInt(52);
            long bits = (sync * 512 + chunk - 1) / chunk;
            byte[] map = new byte[(int) ((bits + 7) / 8)];
            f.readFully(map);
            long dirty = 0;
            for (long i = 0; i < bits; i++) {
                dirty += (map[(int) (i / 8)] >> (i % 8)) & 1;
            }
            m.put("Magic", Integer.toHexString(b.getInt(0)));
            m.put("Version", Integer.toString(b.getInt(4)));
            m.put("Events", Long.toString(b.getLong(24)));
            m.put("Events Cleared", Long.toString(b.getLong(32)));
            m.put("Chunksize", (chunk >> 20) + " MB");
            m.put("Daemon", b.getInt(56) + "s flush period");
            m.put("Bitmap", bits + " bits (chunks), " + dirty + " dirty");
        }
        return m;
    }

    @Test
    void mdadmReadsRaidfivesBitmapAsRaidfiveWritesIt() throws Exception {
        for (String[] c : new String[][] {{"clean", "c0"}, {"killed", "k0"}, {"degraded", "d0"}}) {
            Map<String, String> theirs = mdadmX(c[0], c[1]);
            assertEquals("OK", theirs.get("State"), theirs.toString());
            for (Map.Entry<String, String> e : oursBefore.get(c[0]).entrySet()) {
                String t = theirs.get(e.getKey());
                assertTrue(
                        t != null && t.startsWith(e.getValue()),
                        c[0] + " " + e.getKey() + ": mdadm -X says " + t + ", raidfive wrote " + e.getValue());
            }
        }
        assertEquals("0", guest("clean").get("xbm_c0_dirty"), "a clean stop leaves no bit set");
        assertTrue(Integer.parseInt(guest("killed").get("xbm_k0_dirty")) > 0, "a killed writer leaves bits set");
        assertTrue(Integer.parseInt(guest("degraded").get("xbm_d0_dirty")) > 0, "degraded writes keep their bits");
    }

    @Test
    void mdAssemblesRaidfivesBitmapArraysAndFindsNoMismatch() {
        for (String c : List.of("clean", "killed", "degraded")) {
            String why = reports.get(c).describe(c);
            assertEquals("0", guest(c).get("assemble_rc"), why);
            assertEquals("0", guest(c).get("mismatch"), "md's check of " + c + ": " + why);
        }
        assertEquals(
                "resync",
                guest("killed").get("last_sync"),
                "md resynced the killed array (by its bitmap): "
                        + reports.get("killed").describe("killed"));
        assertEquals(
                "0",
                guest("degraded").get("readd_rc"),
                "mdadm --re-add took the member back by the bitmap: "
                        + reports.get("degraded").describe("degraded"));
        assertEquals(Workbench.sha256(cleanImage), guest("clean").get("sha"));
        assertEquals(
                Workbench.sha256(degradedImage),
                guest("degraded").get("sha"),
                "the degraded writes, " + "after md's bitmap recovery of the member");
    }

    @Test
    void raidfiveReadsMdsBitmapAndResyncsOnlyTheSetBitsOfADirtyCopy() throws Exception {
        Map<String, String> theirs = mdadmX("mdbm", "copy0");
        Map<String, String> ours = ours(mdDirty.get(0));
        for (String k : ours.keySet()) {
            String t = theirs.get(k);
            assertTrue(
                    t != null && t.startsWith(ours.get(k)),
                    k + ": mdadm -X says " + t + ", raidfive reads " + ours.get(k));
        }
        long dirty = Long.parseLong(guest("mdbm").get("xbm_copy0_dirty"));
        assertTrue(dirty > 0, "md's copy has bits set: " + theirs);
        for (Path p : mdDirty) {
            markDirty(p);
        }
        List<DataAreaTally> disks = new ArrayList<>();
        for (Path p : mdDirty) {
            disks.add(new DataAreaTally(FileDisk.open(p), ExamineCheck.decode(p).dataOffset() * 512));
        }
        long total;
        try (Raid5Array array =
                Raid5Array.assemble(disks, AssembleOptions.DEFAULT.withSyncLimits(SyncLimits.UNLIMITED))) {
            assertTrue(array.awaitSync(Duration.ofSeconds(120)).ended());
            assertEquals(SyncAction.RESYNC, array.syncProgress().action());
            long resyncReads = disks.stream().mapToLong(d -> d.reads.get()).sum();
            long stripesPerBit = BITMAP_CHUNK / CHUNK;
            assertTrue(
                    resyncReads > 0 && resyncReads <= dirty * stripesPerBit * DISKS,
                    "the resync read " + resyncReads + " member pieces: only the " + dirty + " chunks with bits set");
            System.out.println("bitmap interop: raidfive resynced md's dirty copy by its " + dirty + " set bits ("
                    + resyncReads + " member reads)");
            total = array.layout().memberBytesUsed();
            byte[] got = new byte[mdImage.length];
            array.read(0, ByteBuffer.wrap(got), 0, got.length);
            assertArrayEquals(mdImage, got, "md's data");
            array.startCheck(false);
            assertTrue(array.awaitSync(Duration.ofSeconds(120)).ended());
            assertEquals(0, array.mismatchSectors(), "parity consistent after resyncing the set bits");
        }
        long chunksPerMember = (total + BITMAP_CHUNK - 1) / BITMAP_CHUNK;
        assertTrue(dirty < chunksPerMember, "only some chunks are dirty (" + dirty + " of " + chunksPerMember + ")");
    }

    /** Sets resync_offset to 0 (md's "active") in a member image's superblock, as a power cut leaves it. */
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
    }
}
