package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.md.Superblock;

/**
 * {@code raid examine} and {@code raid detail} against the real {@code mdadm --examine} on the same
 * files: healthy, degraded, and with a replacement being rebuilt. Skipped where mdadm is not installed.
 */
@Timeout(120)
class MdadmCompatIT {
    private static final List<String> MDADM = List.of("/usr/sbin/mdadm", "/sbin/mdadm", "/usr/bin/mdadm");

    @TempDir
    static Path dir;

    static String mdadm;

    @BeforeAll
    static void findMdadm() {
        mdadm = MDADM.stream()
                .filter(p -> Files.isExecutable(Path.of(p)))
                .findFirst()
                .orElse(null);
        Assumptions.assumeTrue(mdadm != null, "mdadm is not installed (Debian: apt-get install mdadm); skipping");
    }

    private static RaidLauncher.Result raid(String... args) {
        return RaidLauncher.run(dir, args);
    }

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    @Test
    void examineAndDetailAgreeWithMdadmHealthyDegradedAndReplacing() throws Exception {
        List<String> m = List.of("a.img", "b.img", "c.img", "d.img");
        RaidLauncher.Result created = raid(with(
                List.of("create", "--size", "32M", "--chunk", "128K", "--layout", "ra", "--name", "host:compat"), m));
        assertEquals(0, created.exit(), created.all());
        assertEquals(
                0,
                RaidLauncher.run(dir, MemberFiles.random(1 << 20, 7), with(List.of("write", "--offset", "0"), m))
                        .exit());
        compare(m, 0);

        assertEquals(0, raid(with(List.of("fail", "--member", "c.img"), m)).exit());
        List<String> rest = List.of("a.img", "b.img", "d.img");
        compare(rest, 1);
        assertEquals("AA.A", mdadmExamine("a.img").get("Array State").substring(0, 4));

        assertEquals(0, raid(with(List.of("add", "--spare", "e.img"), rest)).exit());
        List<String> now = List.of("a.img", "b.img", "d.img", "e.img");
        assertEquals(0, raid(with(List.of("rebuild"), now)).exit());
        compare(now, 0);

        assertEquals(
                0,
                raid(with(List.of("replace", "--member", "b.img", "--with", "f.img"), now))
                        .exit());
        List<String> replacing = List.of("a.img", "b.img", "d.img", "e.img", "f.img");
        Map<String, String> f = mdadmExamine("f.img");
        assertEquals("Replacement device 1", f.get("Device Role"), f.toString());
        assertEquals("ARAA", f.get("Array State").substring(0, 4));
        assertTrue(f.containsKey("Recovery Offset"), f.toString());
        compare(replacing, 0); // not degraded: every slot is in sync while the copy runs
    }

    /**
     * mdadm's {@code missing}: the array starts degraded and mdadm --examine agrees field by field
     * (the empty slot shows in Array State); data written degraded survives a rebuild onto a spare;
     * zero-superblock then leaves a file mdadm finds no superblock on, and refuses to touch blank
     * files.
     */
    @Test
    void missingSlotsAndZeroSuperblockAreWhatMdadmSees() throws Exception {
        List<String> m = List.of("z0.img", "missing", "z2.img", "z3.img");
        RaidLauncher.Result created = raid(with(List.of("create", "--size", "32M", "--chunk", "64K"), m));
        assertEquals(0, created.exit(), created.all());
        assertTrue(created.stderr().contains("slot 1 is missing"), created.all());
        List<String> present = List.of("z0.img", "z2.img", "z3.img");
        compare(present, 1);
        Map<String, String> theirs = mdadmExamine("z2.img");
        assertEquals("A.AA", theirs.get("Array State").substring(0, 4), theirs.toString());
        assertEquals("clean", theirs.get("State"), "a degraded array has nothing to resync");
        assertEquals("Active device 2", theirs.get("Device Role"));
        byte[] data = MemberFiles.random(1 << 20, 13);
        Files.write(dir.resolve("z-in.bin"), data);
        assertEquals(
                0,
                raid(with(List.of("write", "--offset", "65536", "--input", "z-in.bin"), present))
                        .exit());
        assertEquals(0, raid(with(List.of("add", "--spare", "z1.img"), present)).exit());
        List<String> all = List.of("z0.img", "z2.img", "z3.img", "z1.img");
        RaidLauncher.Result rebuilt = raid(with(List.of("rebuild"), all));
        assertEquals(0, rebuilt.exit(), rebuilt.all());
        compare(all, 0);
        assertEquals("AAAA", mdadmExamine("z1.img").get("Array State").substring(0, 4));
        assertEquals(0, raid(with(List.of("check"), all)).exit());
        RaidLauncher.Result back =
                raid(with(List.of("read", "--offset", "65536", "--length", "1M", "--output", "z-out.bin"), all));
        assertEquals(0, back.exit(), back.all());
        assertTrue(java.util.Arrays.equals(data, Files.readAllBytes(dir.resolve("z-out.bin"))));

        Files.write(dir.resolve("z-blank.img"), new byte[1 << 20]);
        RaidLauncher.Result blank = raid("zero-superblock", "z0.img", "z-blank.img");
        assertEquals(2, blank.exit(), blank.all());
        assertTrue(blank.stderr().contains("z-blank.img holds no md superblock"), blank.all());
        assertEquals("Active device 0", mdadmExamine("z0.img").get("Device Role"), "refused: nothing written");
        RaidLauncher.Result zeroed = raid("zero-superblock", "z0.img", "z1.img");
        assertEquals(0, zeroed.exit(), zeroed.all());
        for (String f : List.of("z0.img", "z1.img")) {
            Process p = new ProcessBuilder(mdadm, "--examine", f)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertTrue(out.contains("No md superblock detected on " + f), out);
            RaidLauncher.Result ours = raid("examine", f);
            assertEquals(2, ours.exit(), ours.all());
        }
        compare(List.of("z2.img", "z3.img"), 2); // the others still say what they said (two of four: failed)
    }

    /**
     * Members whose superblocks say a reshape is in progress (what md leaves when it stops mid-way):
     * raid examine prints md's reshape lines ("Reshape pos'n", "Delta Devices", "New Layout", "New
     * Chunksize", "New Offset") and every other field as mdadm --examine does on the same files, for a
     * grow by one member with a moved data offset and for a shrink with a new chunk and layout.
     */
    @Test
    void examineShowsAReshapeInProgressAsMdadmDoes() throws Exception {
        List<String> m = List.of("r0.img", "r1.img", "r2.img", "r3.img");
        RaidLauncher.Result created = raid(with(List.of("create", "--size", "32M", "--chunk", "64K"), m));
        assertEquals(0, created.exit(), created.all());
        // A grow 3 -> 4 members, 5 MiB in, the data moving down (md's new_offset).
        stageReshape(
                m,
                sb -> sb.deltaDisks(1)
                        .newOffset((int) -(sb.dataOffset() / 2)) // half way down to the metadata
                        .setFeature(Superblock.MD_FEATURE_NEW_OFFSET, true)
                        .reshapePosition(10240));
        Map<String, String> grow = examineAgainstMdadm(m);
        assertEquals("5120 (5.00 MiB 5.24 MB)", grow.get("Reshape pos'n"), grow.toString());
        assertEquals("1 (3->4)", grow.get("Delta Devices"), grow.toString());
        assertTrue(grow.containsKey("New Offset"), grow.toString());
        // A shrink 5 -> 4 members with a new chunk and layout (md's backwards reshape).
        stageReshape(
                m,
                sb -> sb.deltaDisks(-1)
                        .newOffset(0)
                        .setFeature(Superblock.MD_FEATURE_NEW_OFFSET, false)
                        .setFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS, true)
                        .newChunk(256)
                        .newLayout(0)
                        .reshapePosition(4096));
        Map<String, String> shrink = examineAgainstMdadm(m);
        assertEquals("128K", shrink.get("New Chunksize"), shrink.toString());
        assertEquals("left-asymmetric", shrink.get("New Layout"), shrink.toString());
        assertEquals("-1 (5->4)", shrink.get("Delta Devices"), shrink.toString());
    }

    /** Sets the reshape fields {@code change} makes on every member's superblock, RESHAPE_ACTIVE on. */
    private static void stageReshape(List<String> members, UnaryOperator<Superblock> change) throws Exception {
        for (String f : members) {
            String path = dir.resolve(f).toString();
            Superblock sb = MemberFiles.superblock(path);
            MemberFiles.writeSuperblock(path, change.apply(sb.setFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE, true)));
        }
    }

    /** raid examine and mdadm --examine on each member: every field equal; the first member's fields. */
    private static Map<String, String> examineAgainstMdadm(List<String> members) throws Exception {
        RaidLauncher.Result r = raid(with(List.of("examine"), members));
        assertEquals(0, r.exit(), r.all());
        Map<String, Map<String, String>> all = examineBlocks(r.out(), members);
        for (String file : members) {
            Map<String, String> theirs = mdadmExamine(file);
            assertEquals(theirs, all.get(file), file + "\nmdadm:\n" + theirs + "\nraid:\n" + r.out());
        }
        return all.get(members.get(0));
    }

    /**
     * An array made with md's partial parity log: mdadm --examine finds its PPL where raidfive says
     * (every field equal, the PPL line included), detail names the policy as mdadm does; raid grow
     * removes the log and adds it back, and mdadm follows each step.
     */
    @Test
    void aPartialParityLogIsWhereMdadmLooksAndGrowSwitchesIt() throws Exception {
        List<String> m = List.of("p0.img", "p1.img", "p2.img", "p3.img");
        RaidLauncher.Result created = raid(with(List.of("create", "--size", "32M", "--consistency-policy", "ppl"), m));
        assertEquals(0, created.exit(), created.all());
        assertTrue(created.stderr().contains("consistency policy ppl"), created.all());
        assertEquals(
                0,
                RaidLauncher.run(dir, MemberFiles.random(1 << 20, 9), with(List.of("write", "--offset", "4096"), m))
                        .exit());
        compare(m, 0);
        Map<String, String> theirs = mdadmExamine("p0.img");
        assertEquals("2048 sectors at offset 8 sectors from superblock", theirs.get("PPL"), theirs.toString());
        RaidLauncher.Result detail = raid(with(List.of("detail"), m));
        assertTrue(detail.out().contains("Consistency Policy : ppl"), detail.out());

        RaidLauncher.Result off = raid(with(List.of("grow", "--consistency-policy", "resync"), m));
        assertEquals(0, off.exit(), off.all());
        compare(m, 0);
        assertEquals(null, mdadmExamine("p0.img").get("PPL"));
        assertTrue(raid(with(List.of("detail"), m)).out().contains("Consistency Policy : resync"));

        RaidLauncher.Result on = raid(with(List.of("grow", "--consistency-policy", "ppl"), m));
        assertEquals(0, on.exit(), on.all());
        compare(m, 0);
        assertTrue(mdadmExamine("p0.img").get("PPL").endsWith("sectors at offset 8 sectors from superblock"));

        RaidLauncher.Result bad = raid(with(List.of("grow", "--consistency-policy", "journal"), m));
        assertEquals(2, bad.exit(), bad.all());
        assertEquals(1, bad.stderr().strip().lines().count(), bad.stderr());
    }

    /**
     * An array with md's internal bitmap: mdadm --examine agrees on every member, mdadm -X (on a loop
     * device, as it reads internal bitmaps only from block devices) agrees field by field with raid
     * examine-bitmap, through writes, a failed member whose writes stay marked, and a re-add that
     * recovers only the marked chunks; grow --bitmap none then internal.
     */
    @Test
    void anInternalBitmapIsWhatMdadmReadsAndReAddUsesIt() throws Exception {
        Assumptions.assumeTrue(Tools.canLoop(), "no loop devices here: skipping the mdadm -X comparison");
        List<String> m = List.of("w0.img", "w1.img", "w2.img", "w3.img");
        RaidLauncher.Result created = raid(with(
                List.of("create", "--size", "64M", "--bitmap", "internal", "--bitmap-chunk", "4M", "--chunk", "64K"),
                m));
        assertEquals(0, created.exit(), created.all());
        assertTrue(created.stderr().contains("consistency policy bitmap"), created.all());
        compare(m, 0);
        compareBitmap("w0.img");
        assertEquals(
                0,
                RaidLauncher.run(dir, MemberFiles.random(1 << 20, 11), with(List.of("write", "--offset", "0"), m))
                        .exit());
        assertEquals(0, raid(with(List.of("fail", "--member", "w3.img"), m)).exit());
        List<String> rest = List.of("w0.img", "w1.img", "w2.img");
        assertEquals(
                0,
                RaidLauncher.run(
                                dir,
                                MemberFiles.random(64 << 10, 12),
                                with(List.of("write", "--offset", Long.toString(20L << 20)), rest))
                        .exit());
        Map<String, String> x = compareBitmap("w0.img");
        assertTrue(
                x.get("Bitmap").matches("\\d+ bits \\(chunks\\), [1-9]\\d* dirty.*"),
                "the degraded write's bits stay set: " + x);
        RaidLauncher.Result readd = raid(with(List.of("re-add", "--member", "w3.img"), rest));
        assertEquals(0, readd.exit(), readd.all());
        assertTrue(readd.stderr().contains("chunks the write-intent bitmap marks"), readd.all());
        List<String> all = List.of("w0.img", "w1.img", "w2.img", "w3.img");
        compare(all, 0);
        RaidLauncher.Result check = raid(with(List.of("check"), all));
        assertEquals(0, check.exit(), check.all());
        RaidLauncher.Result off = raid(with(List.of("grow", "--bitmap", "none"), all));
        assertEquals(0, off.exit(), off.all());
        compare(all, 0);
        RaidLauncher.Result on = raid(with(List.of("grow", "--bitmap", "internal"), all));
        assertEquals(0, on.exit(), on.all());
        compare(all, 0);
        compareBitmap("w1.img");
        RaidLauncher.Result detail = raid(with(List.of("detail"), all));
        assertTrue(
                detail.out().contains("Intent Bitmap : Internal")
                        && detail.out().contains("Consistency Policy : bitmap"),
                detail.out());
    }

    /** raid examine-bitmap and mdadm -X on a loop device over the same file: every field equal. */
    private static Map<String, String> compareBitmap(String file) throws Exception {
        RaidLauncher.Result ours = raid("examine-bitmap", file);
        assertEquals(0, ours.exit(), ours.all());
        String loop = Tools.loopAttach(dir.resolve(file));
        try {
            Process p = new ProcessBuilder(mdadm, "-X", loop)
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            Map<String, String> theirs = fields(out);
            Map<String, String> mine = fields(ours.out());
            theirs.remove("Filename");
            mine.remove("Filename");
            assertEquals(theirs, mine, "mdadm -X:\n" + out + "\nraid examine-bitmap:\n" + ours.out());
            return mine;
        } finally {
            Tools.loopDetach(loop);
        }
    }

    /** Every member's examine field by field, and detail's identity, geometry and roles, against mdadm. */
    private static void compare(List<String> members, int detailExit) throws Exception {
        RaidLauncher.Result r = raid(with(List.of("examine"), members));
        assertEquals(0, r.exit(), r.all());
        Map<String, Map<String, String>> all = examineBlocks(r.out(), members);
        for (String file : members) {
            Map<String, String> theirs = mdadmExamine(file);
            Map<String, String> ours = all.get(file);
            // Every field mdadm prints, no field it leaves out, the same values.
            assertEquals(theirs, ours, file + "\nmdadm:\n" + theirs + "\nraid:\n" + r.out());
        }
        RaidLauncher.Result d = raid(with(List.of("detail", "--json"), members));
        assertEquals(detailExit, d.exit(), d.all());
        String json = d.out();
        Map<String, String> first = mdadmExamine(members.get(0));
        assertEquals(first.get("Array UUID"), LifecycleIT.jsonString(json, "uuid"));
        assertEquals(first.get("Events"), Long.toString(LifecycleIT.jsonLong(json, "events")));
        assertEquals(first.get("Layout"), LifecycleIT.jsonString(json, "layout"));
        assertEquals(first.get("Chunk Size"), LifecycleIT.jsonLong(json, "chunkSize") / 1024 + "K");
        assertEquals(first.get("Name"), LifecycleIT.jsonString(json, "name"));
        assertTrue(LifecycleIT.jsonString(json, "state").startsWith(first.get("State")), json);
        assertEquals(first.get("Raid Devices"), Long.toString(LifecycleIT.jsonLong(json, "raidDevices")));
        assertEquals(
                first.get("Array Size").replaceAll(" KiB.*", ""),
                Long.toString(LifecycleIT.jsonLong(json, "arraySize") / 1024));
        // Each member's role in detail's table is the one its own superblock gives it.
        Matcher row = Pattern.compile(
                        "\"raidDevice\": (\\d+|null),\\s*\"state\": \"([^\"]*)\",\\s*\"path\": \"([^\"]*)\"")
                .matcher(json);
        int rows = 0;
        while (row.find()) {
            Map<String, String> own = mdadmExamine(row.group(3));
            String role = own.get("Device Role");
            if (row.group(1).equals("null")) {
                assertTrue(role.equals("spare"), row.group(3) + " " + role);
            } else {
                assertTrue(role.endsWith("device " + row.group(1)), row.group(3) + ": " + role + " vs " + row.group());
            }
            rows++;
        }
        assertEquals(members.size(), rows, json);
    }

    /** {@code raid examine A B ...} output split per file: each block starts with the file name and a colon. */
    static Map<String, Map<String, String>> examineBlocks(String text, List<String> files) {
        Map<String, Map<String, String>> blocks = new LinkedHashMap<>();
        String current = null;
        StringBuilder block = new StringBuilder();
        for (String line : (text + "\n").split("\n")) {
            if (files.contains(line.endsWith(":") ? line.substring(0, line.length() - 1) : "")) {
                if (current != null) {
                    blocks.put(current, fields(block.toString()));
                }
                current = line.substring(0, line.length() - 1);
                block.setLength(0);
            } else {
                block.append(line).append('\n');
            }
        }
        blocks.put(current, fields(block.toString()));
        assertEquals(files.size(), blocks.size(), text);
        return blocks;
    }

    static Map<String, String> fields(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int colon = line.indexOf(" : ");
            if (colon > 0) {
                m.put(line.substring(0, colon).trim(), line.substring(colon + 3).trim());
            }
        }
        return m;
    }

    static Map<String, String> mdadmExamine(String file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(mdadm, "--examine", file)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), "mdadm --examine " + file + ":\n" + out);
        return fields(out);
    }
}
