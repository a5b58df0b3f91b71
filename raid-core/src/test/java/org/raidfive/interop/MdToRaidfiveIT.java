package org.raidfive.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncAction;
import org.raidfive.array.SyncLimits;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.DataOffset;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Mdadm;
import org.raidfive.md.Superblock;

/**
 * Linux creates, raidfive opens, and back. In md-vm (two boots side by side) {@code mdadm --create}
 * makes arrays with its default data offset (every layout, several chunks and member counts, with
 * and without --assume-clean, one with an internal bitmap) and md writes them from a data image,
 * through full-stripe and sub-page O_DIRECT writes; one array is made on half of each member and
 * grown by {@code mdadm --grow --size=max} first; one array loses a member (--fail, --remove)
 * and is written on degraded; one is written with md's safe mode off and its members copied while
 * md still holds it dirty (what a power cut leaves). Then, on the host:
 * <ol>
 *   <li>every kernel-written superblock decodes, field by field, as mdadm --examine prints it;</li>
 *   <li>raidfive assembles each array, reads back exactly what md wrote, and its own check finds
 *       no parity mismatch;</li>
 *   <li>the stale member is left out by default, as mdadm kicks it, and taken as a spare and rebuilt on request;</li>
 *   <li>the dirty copy is seen as needing resync, and resynced;</li>
 *   <li>a third boot gives md what raidfive rebuilt, resynced and wrote: md assembles it clean, reads
 *       the same data and its check finds 0 mismatches.</li>
 * </ol>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class MdToRaidfiveIT {
    private static final long MEMBER_BYTES = 8L << 20;
    private static final int MIB = 1 << 20;
    private static final int DATA_MIB = 48;
    private static final long SEED = Long.getLong("raidfive.interop.seed", 0x5eed_2026L);
    private static final Duration BOOT_TIMEOUT = Duration.ofMinutes(10);

    enum Kind {
        /** created, filled and patched by md */
        PLAIN,
        /** PLAIN with an internal write-intent bitmap */
        BITMAP,
        /** filled, then a member failed and removed, then patched: that member is stale */
        STALE,
        /** safe mode off, filled and patched, members copied while md holds the array dirty */
        DIRTY,
        /** created on half of each member, grown by mdadm --grow --size=max, then filled and patched */
        GROWN
    }

    /**
     * @param chunkKib 0 for mdadm's default (512K)
     * @param returns  raidfive writes to it after its check, and md reads it again in the last boot
     */
    record Case(
            String name, String layout, int chunkKib, int members, boolean assumeClean, Kind kind, boolean returns) {
        int chunkBytes() {
            return (chunkKib == 0 ? 512 : chunkKib) * 1024;
        }
    }

    static final List<Case> CASES = List.of(
            new Case("m-la-4k-3", "left-asymmetric", 4, 3, false, Kind.PLAIN, true),
            new Case("m-ra-16k-4", "right-asymmetric", 16, 4, true, Kind.PLAIN, false),
            new Case("m-ls-default-5", "left-symmetric", 0, 5, false, Kind.PLAIN, false),
            new Case("m-rs-64k-6-grown", "right-symmetric", 64, 6, false, Kind.GROWN, false),
            new Case("m-pf-128k-3", "parity-first", 128, 3, true, Kind.PLAIN, true),
            new Case("m-pl-32k-4", "parity-last", 32, 4, false, Kind.PLAIN, true),
            new Case("m-ls-64k-4-stale", "left-symmetric", 64, 4, true, Kind.STALE, true),
            new Case("m-la-8k-3-dirty", "left-asymmetric", 8, 3, true, Kind.DIRTY, true),
            new Case("m-rs-256k-4-bitmap", "right-symmetric", 256, 4, false, Kind.BITMAP, true));

    /** The member that fails in the STALE case. */
    private static final int STALE_SLOT = 1;

    /** An array md made, with what it must hold. */
    static final class MdArray {
        final Case c;
        final String md;
        final List<Path> members;
        final List<Path> copies = new ArrayList<>();
        final long size;
        final Reference ref;
        final List<int[]> patches = new ArrayList<>();
        final int fillFromMib;
        /** the members md is given in the last boot (after raidfive's work) */
        List<Path> returned;

        MdArray(Case c, String md, List<Path> members, long size, int fillFromMib, long seed) {
            this.c = c;
            this.md = md;
            this.members = members;
            this.size = size;
            this.fillFromMib = fillFromMib;
            this.ref = new Reference(size, seed);
        }
    }

    private Workbench bench;
    private MdVm vm;
    private byte[] data;
    private Path dataImage;
    private final Map<GuestScript, Path> dataImages = new java.util.IdentityHashMap<>();
    private final Map<String, MdArray> arrays = new LinkedHashMap<>();
    private final Map<String, GuestReport> reports = new LinkedHashMap<>();

    @BeforeAll
    void mdCreatesAndWritesArrays() throws Exception {
        vm = MdVm.locate();
        bench = Workbench.of("md-to-raidfive");
        data = new byte[DATA_MIB * MIB];
        new Random(SEED).nextBytes(data);
        dataImage = bench.dataImage("data", data);
        int index = 0;
        for (Case c : CASES) {
            MdArray a = plan(c, "md" + index, index);
            arrays.put(c.name(), a);
            index++;
        }
        List<GuestScript> scripts = new ArrayList<>();
        for (MdArray a : arrays.values()) {
            int before = scripts.size();
            GuestScript s = firstFit(scripts, "md-to-raidfive-", a.members.size() + a.copies.size() + 1);
            if (scripts.size() > before) {
                // qemu locks an image for one VM: each boot reads its own copy of the data
                dataImages.put(s, before == 0 ? dataImage : bench.dataImage("data-" + before, data));
                s.disk(dataImages.get(s));
            }
            guestCalls(s, a);
        }
        reports.putAll(BootRunner.run(vm, scripts, false, BOOT_TIMEOUT, bench.dir(), arrays.keySet()));
    }

    @AfterAll
    void cleanUp() {
        if (bench != null) {
            bench.deleteImages();
        }
    }

    /** The sizes mdadm 4.2 gives (raidfive's DataOffset rule), the data and the patches md will write. */
    private MdArray plan(Case c, String md, int index) {
        long memberSectors = MEMBER_BYTES / 512;
        long usable = DataOffset.usableSectors(memberSectors, c.chunkBytes() / 512) * 512;
        long size = usable * (c.members() - 1);
        assertEquals(0, size % MIB, c.name() + ": test sizes keep arrays in whole MiB");
        int from = index;
        assertTrue(from * (long) MIB + size <= data.length, c.name() + ": data image too small");
        MdArray a = new MdArray(
                c,
                md,
                bench.images(c.name(), c.members(), MEMBER_BYTES),
                size,
                from,
                SEED ^ c.name().hashCode());
        a.ref.put(0, data, (long) from * MIB, (int) size);
        Random random = a.ref.random();
        for (int i = 0; i < 12; i++) {
            int count = 1 + random.nextInt(64);
            int seek = random.nextInt((int) (size / 512) - count + 1);
            int skip = random.nextInt(data.length / 512 - count + 1);
            a.patches.add(new int[] {seek, skip, count});
            a.ref.put(seek * 512L, data, skip * 512L, count * 512);
        }
        if (c.kind() == Kind.DIRTY) {
            a.copies.addAll(bench.images(c.name() + "-copy", c.members(), MEMBER_BYTES));
        }
        return a;
    }

    /** The first script with room for {@code images} more, else a new one. */
    private static GuestScript firstFit(List<GuestScript> scripts, String prefix, int images) {
        for (GuestScript s : scripts) {
            if (s.images().size() + images <= GuestScript.MAX_DISKS) {
                return s;
            }
        }
        GuestScript s = new GuestScript(prefix + (scripts.size() + 1));
        scripts.add(s);
        return s;
    }

    private void guestCalls(GuestScript s, MdArray a) {
        Case c = a.c;
        String data = s.disk(dataImages.get(s));
        List<String> devs = s.disks(a.members);
        s.comment(c.name() + ": " + c.kind() + ", " + c.layout() + ", chunk "
                + (c.chunkKib() == 0 ? "default" : c.chunkKib() + "K") + ", " + c.members() + " members"
                + (c.assumeClean() ? ", --assume-clean" : ""));
        if (c.kind() == Kind.GROWN) {
            s.call("md_create_grown", c.name(), a.md, c.layout(), c.chunkKib(), devs);
        } else {
            s.call(
                    "md_create",
                    c.name(),
                    a.md,
                    c.layout(),
                    c.chunkKib(),
                    c.assumeClean() ? 1 : 0,
                    c.kind() == Kind.BITMAP ? 1 : 0,
                    devs);
        }
        if (c.kind() == Kind.DIRTY) {
            s.call("md_hold_dirty", c.name(), a.md);
        }
        s.call("md_fill", c.name(), a.md, data, a.fillFromMib, a.size / MIB);
        if (c.kind() == Kind.STALE) {
            s.call("md_fail_remove", c.name(), a.md, devs.get(STALE_SLOT));
        }
        List<String> patches = new ArrayList<>();
        for (int[] p : a.patches) {
            patches.add(p[0] + ":" + p[1] + ":" + p[2]);
        }
        s.call("md_patch", c.name(), a.md, data, patches);
        s.call("md_sha", c.name(), a.md);
        if (c.kind() == Kind.PLAIN || c.kind() == Kind.BITMAP || c.kind() == Kind.GROWN) {
            s.call("md_check", c.name(), a.md);
        }
        s.call("md_report", c.name(), a.md);
        if (c.kind() == Kind.DIRTY) {
            List<String> copies = s.disks(a.copies);
            for (int i = 0; i < devs.size(); i++) {
                s.call("copy_dev", c.name(), "m" + i, devs.get(i), copies.get(i));
            }
        }
        s.call("md_stop", c.name(), a.md);
    }

    private Map<String, String> guest(MdArray a) {
        return reports.get(a.c.name()).result(a.c.name());
    }

    private String why(MdArray a) {
        return reports.get(a.c.name()).describe(a.c.name());
    }

    /** md made and wrote the array as planned, and holds what the reference says. */
    private void assertMdWroteIt(MdArray a) {
        Map<String, String> r = guest(a);
        String why = why(a);
        assertEquals("0", r.get("create_rc"), why);
        if (a.c.kind() == Kind.GROWN) {
            assertEquals("0", r.get("grow_rc"), why);
            assertTrue(Long.parseLong(r.get("size_before_grow")) < a.size, "md grew the array: " + why);
        }
        assertEquals(Long.toString(a.size), r.get("size"), "mdadm's array size (from its data offset rule): " + why);
        assertEquals("0", r.get("fill_rc"), why);
        assertEquals("0", r.get("patch_rc"), why);
        assertEquals(a.ref.sha256(), r.get("sha"), "md itself reads what it was given: " + why);
        if (r.containsKey("mismatch")) {
            assertEquals("0", r.get("mismatch"), "md's own check: " + why);
        }
    }

    // ------------------------------------------------------------------ 1: kernel superblocks

    @Test
    @Order(1)
    void everyKernelWrittenSuperblockDecodesAsMdadmExamineShowsIt() {
        Mdadm.assumeInstalled();
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (MdArray a : arrays.values()) {
            List<Path> all = new ArrayList<>(a.members);
            all.addAll(a.copies);
            for (Path p : all) {
                try {
                    ExamineCheck.assertAgrees(p);
                    checked++;
                } catch (AssertionError e) {
                    failures.add(e.getMessage());
                }
            }
        }
        System.out.println("mdadm --examine agrees with our decoding on " + checked + " kernel-written members");
        assertTrue(failures.isEmpty(), String.join("\n\n", failures));
    }

    @Test
    @Order(2)
    void raidfiveCreatesWithTheDataOffsetAndSizeMdadmChose() throws IOException {
        for (MdArray a : arrays.values()) {
            Superblock sb = ExamineCheck.decode(a.members.get(0));
            String why = why(a);
            assertEquals(DataOffset.forNewMember(MEMBER_BYTES / 512, a.c.chunkBytes() / 512), sb.dataOffset(), why);
            List<MemberDisk> disks = new ArrayList<>();
            for (int i = 0; i < a.c.members(); i++) {
                disks.add(new MemoryDisk(MEMBER_BYTES));
            }
            try (Raid5Array ours = Raid5Array.create(
                    ArraySpec.builder()
                            .layout(a.c.layout())
                            .chunkSize(a.c.chunkBytes())
                            .assumeClean(true)
                            .build(),
                    disks)) {
                assertEquals(
                        sb.dataOffset() * 512, ours.status().members().get(0).dataOffset(), why);
                assertEquals(Long.parseLong(guest(a).get("size")), ours.size(), why);
            }
        }
    }

    // ------------------------------------------------------------------ 2: raidfive opens md's arrays

    @TestFactory
    @Order(3)
    Stream<DynamicTest> raidfiveAssemblesEachMdArrayReadsWhatMdWroteAndFindsNoMismatch() {
        return arrays.values().stream()
                .filter(a -> a.c.kind() == Kind.PLAIN || a.c.kind() == Kind.BITMAP || a.c.kind() == Kind.GROWN)
                .map(a -> DynamicTest.dynamicTest(a.c.name(), () -> {
                    assertMdWroteIt(a);
                    Map<String, String> r = guest(a);
                    String why = why(a);
                    assertEquals("clean", r.get("detail").replace(",", " ").split(" ")[0], why);
                    Superblock before = ExamineCheck.decode(a.members.get(0));
                    try (Raid5Array array = Raid5Array.assemble(
                            Workbench.open(a.members), AssembleOptions.DEFAULT.withSyncLimits(SyncLimits.UNLIMITED))) {
                        ArrayStatus st = array.status();
                        assertEquals("clean", st.state(), why);
                        assertEquals(a.c.layout(), st.layout(), why);
                        assertEquals(a.c.chunkBytes(), st.chunkSize(), why);
                        assertEquals(a.c.members(), st.raidDisks(), why);
                        assertEquals(MdUuid.format(MdUuid.parse(r.get("md_uuid"))), st.uuid(), why);
                        assertEquals(a.size, array.size(), why);
                        a.ref.assertHeldBy(array);
                        assertCheckFindsNothing(array, why);
                        if (a.c.returns()) {
                            a.ref.scatter(array, 80, 3 * a.c.chunkBytes());
                            a.ref.assertHeldBy(array);
                            a.returned = a.members;
                        }
                    }
                    System.out.println(a.c.name() + ": what raidfive changed in the superblock md wrote: "
                            + changes(before, ExamineCheck.decode(a.members.get(0))));
                }));
    }

    private static void assertCheckFindsNothing(Raid5Array array, String why) throws Exception {
        array.startCheck(false);
        assertTrue(array.awaitSync(Duration.ofMinutes(2)).ended(), "check did not finish: " + why);
        assertTrue(array.syncProgress().complete(), array.syncProgress() + ": " + why);
        assertEquals(0, array.mismatchSectors(), "raidfive's check: " + why);
    }

    /** Fields of an md-written superblock that raidfive rewrote differently (events and utime aside). */
    static String changes(Superblock md, Superblock ours) {
        List<String> d = new ArrayList<>();
        if (md.featureMap() != ours.featureMap()) {
            d.add("feature_map 0x" + Integer.toHexString(md.featureMap()) + " -> 0x"
                    + Integer.toHexString(ours.featureMap()));
        }
        if (md.bitmapOffset() != ours.bitmapOffset()) {
            d.add("bitmap_offset " + md.bitmapOffset() + " -> " + ours.bitmapOffset());
        }
        if (md.bblogShift() != ours.bblogShift()
                || md.bblogSize() != ours.bblogSize()
                || md.bblogOffset() != ours.bblogOffset()) {
            d.add("bblog shift/size/offset " + md.bblogShift() + "/" + md.bblogSize() + "/" + md.bblogOffset() + " -> "
                    + ours.bblogShift() + "/" + ours.bblogSize() + "/" + ours.bblogOffset());
        }
        if (md.maxDev() != ours.maxDev()) {
            d.add("max_dev " + md.maxDev() + " -> " + ours.maxDev());
        }
        if (!java.util.Arrays.equals(md.devRoles(), ours.devRoles())) {
            d.add("dev_roles " + ExamineCheck.arrayState(md) + " -> " + ExamineCheck.arrayState(ours)
                    + " (unused entries " + unused(md) + " -> " + unused(ours) + ")");
        }
        if (md.dataSize() != ours.dataSize() || md.size() != ours.size() || md.dataOffset() != ours.dataOffset()) {
            d.add("sizes changed");
        }
        if (md.ctime() != ours.ctime() || !md.name().equals(ours.name())) {
            d.add("ctime/name changed");
        }
        if (md.devflags() != ours.devflags()) {
            d.add("devflags " + md.devflags() + " -> " + ours.devflags());
        }
        return d.isEmpty() ? "nothing" : String.join("; ", d);
    }

    private static String unused(Superblock sb) {
        int[] roles = sb.devRoles();
        int top = roles.length - 1;
        return top < 0 ? "none" : Superblock.describeRole(roles[top]);
    }

    // ------------------------------------------------------------------ 3: states cross over

    @Test
    @Order(4)
    void raidfiveLeavesOutTheMemberMdFailedAndRebuildsItWhenTakenAsSpare() throws Exception {
        MdArray a = only(Kind.STALE);
        assertMdWroteIt(a);
        Map<String, String> r = guest(a);
        String why = why(a);
        assertEquals("0", r.get("fail_remove_rc"), why);
        assertEquals("1", r.get("degraded"), why);
        Path stale = a.members.get(STALE_SLOT);
        Superblock staleSb = ExamineCheck.decode(stale);
        Superblock liveSb = ExamineCheck.decode(a.members.get(0));
        assertTrue(
                Long.compareUnsigned(staleSb.events(), liveSb.events()) < 0,
                "stale " + staleSb.events() + " vs live " + liveSb.events());
        int roleNow = liveSb.devRole(staleSb.devNumber());
        assertTrue(
                roleNow >= Superblock.ROLE_MAX,
                "md no longer gives the removed member a slot: " + Superblock.describeRole(roleNow));
        assertEquals(STALE_SLOT, staleSb.role(), "the stale member still claims its slot");

        // As mdadm kicks a non-fresh device: the stale member is left out, the array runs degraded.
        List<MemberDisk> all = Workbench.open(a.members);
        try (Raid5Array array = Raid5Array.assemble(all, AssembleOptions.DEFAULT.withReadOnly(true))) {
            var left = array.assemblyReport().leftOut();
            assertEquals(1, left.size(), why);
            assertEquals(all.get(STALE_SLOT), left.get(0).disk(), why);
            assertTrue(array.isDegraded(), why);
            a.ref.assertHeldBy(array);
            System.out.println(
                    a.c.name() + ": raidfive " + array.assemblyReport().lines());
        }
        for (MemberDisk d : all) {
            d.close();
        }

        List<Path> survivors = new ArrayList<>(a.members);
        survivors.remove(STALE_SLOT);
        try (Raid5Array array = Raid5Array.assemble(Workbench.open(survivors))) {
            assertTrue(array.isDegraded(), why);
            assertTrue(
                    array.status().state().contains("degraded"), array.status().state());
            a.ref.assertHeldBy(array);
        }

        try (Raid5Array array = Raid5Array.assemble(
                Workbench.open(a.members),
                AssembleOptions.DEFAULT.withTakeStaleAsSpare(true).withSyncLimits(SyncLimits.UNLIMITED))) {
            awaitInSync(array, why);
            a.ref.assertHeldBy(array);
            assertCheckFindsNothing(array, why);
            a.ref.scatter(array, 40, 3 * a.c.chunkBytes());
        }
        a.returned = a.members;
    }

    @Test
    @Order(5)
    void raidfiveResyncsAnArrayMdLeftDirty() throws Exception {
        MdArray a = only(Kind.DIRTY);
        assertMdWroteIt(a);
        Map<String, String> r = guest(a);
        String why = why(a);
        assertEquals("0", r.get("hold_dirty_rc"), why);
        for (int i = 0; i < a.copies.size(); i++) {
            assertEquals("0", r.get("copy_m" + i + "_rc"), why);
            assertEquals("active", r.get("copy_m" + i + "_state"), "md holds the array dirty on disk: " + why);
            Superblock sb = ExamineCheck.decode(a.copies.get(i));
            assertFalse(sb.isClean(), sb.toString());
            assertEquals(0, sb.resyncOffset(), "md writes resync_offset 0 while active: " + sb);
            assertTrue(ExamineCheck.decode(a.members.get(i)).isClean(), "md marks the originals clean at stop");
        }
        if (Mdadm.binary().isPresent()) {
            assertEquals("active", Mdadm.examineFields(a.copies.get(0)).get("State"));
        }
        try (Raid5Array array = Raid5Array.assemble(
                Workbench.open(a.copies),
                AssembleOptions.DEFAULT.withStartSync(false).withSyncLimits(SyncLimits.UNLIMITED))) {
            assertTrue(
                    array.status().state().contains("resyncing (PENDING)"),
                    array.status().state());
            a.ref.assertHeldBy(array);
            assertEquals(SyncAction.RESYNC, array.startSync(), why);
            assertTrue(array.awaitSync(Duration.ofMinutes(2)).ended(), why);
            assertTrue(array.syncProgress().complete(), array.syncProgress().toString());
            assertEquals("clean", array.status().state(), why);
            assertCheckFindsNothing(array, why);
            a.ref.scatter(array, 40, 3 * a.c.chunkBytes());
        }
        assertTrue(ExamineCheck.decode(a.copies.get(0)).isClean(), "raidfive leaves it clean");
        a.returned = a.copies;
    }

    // ------------------------------------------------------------------ 4: and back to md

    @Test
    @Order(6)
    void mdAssemblesCleanWhatRaidfiveRebuiltResyncedAndWrote() throws Exception {
        List<MdArray> back =
                arrays.values().stream().filter(a -> a.returned != null).toList();
        Assumptions.assumeFalse(back.isEmpty(), "no array came through the raidfive steps");
        List<GuestScript> scripts = new ArrayList<>();
        Map<String, MdArray> byCase = new LinkedHashMap<>();
        for (MdArray a : back) {
            String name = a.c.name() + "-back";
            byCase.put(name, a);
            GuestScript s = firstFit(scripts, "raidfive-back-to-md-", a.returned.size());
            List<String> devs = s.disks(a.returned);
            s.comment(name + ": after raidfive");
            s.call("md_assemble", name, a.md, devs);
            s.call("md_sha", name, a.md);
            s.call("md_check", name, a.md);
            s.call("md_report", name, a.md);
            s.call("md_stop", name, a.md);
        }
        Map<String, GuestReport> back2 = BootRunner.run(vm, scripts, false, BOOT_TIMEOUT, bench.dir(), byCase.keySet());
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, MdArray> e : byCase.entrySet()) {
            String name = e.getKey();
            MdArray a = e.getValue();
            GuestReport report = back2.get(name);
            Map<String, String> r = report.result(name);
            String why = report.describe(name);
            try {
                assertEquals("0", r.get("assemble_rc"), why);
                assertEquals("1", r.get("assemble_lines"), "mdadm --assemble complained: " + why);
                assertEquals(
                        "mdadm: /dev/" + a.md + " has been started with " + a.c.members() + " drives.",
                        report.log(name).get(0),
                        why);
                assertFalse(
                        report.log(name).stream()
                                .anyMatch(l -> l.contains("not clean") || l.contains("resync of RAID array")),
                        "md resynced what raidfive closed clean: " + why);
                assertEquals("0", r.get("degraded"), why);
                assertEquals("clean", r.get("detail"), why);
                assertEquals(a.ref.sha256(), r.get("sha"), "md reads other data than raidfive holds: " + why);
                assertEquals("0", r.get("mismatch"), "md's check: " + why);
                if (Mdadm.binary().isPresent()) {
                    for (Path p : a.returned) {
                        ExamineCheck.assertAgrees(p); // written by the kernel again
                    }
                }
                try (Raid5Array array =
                        Raid5Array.assemble(Workbench.open(a.returned), AssembleOptions.DEFAULT.withReadOnly(true))) {
                    assertEquals("clean", array.status().state(), why);
                    a.ref.assertHeldBy(array);
                }
            } catch (AssertionError | IOException ex) {
                failures.add(name + ": " + ex.getMessage());
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n\n", failures));
    }

    private MdArray only(Kind kind) {
        return arrays.values().stream()
                .filter(a -> a.c.kind() == kind)
                .findFirst()
                .orElseThrow();
    }

    private static void awaitInSync(Raid5Array array, String why) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (array.isDegraded() && System.nanoTime() < deadline) {
            array.awaitSync(Duration.ofSeconds(5));
            Thread.sleep(20);
        }
        assertFalse(array.isDegraded(), "rebuild did not finish: " + array.status() + "\n" + why);
    }
}
