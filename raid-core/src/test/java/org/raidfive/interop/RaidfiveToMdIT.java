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
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncLimits;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Mdadm;

/**
 * raidfive creates, Linux assembles. Arrays made and written by raidfive on image files (every
 * layout, chunks 4K to 512K, 3 to 6 members; plus one with a hot spare, two whose parity raidfive's
 * initial resync computed over garbage, one degraded and rebuilt by raidfive, one left degraded, one
 * left dirty, and one grown into the rest of its members by {@code growMemberBytes}) are attached to the real kernel in md-vm, two boots of up to 26 images running
 * side by side with {@code --snapshot} (md changes nothing on them). For each array the guest runs
 * {@code mdadm --assemble}, hashes the whole of {@code /dev/mdN}, runs md's own parity
 * {@code check} and reports mismatch_cnt and md's view of the array.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class RaidfiveToMdIT {
    private static final long MEMBER_BYTES = 8L << 20;
    private static final long SEED = Long.getLong("raidfive.interop.seed", 0x5eed_2026L);
    private static final Duration BOOT_TIMEOUT = Duration.ofMinutes(10);

    /** What raidfive does to an array before md sees it. */
    enum Kind {
        /** created assuming clean (zeroed members), then filled and scattered with partial writes */
        CLEAN,
        /** members full of garbage; raidfive's initial resync computes parity, then partial writes */
        RESYNCED,
        /** CLEAN with one hot spare */
        WITH_SPARE,
        /** CLEAN, then a member failed and removed, written degraded, a new member added and rebuilt */
        REBUILT,
        /** CLEAN, then a member failed and removed and written degraded; md gets the survivors */
        DEGRADED,
        /** CLEAN but never closed: flushed, members closed under it, so it is marked active on disk */
        DIRTY,
        /** CLEAN on half of each member, then grown to the whole (raid grow --size max), resynced, written */
        GROWN
    }

    record Case(String name, String layout, int chunkKib, int members, Kind kind) {}

    /** Every layout twice, every chunk size from 4K to 512K, 3 to 6 members; 52 images in two boots. */
    static final List<Case> CASES = List.of(
            new Case("la-4k-3", "left-asymmetric", 4, 3, Kind.CLEAN),
            new Case("ra-8k-4", "right-asymmetric", 8, 4, Kind.CLEAN),
            new Case("ls-16k-5", "left-symmetric", 16, 5, Kind.CLEAN),
            new Case("rs-32k-6", "right-symmetric", 32, 6, Kind.CLEAN),
            new Case("pf-64k-3-resynced", "parity-first", 64, 3, Kind.RESYNCED),
            new Case("pl-128k-4-spare", "parity-last", 128, 4, Kind.WITH_SPARE),
            new Case("ls-256k-5-resynced", "left-symmetric", 256, 5, Kind.RESYNCED),
            new Case("ra-512k-6", "right-asymmetric", 512, 6, Kind.CLEAN),
            new Case("la-64k-4-rebuilt", "left-asymmetric", 64, 4, Kind.REBUILT),
            new Case("rs-16k-3-dirty", "right-symmetric", 16, 3, Kind.DIRTY),
            new Case("pf-32k-4-degraded", "parity-first", 32, 4, Kind.DEGRADED),
            new Case("pl-8k-5-grown", "parity-last", 8, 5, Kind.GROWN));

    /** An array raidfive made, as md will be shown it. */
    record Made(Case c, String md, List<Path> mdMembers, int drives, int spares, String uuid, long size, String sha) {}

    private Workbench bench;
    private final Map<String, Made> made = new LinkedHashMap<>();
    private final Map<String, GuestReport> reports = new LinkedHashMap<>();

    @BeforeAll
    void makeArraysAndBootMd() throws Exception {
        MdVm vm = MdVm.locate();
        bench = Workbench.of("raidfive-to-md");
        int index = 0;
        for (Case c : CASES) {
            made.put(c.name(), make(c, "md" + index++));
        }
        List<GuestScript> scripts = plan();
        reports.putAll(BootRunner.run(vm, scripts, true, BOOT_TIMEOUT, bench.dir(), made.keySet()));
    }

    @AfterAll
    void cleanUp() {
        if (bench != null) {
            bench.deleteImages();
        }
    }

    // ------------------------------------------------------------------ raidfive side

    private Made make(Case c, String md) throws IOException, InterruptedException {
        long seed = SEED ^ c.name().hashCode();
        List<Path> paths = bench.images(c.name(), c.members(), MEMBER_BYTES);
        if (c.kind() == Kind.RESYNCED) {
            for (int i = 0; i < paths.size(); i++) {
                Workbench.fillWithGarbage(paths.get(i), seed + i);
            }
        }
        int chunk = c.chunkKib() * 1024;
        ArraySpec spec = ArraySpec.builder()
                .layout(c.layout())
                .chunkSize(chunk)
                .name("raidfive:" + c.name())
                .assumeClean(c.kind() != Kind.RESYNCED)
                .syncLimits(SyncLimits.UNLIMITED)
                .memberDataBytes(c.kind() == Kind.GROWN ? MEMBER_BYTES / 2 : 0)
                .build();
        List<MemberDisk> disks = Workbench.open(paths);
        List<Path> spares = new ArrayList<>();
        if (c.kind() == Kind.WITH_SPARE) {
            spares.add(bench.image(c.name() + "-spare", MEMBER_BYTES));
        }
        List<Path> mdMembers = new ArrayList<>(paths);
        mdMembers.addAll(spares);
        Raid5Array array = Raid5Array.create(spec, disks, Workbench.open(spares));
        Reference ref = new Reference(array.size(), seed);
        if (c.kind() == Kind.RESYNCED) {
            assertTrue(array.awaitSync(Duration.ofMinutes(2)).ended(), c.name() + ": initial resync did not finish");
            assertTrue(array.syncProgress().complete(), c.name() + ": initial resync " + array.syncProgress());
            ref.readFrom(array);
        } else {
            ref.fill(array);
        }
        ref.scatter(array, 150, 3 * chunk);
        int drives = c.members();
        switch (c.kind()) {
            case REBUILT: {
                MemberDisk victim = disks.get(1);
                array.fail(victim);
                array.remove(victim);
                ref.scatter(array, 60, 3 * chunk);
                Path fresh = bench.image(c.name() + "-new", MEMBER_BYTES);
                array.addSpare(FileDisk.open(fresh));
                awaitInSync(array, c);
                ref.scatter(array, 60, 3 * chunk);
                mdMembers.set(1, fresh);
                break;
            }
            case GROWN: {
                long before = array.size();
                assertTrue(array.growMemberBytes(array.maxMemberBytes()), c.name() + ": did not grow");
                assertTrue(array.awaitSync(Duration.ofMinutes(2)).ended(), c.name() + ": resync did not finish");
                assertTrue(array.syncProgress().complete(), c.name() + ": resync " + array.syncProgress());
                assertTrue(array.size() > before * 3 / 2, c.name() + ": " + before + " -> " + array.size());
                ref = ref.grownTo(array.size());
                ref.assertHeldBy(array);
                ref.scatter(array, 60, 3 * chunk);
                break;
            }
            case DEGRADED: {
                MemberDisk victim = disks.get(2);
                array.fail(victim);
                array.remove(victim);
                ref.scatter(array, 60, 3 * chunk);
                mdMembers.remove(2);
                drives--;
                break;
            }
            default:
                break;
        }
        ref.assertHeldBy(array);
        String uuid = array.uuid();
        long size = array.size();
        if (c.kind() == Kind.DIRTY) {
            // a crash after the last flush: nothing marks the array clean
            array.flush();
            org.raidfive.array.Crash.of(array);
            for (MemberDisk d : disks) {
                d.close();
            }
        } else {
            array.close();
        }
        return new Made(c, md, mdMembers, drives, spares.size(), uuid, size, ref.sha256());
    }

    private static void awaitInSync(Raid5Array array, Case c) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (array.isDegraded() && System.nanoTime() < deadline) {
            array.awaitSync(Duration.ofSeconds(5));
            Thread.sleep(20);
        }
        assertFalse(array.isDegraded(), c.name() + ": rebuild did not finish: " + array.status());
    }

    // ------------------------------------------------------------------ guest side

    /** First fit of the arrays into boots of at most 26 images; one guest call sequence per array. */
    private List<GuestScript> plan() {
        List<GuestScript> scripts = new ArrayList<>();
        for (Made m : made.values()) {
            GuestScript s = scripts.stream()
                    .filter(g -> g.images().size() + g.newImages(m.mdMembers()) <= GuestScript.MAX_DISKS)
                    .findFirst()
                    .orElse(null);
            if (s == null) {
                s = new GuestScript("raidfive-to-md-" + (scripts.size() + 1));
                scripts.add(s);
            }
            String name = m.c().name();
            List<String> devs = s.disks(m.mdMembers());
            s.comment(name + ": " + m.c().kind() + ", " + m.c().layout() + ", " + m.c().chunkKib() + "K chunk, "
                    + m.c().members() + " members");
            boolean dirty = m.c().kind() == Kind.DIRTY;
            if (dirty) {
                s.call("md_examine_state", name, devs.get(0));
                s.call("throttle_sync", "on");
            }
            s.call("md_assemble", name, m.md(), devs);
            if (dirty) {
                s.call("md_sync_started", name, m.md());
                s.call("throttle_sync", "off");
            }
            s.call("md_sha", name, m.md());
            if (m.c().kind() != Kind.DEGRADED) {
                s.call("md_check", name, m.md());
            }
            s.call("md_report", name, m.md());
            s.call("md_stop", name, m.md());
        }
        return scripts;
    }

    // ------------------------------------------------------------------ what md said

    @TestFactory
    Stream<DynamicTest> mdAssemblesEachArrayCleanWithRaidfivesContentAndNoParityMismatch() {
        return made.values().stream()
                .filter(m -> m.c().kind() != Kind.DIRTY && m.c().kind() != Kind.DEGRADED)
                .map(m -> DynamicTest.dynamicTest(m.c().name(), () -> {
                    GuestReport report = reports.get(m.c().name());
                    Map<String, String> r = report.result(m.c().name());
                    String why = report.describe(m.c().name());
                    assertAssembledQuietly(m, report, r, why);
                    assertNoKernelLine(report, m, "not clean", why);
                    assertEquals("0", r.get("degraded"), why);
                    assertEquals("clean", r.get("detail"), why);
                    assertSameStateWords(m, r.get("detail"), why);
                    assertEquals("clean", r.get("array_state"), why);
                    assertEquals("idle", r.get("sync_action"), why);
                    assertEquals(m.sha(), r.get("sha"), "md reads other data than raidfive wrote: " + why);
                    assertEquals("0", r.get("mismatch"), "md's parity check: " + why);
                }));
    }

    @Test
    void mdRunsAnArrayRaidfiveLeftDegradedAndReadsItsContent() throws Exception {
        Made m = only(Kind.DEGRADED);
        GuestReport report = reports.get(m.c().name());
        Map<String, String> r = report.result(m.c().name());
        String why = report.describe(m.c().name());
        assertAssembledQuietly(m, report, r, why);
        assertEquals("1", r.get("degraded"), why);
        assertEquals("clean,degraded", r.get("detail"), why);
        assertSameStateWords(m, r.get("detail"), why);
        assertEquals(m.sha(), r.get("sha"), "md reconstructs other data than raidfive wrote: " + why);
    }

    /**
     * raid detail's state words are mdadm --detail's for the same members (mdadm's "State :" with
     * the spaces removed). md runs a pending resync at once, where raidfive, which keeps no array
     * running, says it is pending: "(PENDING)" is mdadm's word for that, left out of the comparison.
     */
    private static void assertSameStateWords(Made m, String mdDetail, String why) throws IOException {
        try (org.raidfive.array.Raid5Array array = org.raidfive.array.Raid5Array.assemble(
                Workbench.open(m.mdMembers()),
                org.raidfive.array.AssembleOptions.DEFAULT.withReadOnly(true).withStartSync(false))) {
            String ours = array.status().state();
            assertEquals(
                    mdDetail,
                    ours.replace(" (PENDING)", "").replace(" ", ""),
                    "raidfive says '" + ours + "', mdadm --detail '" + mdDetail + "' for the same members: " + why);
        }
    }

    @Test
    void mdResyncsAnArrayRaidfiveLeftDirty() throws Exception {
        Made m = only(Kind.DIRTY);
        if (Mdadm.binary().isPresent()) {
            Map<String, String> host = Mdadm.examineFields(m.mdMembers().get(0));
            assertEquals("active", host.get("State"), "host mdadm --examine of a member raidfive left dirty: " + host);
        }
        GuestReport report = reports.get(m.c().name());
        Map<String, String> r = report.result(m.c().name());
        String why = report.describe(m.c().name());
        assertEquals("active", r.get("examine_state"), why);
        assertAssembledQuietly(m, report, r, why);
        assertEquals("resync", r.get("sync_at_start"), "md starts a resync on assembly: " + why);
        assertTrue(r.get("detail_at_start").contains("resyncing"), why);
        assertSameStateWords(m, r.get("detail_at_start"), why);
        assertTrue(Integer.parseInt(r.get("mdstat_resync")) > 0, "/proc/mdstat shows the resync: " + why);
        assertTrue(
                report.log(m.c().name()).stream()
                        .anyMatch(l -> l.contains("not clean -- starting background" + " reconstruction")),
                "md says the array is not clean: " + why);
        assertEquals(m.sha(), r.get("sha"), why);
        assertEquals("0", r.get("mismatch"), why);
        assertEquals("clean", r.get("detail"), "clean once resynced: " + why);
    }

    /**
     * What an operator sees: {@code mdadm --detail} names the array by the UUID and creation time
     * of its members' superblocks. mdadm uses a member's superblock only if its ctime equals the
     * ctime the kernel reports for the array (Detail.c), and Linux 6.1 takes all 64 bits of
     * {@code ctime} as seconds (super_1_validate), so a ctime with microseconds in its top 24 bits
     * (as md_p.h allows, but neither mdadm nor the kernel writes) makes the kernel report the year
     * 2106 and mdadm --detail drop Name, UUID and Events. See {@link SuperblockFidelityIT}.
     */
    @Test
    void mdadmDetailShowsEachArraysUuidAndCreationTime() {
        List<String> wrong = new ArrayList<>();
        for (Made m : made.values()) {
            Map<String, String> r = reports.get(m.c().name()).result(m.c().name());
            String ctime = ExamineCheck.ctime(
                            ExamineCheck.decode(m.mdMembers().get(0)).ctime())
                    .replace(" ", "");
            if (!m.uuid().equals(r.get("uuid")) || !ctime.equals(r.get("ctime"))) {
                wrong.add(m.c().name() + ": mdadm --detail shows UUID '" + r.get("uuid") + "' and Creation Time '"
                        + r.get("ctime") + "'; the members say " + m.uuid() + " and " + ctime);
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /** The other direction of the field-by-field comparison: superblocks raidfive wrote, in every state here. */
    @Test
    void everyRaidfiveWrittenSuperblockDecodesAsMdadmExamineShowsIt() {
        Mdadm.assumeInstalled();
        List<String> failures = new ArrayList<>();
        for (Made m : made.values()) {
            for (Path p : m.mdMembers()) {
                try {
                    ExamineCheck.assertAgrees(p);
                } catch (AssertionError e) {
                    failures.add(e.getMessage());
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n\n", failures));
    }

    private Made only(Kind kind) {
        return made.values().stream()
                .filter(m -> m.c().kind() == kind)
                .findFirst()
                .orElseThrow();
    }

    /** mdadm --assemble succeeded and printed nothing but its one "has been started" line. */
    static void assertAssembledQuietly(Made m, GuestReport report, Map<String, String> r, String why) {
        assertEquals("0", r.get("assemble_rc"), why);
        String started = "mdadm: /dev/" + m.md() + " has been started with " + m.drives() + " drive"
                + (m.drives() == 1 ? "" : "s")
                + (m.drives() < m.c().members() ? " (out of " + m.c().members() + ")" : "")
                + (m.spares() > 0 ? " and " + m.spares() + " spare" + (m.spares() == 1 ? "" : "s") : "") + ".";
        assertEquals("1", r.get("assemble_lines"), "mdadm --assemble complained: " + why);
        assertEquals(started, report.log(m.c().name()).get(0), why);
        assertEquals(Long.toString(m.size()), r.get("size"), "array size: " + why);
        assertEquals(Integer.toString(m.c().members()), r.get("raid_disks"), why);
        assertEquals(m.c().layout(), r.get("layout"), why);
        assertEquals(m.c().chunkKib() + "K", r.get("chunk"), why);
        assertEquals(Integer.toString(m.spares()), r.get("spare_devices"), why);
        // the kernel's own view, from sysfs
        assertEquals("raid5", r.get("md_level"), why);
        assertEquals("1.2", r.get("md_metadata"), why);
        assertEquals(Integer.toString(Raid5Algorithm.parse(m.c().layout()).mdNumber()), r.get("md_layout"), why);
        assertEquals(Integer.toString(m.c().chunkKib() * 1024), r.get("md_chunk"), why);
        assertEquals(Long.toString(m.size() / (m.c().members() - 1) / 1024), r.get("md_component"), why);
        assertEquals(m.uuid(), MdUuid.format(MdUuid.parse(r.get("md_uuid"))), why);
    }

    private static void assertNoKernelLine(GuestReport report, Made m, String text, String why) {
        assertFalse(
                report.log(m.c().name()).stream().anyMatch(l -> l.contains(text)), "md said '" + text + "': " + why);
    }
}
