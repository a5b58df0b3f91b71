package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real oracle: member images written with our encoder, read back by
 * Debian's mdadm ({@code mdadm --examine}), which recomputes the checksum
 * itself and prints every field it understands. Skipped where mdadm is not
 * installed.
 */
class MdadmExamineTest {
    @TempDir
    static Path dir;

    @BeforeEach
    void needsMdadm() {
        Mdadm.assumeInstalled();
    }

    @Test
    void mdadmReadsEachMemberOfACleanFourDiskArray() {
        for (int dev = 0; dev < 4; dev++) {
            final Superblock sb = Samples.member(dev);
            final Path file = Mdadm.writeMember(dir.resolve("clean" + dev + ".img"), Samples.MEMBER_BYTES, sb);
            final Map<String, String> f = Mdadm.examineFields(file);
            final String all = f.toString();
            assertEquals("a92b4efc", f.get("Magic"), all);
            assertEquals("1.2", f.get("Version"), all);
            assertEquals("0x0", f.get("Feature Map"), all);
            assertEquals(Samples.ARRAY_UUID, f.get("Array UUID"), all);
            assertEquals("rf-testhost:r5", f.get("Name"), all);
            assertEquals("raid5", f.get("Raid Level"), all);
            assertEquals("4", f.get("Raid Devices"), all);
            // 64 MiB - 4096 sectors of data offset = 126976 sectors, a whole number of 512K chunks
            assertEquals("126976 sectors (62.00 MiB 65.01 MB)", f.get("Avail Dev Size"), all);
            assertEquals("190464 KiB (186.00 MiB 195.04 MB)", f.get("Array Size"), all); // 3 data disks
            assertNull(f.get("Used Dev Size"), "mdadm prints it only when size != data_size: " + all);
            assertEquals("4096 sectors", f.get("Data Offset"), all);
            assertEquals("8 sectors", f.get("Super Offset"), all);
            assertEquals("before=4016 sectors, after=0 sectors", f.get("Unused Space"), all);
            assertEquals("clean", f.get("State"), all);
            assertEquals(MdUuid.format(Samples.deviceUuid(dev)), f.get("Device UUID"), all);
            assertEquals(String.format("%x - correct", sb.sbCsum()), f.get("Checksum"), all);
            assertEquals("42", f.get("Events"), all);
            assertEquals("left-symmetric", f.get("Layout"), all);
            assertEquals("512K", f.get("Chunk Size"), all);
            assertEquals("Active device " + dev, f.get("Device Role"), all);
            assertTrue(f.get("Array State").startsWith("AAAA "), all);
            assertEquals("Tue Nov 14 22:13:20 2023", f.get("Creation Time"), all);
            assertEquals("Tue Nov 14 22:15:23 2023", f.get("Update Time"), all);
        }
    }

    @Test
    void exportFormAgrees() {
        final Path file = Mdadm.writeMember(dir.resolve("export.img"), Samples.MEMBER_BYTES, Samples.member(2));
        final Map<String, String> e = Mdadm.examineExport(file);
        assertEquals("raid5", e.get("MD_LEVEL"), e.toString());
        assertEquals("4", e.get("MD_DEVICES"), e.toString());
        assertEquals("rf-testhost:r5", e.get("MD_NAME"), e.toString());
        assertEquals(Samples.ARRAY_UUID, e.get("MD_UUID"), e.toString());
        assertEquals(MdUuid.format(Samples.deviceUuid(2)), e.get("MD_DEV_UUID"), e.toString());
        assertEquals("42", e.get("MD_EVENTS"), e.toString());
        assertEquals(Long.toString(MdTime.seconds(Samples.UTIME)), e.get("MD_UPDATE_TIME"), e.toString());
    }

    @Test
    void sixtyFourKibChunkGivesItsOwnOffsetAndSize() {
        final Superblock sb = Samples.member(0, 128);
        final Map<String, String> f =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("c64.img"), Samples.MEMBER_BYTES, sb));
        assertEquals("64K", f.get("Chunk Size"), f.toString());
        assertEquals("2048 sectors", f.get("Data Offset"), f.toString());
        assertTrue(f.get("Avail Dev Size").startsWith("129024 sectors"), f.toString());
        assertTrue(f.get("Checksum").endsWith(" - correct"), f.toString());
    }

    @Test
    void sizeBelowDataSizeIsReportedAsUsedDevSize() {
        final Superblock sb = Samples.member(0).size(100 * 1024);
        final Map<String, String> f =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("used.img"), Samples.MEMBER_BYTES, sb));
        assertEquals("102400 sectors (50.00 MiB 52.43 MB)", f.get("Used Dev Size"), f.toString());
        assertEquals("153600 KiB (150.00 MiB 157.29 MB)", f.get("Array Size"), f.toString());
        assertTrue(f.get("Checksum").endsWith(" - correct"), f.toString());
    }

    @Test
    void everyLayoutNameAndDirtyState() {
        for (final MdLayout layout : MdLayout.values()) {
            final Superblock sb = Samples.member(1).layout(layout).resyncOffset(0);
            final Map<String, String> f = Mdadm.examineFields(
                    Mdadm.writeMember(dir.resolve("layout" + layout.number() + ".img"), Samples.MEMBER_BYTES, sb));
            assertEquals(layout.mdadmName(), f.get("Layout"), f.toString());
            assertEquals("active", f.get("State"), f.toString());
            assertTrue(f.get("Checksum").endsWith(" - correct"), f.toString());
        }
    }

    @Test
    void faultyAndSpareMembersAsMdadmSeesThem() {
        // dev 3 failed, dev 4 is a spare: every superblock records both
        final Superblock[] members = new Superblock[5];
        for (int dev = 0; dev < 5; dev++) {
            members[dev] = Samples.member(dev)
                    .devRole(3, Superblock.ROLE_FAULTY)
                    .devRole(4, Superblock.ROLE_SPARE)
                    .deviceUuid(Samples.deviceUuid(dev));
        }
        final Map<String, String> active =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("deg0.img"), Samples.MEMBER_BYTES, members[0]));
        assertEquals("Active device 0", active.get("Device Role"), active.toString());
        assertTrue(active.get("Array State").startsWith("AAA. "), active.toString());

        // mdadm 4.2 prints "spare" for both spare (0xffff) and faulty (0xfffe) roles (role >= MD_DISK_ROLE_FAULTY)
        final Map<String, String> faulty =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("deg3.img"), Samples.MEMBER_BYTES, members[3]));
        assertEquals("spare", faulty.get("Device Role"), faulty.toString());
        assertTrue(faulty.get("Array State").startsWith("AAA. "), faulty.toString());
        assertTrue(faulty.get("Checksum").endsWith(" - correct"), faulty.toString());

        final Map<String, String> spare =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("deg4.img"), Samples.MEMBER_BYTES, members[4]));
        assertEquals("spare", spare.get("Device Role"), spare.toString());
        assertTrue(spare.get("Checksum").endsWith(" - correct"), spare.toString());
    }

    @Test
    void aSlotHeldTwiceIsAReplacementAndABadRoleIsReportedAsSuch() {
        // mdadm's own consistency report: dev 4 replacing slot 3 shows 'R'
        final Superblock sb = Samples.member(4)
                .devRole(4, 3)
                .featureMap(Superblock.MD_FEATURE_REPLACEMENT | Superblock.MD_FEATURE_RECOVERY_OFFSET)
                .recoveryOffset(2048);
        final Map<String, String> f =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("repl.img"), Samples.MEMBER_BYTES, sb));
        assertEquals("Replacement device 3", f.get("Device Role"), f.toString());
        assertTrue(f.get("Array State").startsWith("AAAR "), f.toString());
    }

    @Test
    void recoveringMemberShowsRecoveryOffset() {
        final Superblock sb = Samples.member(3)
                .featureMap(Superblock.MD_FEATURE_RECOVERY_OFFSET)
                .recoveryOffset(12_345)
                .events(43)
                .resyncOffset(Superblock.RESYNC_CLEAN);
        final Map<String, String> f =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("rec.img"), Samples.MEMBER_BYTES, sb));
        assertEquals("0x2", f.get("Feature Map"), f.toString());
        assertEquals("12345 sectors", f.get("Recovery Offset"), f.toString());
        assertEquals("Active device 3", f.get("Device Role"), f.toString());
        assertEquals("43", f.get("Events"), f.toString());
        assertTrue(f.get("Checksum").endsWith(" - correct"), f.toString());
    }

    @Test
    void manyDevicesGrowMaxDevAndMdadmStillAgreesOnTheChecksum() {
        final Superblock sb = Samples.member(0).raidDisks(4);
        sb.devNumber(300).devRole(300, 2).devRole(2, Superblock.ROLE_FAULTY); // a dev number past 128 took slot 2
        assertEquals(301, sb.maxDev());
        final Map<String, String> f =
                Mdadm.examineFields(Mdadm.writeMember(dir.resolve("big.img"), Samples.MEMBER_BYTES, sb));
        assertEquals("Active device 2", f.get("Device Role"), f.toString());
        assertTrue(f.get("Array State").startsWith("AAAA "), f.toString());
        assertEquals(String.format("%x - correct", sb.sbCsum()), f.get("Checksum"), f.toString());
    }

    @Test
    void mdadmDetectsTheCorruptionDecodeDetects() {
        final Superblock sb = Samples.member(1);
        final Path file = Mdadm.writeMember(dir.resolve("bad.img"), Samples.MEMBER_BYTES, sb);
        try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(Superblock.SUPERBLOCK_OFFSET + 200); // events, low byte
            raf.write(43);
        } catch (final java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
        final Map<String, String> f = Mdadm.examineFields(file);
        assertTrue(f.get("Checksum").matches(String.format("%x - expected [0-9a-f]+", sb.sbCsum())), f.toString());
        assertEquals("43", f.get("Events"), f.toString());
    }

    @Test
    void zeroFileIsNoMemberForMdadmEither() {
        final Path file = dir.resolve("empty.img");
        try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(Samples.MEMBER_BYTES);
        } catch (final java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
        final Mdadm.Result r = Mdadm.examine(file);
        assertNotEquals(0, r.exitCode(), r.all());
        assertTrue(r.stderr().contains("No md superblock detected"), r.all());
    }
}
