package org.raidfive.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/**
 * What the members' superblocks say, read straight from the files without assembling: which array
 * most of them belong to, the freshest superblock of that array, and for each file whether it is
 * current, stale (failed or left out earlier) or foreign.
 *
 * <p>The stale rule is the one {@code Raid5Array.assemble} applies (a member the freshest superblock
 * marks faulty, or whose events lag while it claims a role); raid-core does not expose it, and the
 * CLI needs it to report stale members in {@code detail} and to re-add or remove one on purpose.
 */
final class Survey {
    enum Verdict {
        CURRENT,
        STALE,
        FOREIGN
    }

    /** One file and what its superblock makes it. */
    record Entry(String spec, Superblock sb, Verdict verdict, String why) {}

    private final List<Entry> entries;
    private final Superblock top;
    private final String topSpec;

    private Survey(List<Entry> entries, Superblock top, String topSpec) {
        this.entries = entries;
        this.top = top;
        this.topSpec = topSpec;
    }

    /** Reads every file's superblock (fully validated); the first unreadable one is thrown. */
    static Survey of(List<String> specs) throws IOException, SuperblockException {
        List<Superblock> sbs = new ArrayList<>();
        for (String s : specs) {
            sbs.add(SuperblockFile.readValid(s));
        }
        return of(specs, sbs);
    }

    static Survey of(List<String> specs, List<Superblock> sbs) {
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (Superblock sb : sbs) {
            votes.merge(MdUuid.format(sb.setUuid()), 1, Integer::sum);
        }
        String uuid = votes.entrySet().stream()
                .max((a, b) -> Integer.compare(a.getValue(), b.getValue()))
                .orElseThrow()
                .getKey();
        Superblock top = null;
        String topSpec = null;
        for (int i = 0; i < sbs.size(); i++) {
            Superblock sb = sbs.get(i);
            if (MdUuid.format(sb.setUuid()).equals(uuid)
                    && (top == null || Long.compareUnsigned(sb.events(), top.events()) > 0)) {
                top = sb;
                topSpec = specs.get(i);
            }
        }
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < sbs.size(); i++) {
            Superblock sb = sbs.get(i);
            String u = MdUuid.format(sb.setUuid());
            if (!u.equals(uuid)) {
                entries.add(new Entry(specs.get(i), sb, Verdict.FOREIGN, "belongs to another array (UUID " + u + ")"));
                continue;
            }
            int dev = sb.devNumber();
            int role = dev < top.maxDev() ? top.devRole(dev) : Superblock.ROLE_SPARE;
            boolean behind = Long.compareUnsigned(sb.events() + 1, top.events()) < 0;
            boolean ownRoleActive = sb.devRole(dev) < Superblock.ROLE_MAX;
            if (role == Superblock.ROLE_FAULTY) {
                entries.add(new Entry(
                        specs.get(i),
                        sb,
                        Verdict.STALE,
                        "marked faulty by the array (events "
                                + Long.toUnsignedString(top.events()) + "; its own superblock is at events "
                                + Long.toUnsignedString(sb.events()) + ")"));
            } else if (behind && (role < Superblock.ROLE_MAX || ownRoleActive)) {
                entries.add(new Entry(
                        specs.get(i),
                        sb,
                        Verdict.STALE,
                        "its events ("
                                + Long.toUnsignedString(sb.events()) + ") lag the array's ("
                                + Long.toUnsignedString(top.events()) + ")"));
            } else {
                entries.add(new Entry(specs.get(i), sb, Verdict.CURRENT, null));
            }
        }
        return new Survey(entries, top, topSpec);
    }

    List<Entry> entries() {
        return entries;
    }

    /** The freshest superblock of the array most files belong to. */
    Superblock top() {
        return top;
    }

    String topSpec() {
        return topSpec;
    }

    Entry entry(int index) {
        return entries.get(index);
    }

    List<String> specsWith(Verdict v) {
        List<String> out = new ArrayList<>();
        for (Entry e : entries) {
            if (e.verdict() == v) {
                out.add(e.spec());
            }
        }
        return out;
    }
}
