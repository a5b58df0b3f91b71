package org.raidfive.interop;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.raidfive.md.MdLayout;
import org.raidfive.md.MdTime;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Mdadm;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/**
 * Field by field, what {@code mdadm --examine} prints for a member against what our codec decodes
 * from the same bytes ({@link Superblock#decode}). Each line mdadm prints is predicted from the
 * decoded fields with mdadm 4.2's own rules ({@code super1.c}: {@code examine_super1},
 * {@code getinfo_super1}), and lines it prints only sometimes must appear exactly when their
 * condition holds. This is the mapping a {@code raid examine} command needs.
 */
final class ExamineCheck {
    /** mdadm prints times with ctime(3) (the suite runs it with TZ=UTC): "Wed Dec  2 09:24:53 2026". */
    private static final DateTimeFormatter CTIME =
            DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC);
    /** mdadm's getinfo_super1: metadata is assumed to reach this far past super_offset ("match kernel"). */
    private static final long METADATA_RESERVE = (32 + 4) * 2;
    /** In an expected value: any decimal number. */
    private static final String ANY = "?";

    private ExamineCheck() {}

    /** The superblock at 4 KiB of {@code member}, decoded by our codec. */
    static Superblock decode(Path member) {
        byte[] block = new byte[Superblock.MAX_SUPERBLOCK_BYTES];
        try (RandomAccessFile f = new RandomAccessFile(member.toFile(), "r")) {
            f.seek(Superblock.SUPERBLOCK_OFFSET);
            f.readFully(block);
            return Superblock.decode(
                    ByteBuffer.wrap(block), member.getFileName().toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (SuperblockException e) {
            throw new AssertionError("our codec refuses " + member + ": " + e.getMessage(), e);
        }
    }

    /** What mdadm --examine should print for this superblock on a member of {@code memberSectors}. */
    static Map<String, String> expected(Superblock sb, long memberSectors) {
        Map<String, String> e = new LinkedHashMap<>();
        e.put("Magic", String.format("%08x", sb.magic()));
        e.put("Version", "1.2");
        e.put("Feature Map", "0x" + Integer.toHexString(sb.featureMap()));
        e.put("Array UUID", MdUuid.format(sb.setUuid()));
        e.put("Name", sb.name());
        e.put("Creation Time", ctime(sb.ctime()));
        e.put("Raid Level", "raid" + sb.level());
        e.put("Raid Devices", Integer.toString(sb.raidDisks()));
        e.put("Avail Dev Size", Long.toUnsignedString(sb.dataSize()) + " sectors");
        e.put("Array Size", Long.toUnsignedString(sb.size() * (sb.raidDisks() - 1) / 2) + " KiB");
        if (sb.size() != sb.dataSize()) {
            e.put("Used Dev Size", Long.toUnsignedString(sb.size()) + " sectors");
        }
        e.put("Data Offset", Long.toUnsignedString(sb.dataOffset()) + " sectors");
        e.put("Super Offset", Long.toUnsignedString(sb.superOffset()) + " sectors");
        if (sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET)) {
            e.put("Recovery Offset", Long.toUnsignedString(sb.recoveryOffset()) + " sectors");
        }
        long[] unused = unusedSpace(sb, memberSectors);
        if (unused != null) {
            e.put(
                    "Unused Space",
                    "before=" + (unused[0] < 0 ? ANY : Long.toString(unused[0])) + " sectors, after=" + unused[1]
                            + " sectors");
        }
        e.put("State", sb.isClean() ? "clean" : "active");
        e.put("Device UUID", MdUuid.format(sb.deviceUuid()));
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            e.put("Internal Bitmap", sb.bitmapOffset() + " sectors from superblock");
        }
        e.put("Update Time", ctime(sb.utime()));
        if (sb.bblogSize() != 0 && sb.bblogOffset() != 0) {
            e.put(
                    "Bad Block Log",
                    (sb.bblogSize() * 512 / 8) + " entries available at offset " + sb.bblogOffset() + " sectors"
                            + (sb.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS) ? " - bad blocks present." : ""));
        }
        e.put("Checksum", Integer.toHexString(sb.sbCsum()) + " - correct");
        e.put("Events", Long.toUnsignedString(sb.events()));
        e.put("Layout", MdLayout.ofNumber(sb.layout()).mdadmName());
        e.put("Chunk Size", (sb.chunkSectors() / 2) + "K");
        e.put("Device Role", deviceRole(sb));
        e.put("Array State", arrayState(sb) + " ('A' == active, '.' == missing, 'R' == replacing)");
        return e;
    }

    /**
     * mdadm's getinfo_super1 for a 1.2 member: {before, after} in sectors, or null when mdadm prints
     * no "Unused Space" line (both zero). With a bitmap, "before" depends on the bitmap's size (from
     * its own header, which is not part of the superblock): -1, for "any number".
     */
    private static long[] unusedSpace(Superblock sb, long memberSectors) {
        long earliest = sb.superOffset() + METADATA_RESERVE;
        if (sb.bblogOffset() != 0 && sb.bblogSize() != 0) {
            earliest = Math.max(earliest, sb.superOffset() + sb.bblogOffset() + sb.bblogSize());
        }
        long before = Math.max(0, sb.dataOffset() - earliest);
        long after = memberSectors - sb.size() - sb.dataOffset();
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            return new long[] {-1, after};
        }
        return before == 0 && after == 0 ? null : new long[] {before, after};
    }

    static String deviceRole(Superblock sb) {
        int role = sb.devNumber() < sb.maxDev() ? sb.role() : Superblock.ROLE_FAULTY;
        if (role >= Superblock.ROLE_FAULTY) {
            return "spare";
        }
        if (role == Superblock.ROLE_JOURNAL) {
            return "Journal";
        }
        return (sb.hasFeature(Superblock.MD_FEATURE_REPLACEMENT) ? "Replacement device " : "Active device ") + role;
    }

    /** One letter per slot: A (one device holds it), R (two: replacing), . (none). */
    static String arrayState(Superblock sb) {
        StringBuilder s = new StringBuilder();
        int[] roles = sb.devRoles();
        for (int slot = 0; slot < sb.raidDisks(); slot++) {
            int count = 0;
            for (int r : roles) {
                if (r == slot) {
                    count++;
                }
            }
            s.append(count == 2 ? 'R' : count == 1 ? 'A' : count == 0 ? '.' : '?');
        }
        return s.toString();
    }

    static String ctime(long mdTime) {
        return CTIME.format(MdTime.toInstant(MdTime.seconds(mdTime)));
    }

    /**
     * Asserts that host mdadm --examine prints, for {@code member}, exactly the lines predicted from
     * our decoding (every line it prints is predicted, and every predicted line is printed).
     */
    static void assertAgrees(Path member) {
        Superblock sb = decode(member);
        long sectors;
        try {
            sectors = Files.size(member) / 512;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> want = expected(sb, sectors);
        Map<String, String> got = Mdadm.examineFields(member);
        // "Name : host:name  (local to host X)" when X is this host's name: compare the name itself
        got.computeIfPresent("Name", (k, v) -> v.replaceFirst("\\s+\\(local to host .*\\)$", ""));
        List<String> diffs = new ArrayList<>();
        for (Map.Entry<String, String> w : want.entrySet()) {
            String g = got.get(w.getKey());
            String gv = g == null
                    ? null
                    : w.getKey().endsWith("Size") && !w.getKey().equals("Chunk Size")
                            ? g.replaceFirst(" \\(.*\\)$", "")
                            : g;
            boolean same = w.getValue().contains(ANY)
                    ? gv != null
                            && gv.matches(
                                    java.util.regex.Pattern.quote(w.getValue()).replace(ANY, "\\E\\d+\\Q"))
                    : w.getValue().equals(gv);
            if (!same) {
                diffs.add(w.getKey() + ": mdadm prints '" + g + "', our decoding gives '" + w.getValue() + "'");
            }
        }
        for (String k : got.keySet()) {
            if (!want.containsKey(k)) {
                diffs.add(k + ": mdadm prints '" + got.get(k) + "', not predicted from our decoding");
            }
        }
        if (!diffs.isEmpty()) {
            throw new AssertionError(
                    member + ": mdadm --examine and our decoding disagree:\n  " + String.join("\n  ", diffs) + "\n" + sb
                            + "\n" + Mdadm.examine(member).stdout());
        }
    }
}
