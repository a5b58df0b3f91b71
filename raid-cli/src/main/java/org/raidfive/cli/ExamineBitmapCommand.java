package org.raidfive.cli;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import org.raidfive.bench.Sizes;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.BitmapSuperblock;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code raid examine-bitmap}: a member's internal write-intent bitmap, as {@code mdadm
 * --examine-bitmap} (-X) prints it: its superblock's fields and how many bits are dirty. Reads the
 * file only.
 */
@Command(
        header = "Print members' write-intent bitmaps, like mdadm --examine-bitmap.",
        name = "examine-bitmap",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Print the internal write-intent bitmap of each MEMBER as mdadm -X does: magic, version, UUID, "
                    + "events, events cleared, state, chunk size, daemon period, write mode, sync size, and bits dirty.",
            "Exit 0, or 2 when a file holds no superblock or no bitmap."
        })
final class ExamineBitmapCommand extends Verb {
    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.members();
        Members.checkDistinct(members);
        StringBuilder out = new StringBuilder();
        for (String m : members) {
            try (MemberDisk disk = Members.isNbd(m) ? Members.openNbd(m) : FileDisk.openReadOnly(Members.path(m))) {
                out.append(text(m, disk));
            } catch (SuperblockException e) {
                throw CliException.usage(e.getMessage());
            }
        }
        out().print(out);
        out().flush();
        return ExitCode.OK;
    }

    static String text(String name, MemberDisk disk) throws IOException, SuperblockException {
        Superblock sb = SuperblockFile.read(disk, name).sb();
        if (!sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            throw new SuperblockException(name, "it has no internal write-intent bitmap");
        }
        long start = (sb.superOffset() + sb.bitmapOffset()) * 512L;
        ByteBuffer head = ByteBuffer.allocate(BitmapSuperblock.BYTES);
        disk.read(start, head, 0, BitmapSuperblock.BYTES);
        BitmapSuperblock b = BitmapSuperblock.decode(head, sb.setUuid(), name);
        long bits = b.bits();
        ByteBuffer map = ByteBuffer.allocate((int) ((bits + 7) / 8 + 511) / 512 * 512);
        disk.read(start + BitmapSuperblock.BYTES, map, 0, map.capacity());
        long dirty = 0;
        for (long i = 0; i < bits; i++) {
            if ((map.get((int) (i >>> 3)) & (1 << (i & 7))) != 0) {
                dirty++;
            }
        }
        StringBuilder s = new StringBuilder();
        field(s, "Filename", name);
        field(s, "Magic", String.format(Locale.ROOT, "%08x", b.magic()));
        field(s, "Version", Integer.toString(b.version()));
        field(s, "UUID", uuid(b.uuid()));
        field(s, "Events", Long.toUnsignedString(b.events()));
        field(s, "Events Cleared", Long.toUnsignedString(b.eventsCleared()));
        field(s, "State", b.state() == 0 ? "OK" : b.state() == 2 ? "Out of date" : "Unknown");
        field(s, "Chunksize", chunk(b.chunkBytes()));
        field(s, "Daemon", b.daemonSleep() + "s flush period");
        field(s, "Write Mode", b.writeBehind() != 0 ? "Allow write behind, max " + b.writeBehind() : "Normal");
        field(s, "Sync Size", (b.syncSize() / 2) + Sizes.mdadmHuman(b.syncSize() * 512));
        // printf's %2.1f as glibc does it: the double's exact value, ties to even (6.25 -> 6.2)
        String pct = new BigDecimal(100.0 * dirty / Math.max(1, bits))
                .setScale(1, RoundingMode.HALF_EVEN)
                .toPlainString();
        field(s, "Bitmap", bits + " bits (chunks), " + dirty + " dirty (" + pct + "%)");
        return s.toString();
    }

    /** As mdadm prints a v1.x array's bitmap UUID: its bytes in order, in four groups (as --examine). */
    private static String uuid(byte[] u) {
        return MdUuid.format(u);
    }

    /** mdadm's human_chunksize: "64 MB" (powers of 1024, its units). */
    private static String chunk(long bytes) {
        String[] suffixes = {"B", "KB", "MB", "GB", "TB"};
        int i = 0;
        while ((bytes >> 10) != 0 && i < suffixes.length - 1) {
            bytes >>= 10;
            i++;
        }
        return bytes + " " + suffixes[i];
    }

    private static void field(StringBuilder s, String name, String value) {
        s.append(String.format(Locale.ROOT, "%16s : %s%n", name, value));
    }
}
