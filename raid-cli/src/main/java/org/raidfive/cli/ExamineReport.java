package org.raidfive.cli;

import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import org.raidfive.bench.Json;
import org.raidfive.bench.Sizes;
import org.raidfive.md.MdLayout;
import org.raidfive.md.MdTime;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;

/**
 * One member's superblock, field by field as {@code mdadm --examine} prints a v1.2 superblock
 * (mdadm's {@code examine_super1}), or as JSON.
 */
final class ExamineReport {
    /** C's {@code ctime()} without the newline, as mdadm prints times: {@code Tue Dec  2 08:52:00 2025}. */
    private static final DateTimeFormatter CTIME = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US);

    /** Sectors after a 1.2 superblock that md counts as metadata whatever the features ((32 + 4) * 2). */
    private static final long KERNEL_RESERVE_SECTORS = 72;

    private ExamineReport() {}

    /** {@code memberBytes}: the member's size, or 0 when unknown (then no "Unused Space" line). */
    static String text(String path, SuperblockFile.Read read, long memberBytes) {
        Superblock sb = read.sb();
        StringBuilder s = new StringBuilder(1024);
        s.append(path).append(":\n");
        field(s, "Magic", String.format("%08x", sb.magic()));
        field(s, "Version", "1.2");
        field(s, "Feature Map", "0x" + Integer.toHexString(sb.featureMap()));
        field(s, "Array UUID", MdUuid.format(sb.setUuid()));
        field(s, "Name", sb.name());
        field(s, "Creation Time", time(sb.ctime()));
        field(s, "Raid Level", level(sb.level()));
        field(s, "Raid Devices", Integer.toString(sb.raidDisks()));
        s.append('\n');
        field(s, "Avail Dev Size", sb.dataSize() + " sectors" + Sizes.mdadmHuman(sb.dataSize() << 9));
        long arrayBytes = arrayBytes(sb);
        field(s, "Array Size", (arrayBytes >> 10) + " KiB" + Sizes.mdadmHuman(arrayBytes));
        if (sb.size() != sb.dataSize()) { // mdadm shows it only when it differs from Avail Dev Size
            field(s, "Used Dev Size", sb.size() + " sectors" + Sizes.mdadmHuman(sb.size() << 9));
        }
        field(s, "Data Offset", sb.dataOffset() + " sectors");
        Long newOffset = newOffsetSectors(sb);
        if (newOffset != null) {
            field(s, "New Offset", newOffset + " sectors");
        }
        field(s, "Super Offset", sb.superOffset() + " sectors");
        if (sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET)) {
            field(s, "Recovery Offset", Long.toUnsignedString(sb.recoveryOffset()) + " sectors");
        }
        long[] unused = unusedSpace(sb, memberBytes, read.bitmapSectors());
        if (unused != null) {
            field(s, "Unused Space", "before=" + unused[0] + " sectors, after=" + unused[1] + " sectors");
        }
        field(s, "State", sb.isClean() ? "clean" : "active");
        field(s, "Device UUID", MdUuid.format(sb.deviceUuid()));
        s.append('\n');
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            field(s, "Internal Bitmap", sb.bitmapOffset() + " sectors from superblock");
        } else if (sb.hasFeature(Superblock.MD_FEATURE_PPL) || sb.hasFeature(Superblock.MD_FEATURE_MULTIPLE_PPLS)) {
            field(s, "PPL", sb.pplSize() + " sectors at offset " + sb.pplOffset() + " sectors from superblock");
        }
        reshape(s, sb);
        field(s, "Update Time", time(sb.utime()));
        if (sb.bblogSize() != 0 && sb.bblogOffset() != 0) {
            field(
                    s,
                    "Bad Block Log",
                    (sb.bblogSize() * 512 / 8) + " entries available at offset " + sb.bblogOffset() + " sectors"
                            + (sb.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS) ? " - bad blocks present." : ""));
        }
        field(
                s,
                "Checksum",
                Integer.toHexString(read.storedChecksum())
                        + (read.checksumCorrect()
                                ? " - correct"
                                : " - expected " + Integer.toHexString(read.expectedChecksum())));
        field(s, "Events", Long.toUnsignedString(sb.events()));
        s.append('\n');
        field(s, "Layout", layout(sb.layout()));
        field(s, "Chunk Size", (sb.chunkSectors() / 2) + "K");
        s.append('\n');
        // mdadm prints these two one column to the left of the others
        s.append("   Device Role : ").append(role(sb)).append('\n');
        s.append("   Array State : ")
                .append(arrayState(sb))
                .append(" ('A' == active, '.' == missing, 'R' == replacing)\n");
        return s.toString();
    }

    /**
     * Where a reshape moves the data to, in sectors (md's new_offset is a signed distance from
     * data_offset), or null where mdadm prints no "New Offset": no MD_FEATURE_NEW_OFFSET, or a zero
     * distance.
     */
    private static Long newOffsetSectors(Superblock sb) {
        return sb.newOffset() != 0 && sb.hasFeature(Superblock.MD_FEATURE_NEW_OFFSET)
                ? sb.dataOffset() + sb.newOffset()
                : null;
    }

    /** mdadm's lines for a reshape in progress (MD_FEATURE_RESHAPE_ACTIVE), a blank line after them. */
    private static void reshape(StringBuilder s, Superblock sb) {
        if (!sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE)) {
            return;
        }
        long position = sb.reshapePosition();
        field(s, "Reshape pos'n", Long.toUnsignedString(position / 2) + Sizes.mdadmHuman(position << 9));
        if (sb.deltaDisks() != 0) {
            field(
                    s,
                    "Delta Devices",
                    sb.deltaDisks() + " (" + (sb.raidDisks() - sb.deltaDisks()) + "->" + sb.raidDisks() + ")");
        }
        if (sb.newLevel() != sb.level()) {
            field(s, "New Level", mdLevelName(sb.newLevel()));
        }
        if (sb.newLayout() != sb.layout() && sb.level() == Superblock.LEVEL_RAID5) {
            field(s, "New Layout", layout(sb.newLayout()));
        }
        if (sb.newChunk() != sb.chunkSectors()) {
            field(s, "New Chunksize", (sb.newChunk() / 2) + "K");
        }
        s.append('\n');
    }

    static Map<String, Object> json(String path, SuperblockFile.Read read, long memberBytes) {
        Superblock sb = read.sb();
        Map<String, Object> m = Json.object();
        m.put("path", path);
        m.put("magic", String.format("%08x", sb.magic()));
        m.put("version", "1.2");
        m.put("featureMap", sb.featureMap());
        m.put("arrayUuid", MdUuid.format(sb.setUuid()));
        m.put("name", sb.name());
        m.put("creationTime", MdTime.toInstant(sb.ctime()).toString());
        m.put("raidLevel", level(sb.level()));
        m.put("raidDevices", sb.raidDisks());
        m.put("availDevSectors", sb.dataSize());
        m.put("arraySizeKiB", arrayBytes(sb) >> 10);
        m.put("usedDevSectors", sb.size());
        m.put("dataOffsetSectors", sb.dataOffset());
        m.put("superOffsetSectors", sb.superOffset());
        long[] unused = unusedSpace(sb, memberBytes, read.bitmapSectors());
        m.put("unusedSectorsBefore", unused == null ? null : unused[0]);
        m.put("unusedSectorsAfter", unused == null ? null : unused[1]);
        m.put(
                "recoveryOffsetSectors",
                sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET) ? sb.recoveryOffset() : null);
        m.put("state", sb.isClean() ? "clean" : "active");
        m.put("resyncOffsetSectors", sb.isClean() ? null : sb.resyncOffset());
        m.put("deviceUuid", MdUuid.format(sb.deviceUuid()));
        m.put("updateTime", MdTime.toInstant(sb.utime()).toString());
        m.put("checksum", Integer.toHexString(read.storedChecksum()));
        m.put("checksumCorrect", read.checksumCorrect());
        m.put("expectedChecksum", Integer.toHexString(read.expectedChecksum()));
        m.put("events", sb.events());
        m.put("layout", layout(sb.layout()));
        m.put("chunkSizeKiB", sb.chunkSectors() / 2);
        boolean reshaping = sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE);
        m.put("reshapePositionSectors", reshaping ? sb.reshapePosition() : null);
        m.put("deltaDevices", reshaping ? sb.deltaDisks() : null);
        m.put("newLevel", reshaping ? mdLevelName(sb.newLevel()) : null);
        m.put("newLayout", reshaping ? layout(sb.newLayout()) : null);
        m.put("newChunkSizeKiB", reshaping ? sb.newChunk() / 2 : null);
        m.put("newOffsetSectors", newOffsetSectors(sb));
        m.put("devNumber", sb.devNumber());
        int role = sb.role();
        m.put("role", role < Superblock.ROLE_MAX ? (Object) role : Superblock.describeRole(role));
        m.put("replacement", sb.hasFeature(Superblock.MD_FEATURE_REPLACEMENT));
        m.put("deviceRole", role(sb));
        m.put("arrayState", arrayState(sb));
        return m;
    }

    /**
     * The space around the data that mdadm's "Unused Space" line reports for a 1.2 member, {before,
     * after} in sectors, or null where mdadm prints no line (both zero; a pending data-offset change)
     * or we cannot tell: an unknown member size, or an internal bitmap (its size is in the bitmap's own
     * header, which we do not read). Before: from the end of whatever follows the superblock (the
     * kernel's 36 KiB reserve, the bad-block log) to the data; after: from the end of the used data to
     * the end of the member.
     */
    static long[] unusedSpace(Superblock sb, long memberBytes, long bitmapSectors) {
        if (memberBytes <= 0 || sb.hasFeature(Superblock.MD_FEATURE_NEW_OFFSET)) {
            return null;
        }
        long earliest = sb.superOffset() + KERNEL_RESERVE_SECTORS;
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            earliest = Math.max(earliest, sb.superOffset() + sb.bitmapOffset() + bitmapSectors);
        } else if (sb.hasFeature(Superblock.MD_FEATURE_PPL) || sb.hasFeature(Superblock.MD_FEATURE_MULTIPLE_PPLS)) {
            earliest = Math.max(earliest, sb.superOffset() + sb.pplOffset() + sb.pplSize());
        }
        if (sb.bblogOffset() != 0 && sb.bblogSize() != 0) {
            earliest = Math.max(earliest, sb.superOffset() + sb.bblogOffset() + sb.bblogSize());
        }
        long before = Math.max(0, sb.dataOffset() - earliest);
        long after = (memberBytes >> 9) - sb.size() - sb.dataOffset();
        return before == 0 && after == 0 ? null : new long[] {before, after};
    }

    private static void field(StringBuilder s, String key, String value) {
        s.append(String.format("%15s : %s%n", key, value));
    }

    static long arrayBytes(Superblock sb) {
        return (sb.size() << 9) * Math.max(0, sb.raidDisks() - 1);
    }

    static String time(long mdTime) {
        return CTIME.format(MdTime.toInstant(mdTime).atZone(ZoneId.systemDefault()));
    }

    static String level(int level) {
        return level == Superblock.LEVEL_RAID5 ? "raid5" : "-unknown- (" + level + ")";
    }

    /** mdadm's name of a RAID level (its {@code pers} table), or {@code -unknown-}. */
    static String mdLevelName(int level) {
        switch (level) {
            case -1:
                return "linear";
            case 0:
            case 1:
            case 4:
            case 5:
            case 6:
            case 10:
                return "raid" + level;
            default:
                return "-unknown-";
        }
    }

    static String layout(int number) {
        return MdLayout.isValid(number) ? MdLayout.ofNumber(number).mdadmName() : "-unknown-";
    }

    /** {@code Active device 2}, {@code Replacement device 2}, {@code spare}, {@code faulty}. */
    static String role(Superblock sb) {
        int role = sb.role();
        if (role == Superblock.ROLE_SPARE) {
            return "spare";
        }
        if (role == Superblock.ROLE_FAULTY) {
            return "faulty";
        }
        if (role == Superblock.ROLE_JOURNAL) {
            return "Journal";
        }
        return (sb.hasFeature(Superblock.MD_FEATURE_REPLACEMENT) ? "Replacement device " : "Active device ") + role;
    }

    /** mdadm's array state: per slot A (one member), R (two: replacing), . (none), ? (more). */
    static String arrayState(Superblock sb) {
        // mdadm also shows the slots a shrinking reshape (delta_disks < 0) is leaving
        int slots = sb.raidDisks()
                + (sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE) && sb.deltaDisks() < 0 ? -sb.deltaDisks() : 0);
        StringBuilder s = new StringBuilder(slots);
        for (int slot = 0; slot < slots; slot++) {
            int count = 0;
            for (int dev = 0; dev < sb.maxDev(); dev++) {
                if (sb.devRole(dev) == slot) {
                    count++;
                }
            }
            s.append(count == 0 ? '.' : count == 1 ? 'A' : count == 2 ? 'R' : '?');
        }
        return s.toString();
    }
}
