package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.Mdadm;

/** Debian's mdadm, the real oracle, reads the members the engine writes (no kernel md needed). */
class MdadmCompatibilityTest {
    @TempDir
    Path dir;

    private List<MemberDisk> files(int n, long size) throws Exception {
        List<MemberDisk> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(FileDisk.createOrExtend(dir.resolve("m" + i + ".img"), size, false));
        }
        return list;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "left-asymmetric",
                "right-asymmetric",
                "left-symmetric",
                "right-symmetric",
                "parity-first",
                "parity-last"
            })
    void mdadmExamineReadsEveryMemberWeWrite(String layout) throws Exception {
        Mdadm.assumeInstalled();
        List<MemberDisk> disks = files(4, 64L << 20);
        String uuid;
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .layout(layout)
                        .chunkSize(64 * 1024)
                        .name("host:r5")
                        .assumeClean(true)
                        .build(),
                disks)) {
            array.write(0, java.nio.ByteBuffer.allocate(65536), 0, 65536);
            uuid = array.uuid();
        }
        for (int i = 0; i < 4; i++) {
            Path p = dir.resolve("m" + i + ".img");
            Mdadm.Result r = Mdadm.examine(p);
            assertEquals(0, r.exitCode(), r.all());
            Map<String, String> f = Mdadm.examineFields(p);
            assertEquals("raid5", f.get("Raid Level"), r.all());
            assertEquals("4", f.get("Raid Devices"));
            assertEquals("64K", f.get("Chunk Size"));
            assertEquals(Raid5Algorithm.parse(layout).mdadmName(), f.get("Layout"));
            assertEquals(uuid, f.get("Array UUID"));
            assertEquals("host:r5", f.get("Name").split(" ")[0]);
            assertEquals("clean", f.get("State"));
            assertEquals("Active device " + i, f.get("Device Role"));
            assertTrue(f.get("Checksum").endsWith("correct"), f.get("Checksum"));
            assertTrue(f.get("Array State").startsWith("AAAA"), f.get("Array State"));
        }
    }

    @Test
    void mdadmSeesADegradedArrayAndARebuildingMember() throws Exception {
        Mdadm.assumeInstalled();
        List<MemberDisk> disks = files(4, 32L << 20);
        Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(64 * 1024)
                        .assumeClean(true)
                        .syncLimits(new SyncLimits(1024, 1024 * 1024))
                        .build(),
                disks);
        array.fail(disks.get(2));
        array.remove(disks.get(2));
        Map<String, String> f = Mdadm.examineFields(dir.resolve("m0.img"));
        assertTrue(f.get("Array State").startsWith("AA.A"), f.get("Array State"));
        MemberDisk spare = FileDisk.createOrExtend(dir.resolve("spare.img"), 32L << 20, false);
        array.addSpare(spare);
        Thread.sleep(300);
        array.close(); // stops the slow rebuild with its checkpoint on disk
        Map<String, String> s = Mdadm.examineFields(dir.resolve("spare.img"));
        assertEquals("Active device 2", s.get("Device Role"), s.toString());
        assertTrue(s.containsKey("Recovery Offset"), "a rebuilding member carries its recovery offset: " + s);
    }
}
