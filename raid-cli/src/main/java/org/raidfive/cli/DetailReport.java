package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import org.raidfive.bench.Json;
import org.raidfive.bench.Sizes;
import org.raidfive.md.MdTime;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;

/**
 * What {@code raid detail} shows, like {@code mdadm --detail}: built from an assembled array's
 * {@link ArrayStatus}, or, when the array cannot be assembled, from the superblocks alone.
 */
final class DetailReport {
    /** One line of the member table; {@code number} is the md device number, {@code raidDevice} the slot or -1. */
    record Row(int number, int raidDevice, String state, String path) {}

    String uuid;
    String name;
    String layout;
    int chunkBytes;
    long arrayBytes;
    long usedDevBytes;
    int raidDevices;
    String state;
    String problem;
    /** Who holds the array open (another process, or an array here): its live state is the holder's. */
    String heldBy;

    long events;
    long creationTime;
    long updateTime;
    long active;
    long working;
    long failed;
    long spare;
    Double rebuildPercent;
    Double resyncPercent;
    boolean degraded;
    boolean failedArray;
    /** mdadm's "Consistency Policy": resync, ppl or bitmap, from the superblock's features. */
    String consistencyPolicy = "resync";

    final List<Row> rows = new ArrayList<>();

    /** From an assembled array; {@code stale} are given files the array refused as out of date. */
    static DetailReport of(ArrayStatus s, Superblock top, List<Survey.Entry> stale) {
        DetailReport r = new DetailReport();
        r.uuid = s.uuid();
        r.name = s.name();
        r.layout = s.layout();
        r.consistencyPolicy = consistencyPolicy(top);
        r.chunkBytes = s.chunkSize();
        r.arrayBytes = s.arrayBytes();
        r.usedDevBytes = s.memberDataBytes();
        r.raidDevices = s.raidDisks();
        r.events = s.events();
        r.creationTime = top.ctime();
        r.updateTime = top.utime();
        r.active = s.activeMembers();
        r.working = s.workingMembers();
        r.failed = s.failedMembers() + stale.size();
        r.spare = s.spareMembers();
        r.degraded = s.degraded();
        r.failedArray = s.failed();
        StringBuilder state = new StringBuilder(s.state());
        boolean[] filled = new boolean[s.raidDisks()];
        for (ArrayStatus.MemberStatus m : s.members()) {
            String st;
            switch (m.state()) {
                case IN_SYNC -> st = m.replacement() ? "replacement" : "active sync";
                case REBUILDING -> {
                    st = m.replacement() ? "replacement rebuilding" : "spare rebuilding";
                    double pct = s.memberDataBytes() == 0 ? 100 : 100.0 * m.recoveryOffset() / s.memberDataBytes();
                    r.rebuildPercent = r.rebuildPercent == null ? pct : Math.min(r.rebuildPercent, pct);
                }
                case FAULTY -> st = "faulty";
                default -> st = "spare";
            }
            if (m.slot() >= 0
                    && m.slot() < filled.length
                    && (m.state() == MemberState.IN_SYNC || m.state() == MemberState.REBUILDING)) {
                filled[m.slot()] = true;
            }
            r.rows.add(new Row(m.devNumber(), m.slot(), st, m.name()));
        }
        for (int slot = 0; slot < filled.length; slot++) {
            if (!filled[slot]) {
                r.rows.add(new Row(-1, slot, "removed", ""));
            }
        }
        for (Survey.Entry e : stale) {
            r.rows.add(new Row(e.sb().devNumber(), -1, "faulty (stale)", e.spec()));
        }
        if (!top.isClean() && top.resyncOffset() != 0 && s.sync() == null) {
            r.resyncPercent = 100.0 * top.resyncOffset() / Math.max(1, top.size());
        }
        r.state = state.toString();
        sortRows(r.rows);
        return r;
    }

    /** From superblocks alone: the array could not be assembled (failed, or refused for {@code problem}). */
    static DetailReport ofSuperblocks(Survey survey, String problem) {
        Superblock top = survey.top();
        DetailReport r = new DetailReport();
        r.uuid = MdUuid.format(top.setUuid());
        r.name = top.name();
        r.layout = ExamineReport.layout(top.layout());
        r.consistencyPolicy = consistencyPolicy(top);
        r.chunkBytes = top.chunkSectors() * 512;
        r.arrayBytes = ExamineReport.arrayBytes(top);
        r.usedDevBytes = top.size() * 512;
        r.raidDevices = top.raidDisks();
        r.events = top.events();
        r.creationTime = top.ctime();
        r.updateTime = top.utime();
        r.problem = problem;
        r.failedArray = true;
        r.degraded = true;
        boolean[] filled = new boolean[top.raidDisks()];
        for (Survey.Entry e : survey.entries()) {
            Superblock sb = e.sb();
            String st;
            int slot = -1;
            switch (e.verdict()) {
                case FOREIGN -> st = "foreign (another array)";
                case STALE -> {
                    st = "faulty (stale)";
                    r.failed++;
                }
                default -> {
                    int role = top.devRole(sb.devNumber());
                    if (role < Superblock.ROLE_MAX && role < top.raidDisks()) {
                        slot = role;
                        boolean rebuilding = sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET);
                        st = rebuilding ? "spare rebuilding" : "active sync";
                        r.working++;
                        if (rebuilding) {
                            r.spare++;
                        } else {
                            r.active++;
                            filled[slot] = true;
                        }
                    } else {
                        st = "spare";
                        r.working++;
                        r.spare++;
                    }
                }
            }
            r.rows.add(new Row(sb.devNumber(), slot, st, e.spec()));
        }
        for (int slot = 0; slot < filled.length; slot++) {
            if (!filled[slot]) {
                r.rows.add(new Row(-1, slot, "removed", ""));
            }
        }
        r.state = (top.isClean() ? "clean" : "active") + ", FAILED, not started";
        sortRows(r.rows);
        return r;
    }

    /**
     * From superblocks alone, for an array that another holder has open: what its members last
     * wrote (the holder's live state may be ahead of it).
     */
    static DetailReport ofHeld(Survey survey, String heldBy) {
        DetailReport r = ofSuperblocks(survey, null);
        r.heldBy = heldBy;
        long missing = r.raidDevices - r.active;
        r.failedArray = missing > 1;
        r.degraded = missing > 0;
        r.state = (survey.top().isClean() ? "clean" : "active")
                + (r.failedArray ? ", FAILED" : r.degraded ? ", degraded" : "") + ", in use by " + heldBy;
        return r;
    }

    private static void sortRows(List<Row> rows) {
        rows.sort((a, b) -> {
            int sa = a.raidDevice() < 0 ? Integer.MAX_VALUE : a.raidDevice();
            int sb = b.raidDevice() < 0 ? Integer.MAX_VALUE : b.raidDevice();
            return sa != sb ? Integer.compare(sa, sb) : Integer.compare(a.number(), b.number());
        });
    }

    /** mdadm's name for how the array keeps parity consistent, from a member's features. */
    static String consistencyPolicy(Superblock sb) {
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            return "bitmap";
        }
        if (sb.hasFeature(Superblock.MD_FEATURE_PPL) || sb.hasFeature(Superblock.MD_FEATURE_MULTIPLE_PPLS)) {
            return "ppl";
        }
        return "resync";
    }

    /** {@code mdadm --detail --test}'s exit status: 0 healthy, 1 degraded, 2 failed. */
    int exitCode() {
        return failedArray ? ExitCode.DETAIL_FAILED : degraded ? ExitCode.PROBLEM : ExitCode.OK;
    }

    String text(List<String> members) {
        StringBuilder s = new StringBuilder(1024);
        s.append(String.join(" ", members)).append(":\n");
        field(s, "Version", "1.2");
        field(s, "Creation Time", ExamineReport.time(creationTime));
        field(s, "Raid Level", "raid5");
        field(s, "Array Size", (arrayBytes >> 10) + Sizes.mdadmHuman(arrayBytes));
        field(s, "Used Dev Size", (usedDevBytes >> 10) + Sizes.mdadmHuman(usedDevBytes));
        field(s, "Raid Devices", Integer.toString(raidDevices));
        field(
                s,
                "Total Devices",
                Integer.toString(rows.stream()
                        .filter(r -> !r.path().isEmpty())
                        .mapToInt(r -> 1)
                        .sum()));
        s.append('\n');
        if (consistencyPolicy.equals("bitmap")) {
            field(s, "Intent Bitmap", "Internal");
            s.append('\n');
        }
        field(s, "Update Time", ExamineReport.time(updateTime));
        field(s, "State", state.contains("(PENDING)") ? state + " (run raid rebuild)" : state);
        if (problem != null) {
            field(s, "Problem", problem);
        }
        if (heldBy != null) {
            field(s, "Held By", heldBy + " (the state shown is what its members last recorded)");
        }
        field(s, "Active Devices", Long.toString(active));
        field(s, "Working Devices", Long.toString(working));
        field(s, "Failed Devices", Long.toString(failed));
        field(s, "Spare Devices", Long.toString(spare));
        s.append('\n');
        field(s, "Layout", layout);
        field(s, "Chunk Size", Sizes.chunk(chunkBytes));
        s.append('\n');
        field(s, "Consistency Policy", consistencyPolicy);
        s.append('\n');
        if (rebuildPercent != null) {
            field(s, "Rebuild Status", String.format(Locale.ROOT, "%d%% complete", (long) Math.floor(rebuildPercent)));
            s.append('\n');
        } else if (resyncPercent != null) {
            field(s, "Resync Status", String.format(Locale.ROOT, "%d%% complete", (long) Math.floor(resyncPercent)));
            s.append('\n');
        }
        field(s, "Name", name);
        field(s, "UUID", uuid);
        field(s, "Events", Long.toUnsignedString(events));
        s.append('\n');
        s.append("    Number   RaidDevice   State                    Path\n");
        for (Row r : rows) {
            s.append(String.format(
                                    Locale.ROOT,
                                    "    %6s   %10s   %-24s %s%n",
                                    r.number() < 0 ? "-" : r.number(),
                                    r.raidDevice() < 0 ? "-" : r.raidDevice(),
                                    r.state(),
                                    r.path())
                            .stripTrailing())
                    .append('\n');
        }
        return s.toString();
    }

    Map<String, Object> json(List<String> members) {
        Map<String, Object> m = Json.object();
        m.put("members", members);
        m.put("uuid", uuid);
        m.put("name", name);
        m.put("level", "raid5");
        m.put("layout", layout);
        m.put("chunkSize", chunkBytes);
        m.put("arraySize", arrayBytes);
        m.put("usedDevSize", usedDevBytes);
        m.put("raidDevices", raidDevices);
        m.put("state", state);
        m.put("problem", problem);
        m.put("heldBy", heldBy);
        m.put("degraded", degraded);
        m.put("failed", failedArray);
        m.put("events", events);
        m.put("creationTime", MdTime.toInstant(creationTime).toString());
        m.put("updateTime", MdTime.toInstant(updateTime).toString());
        m.put("activeDevices", active);
        m.put("workingDevices", working);
        m.put("failedDevices", failed);
        m.put("spareDevices", spare);
        m.put("rebuildPercent", rebuildPercent);
        m.put("resyncPercent", resyncPercent);
        List<Object> list = new ArrayList<>();
        for (Row r : rows) {
            Map<String, Object> row = Json.object();
            row.put("number", r.number() < 0 ? null : r.number());
            row.put("raidDevice", r.raidDevice() < 0 ? null : r.raidDevice());
            row.put("state", r.state());
            row.put("path", r.path().isEmpty() ? null : r.path());
            list.add(row);
        }
        m.put("devices", list);
        m.put("exitCode", exitCode());
        return m;
    }

    private static void field(StringBuilder s, String key, String value) {
        s.append(String.format("%18s : %s%n", key, value));
    }
}
