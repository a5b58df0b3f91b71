package org.raidfive.md;

import java.time.Instant;

/** {@link Superblock#toString()}: every field by its md name, in on-disk order. */
final class SuperblockText {
    private SuperblockText() {}

    static String describe(final Superblock sb) {
        final StringBuilder s = new StringBuilder(640);
        s.append("Superblock{magic=0x")
                .append(Integer.toHexString(sb.magic()))
                .append(", major_version=")
                .append(sb.majorVersion())
                .append(", feature_map=0x")
                .append(Integer.toHexString(sb.featureMap()))
                .append(", pad0=0")
                .append(", set_uuid=")
                .append(MdUuid.format(sb.setUuid()))
                .append(", set_name='")
                .append(sb.name())
                .append('\'')
                .append(", ctime=")
                .append(time(sb.ctime()))
                .append(", level=")
                .append(sb.level())
                .append(", layout=")
                .append(sb.layout());
        if (MdLayout.isValid(sb.layout())) {
            s.append(" (").append(MdLayout.ofNumber(sb.layout()).mdadmName()).append(')');
        }
        s.append(", size=")
                .append(Long.toUnsignedString(sb.size()))
                .append(", chunksize=")
                .append(Integer.toUnsignedString(sb.chunkSectors()))
                .append(", raid_disks=")
                .append(sb.raidDisks())
                .append(", bitmap_offset=")
                .append(sb.bitmapOffset())
                .append(", new_level=")
                .append(sb.newLevel())
                .append(", reshape_position=")
                .append(Long.toUnsignedString(sb.reshapePosition()))
                .append(", delta_disks=")
                .append(sb.deltaDisks())
                .append(", new_layout=")
                .append(sb.newLayout())
                .append(", new_chunk=")
                .append(Integer.toUnsignedString(sb.newChunk()))
                .append(", new_offset=")
                .append(sb.newOffset())
                .append(", data_offset=")
                .append(Long.toUnsignedString(sb.dataOffset()))
                .append(", data_size=")
                .append(Long.toUnsignedString(sb.dataSize()))
                .append(", super_offset=")
                .append(Long.toUnsignedString(sb.superOffset()))
                .append(", recovery_offset=")
                .append(Long.toUnsignedString(sb.recoveryOffset()))
                .append(", dev_number=")
                .append(Integer.toUnsignedString(sb.devNumber()))
                .append(", cnt_corrected_read=")
                .append(Integer.toUnsignedString(sb.cntCorrectedRead()))
                .append(", device_uuid=")
                .append(MdUuid.format(sb.deviceUuid()))
                .append(", devflags=0x")
                .append(Integer.toHexString(sb.devflags()))
                .append(", bblog_shift=")
                .append(sb.bblogShift())
                .append(", bblog_size=")
                .append(sb.bblogSize())
                .append(", bblog_offset=")
                .append(sb.bblogOffset())
                .append(", utime=")
                .append(time(sb.utime()))
                .append(", events=")
                .append(Long.toUnsignedString(sb.events()))
                .append(", resync_offset=")
                .append(sb.isClean() ? "clean(all ones)" : Long.toUnsignedString(sb.resyncOffset()))
                .append(", sb_csum=0x")
                .append(Integer.toHexString(sb.sbCsum()))
                .append(", max_dev=")
                .append(sb.maxDev())
                .append(", pad3=0")
                .append(", dev_roles=")
                .append(roles(sb))
                .append('}');
        return s.toString();
    }

    private static String time(final long mdTime) {
        if (mdTime == 0) {
            return "0";
        }
        final Instant instant = MdTime.toInstant(mdTime);
        return mdTime + " (" + instant + ")";
    }

    /** Entries that are not spare, then how many are: {@code [0:0, 1:1, 2:faulty, 3:3; 124 spare]}. */
    private static String roles(final Superblock sb) {
        final StringBuilder s = new StringBuilder("[");
        int spares = 0;
        boolean first = true;
        for (int i = 0; i < sb.maxDev(); i++) {
            final int role = sb.devRole(i);
            if (role == Superblock.ROLE_SPARE) {
                spares++;
                continue;
            }
            if (!first) {
                s.append(", ");
            }
            first = false;
            s.append(i).append(':');
            s.append(role < Superblock.ROLE_MAX ? Integer.toString(role) : Superblock.describeRole(role));
        }
        if (spares > 0) {
            s.append(first ? "" : "; ").append(spares).append(" spare");
        }
        return s.append(']').toString();
    }
}
