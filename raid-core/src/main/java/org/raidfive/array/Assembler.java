package org.raidfive.array;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.DataOffset;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds arrays: {@code create} writes new metadata; {@code assemble} reads it back from members
 * given in any order and applies md's rules for which of them can be trusted.
 */
final class Assembler {
    private static final Logger LOG = LoggerFactory.getLogger(Assembler.class);

    private Assembler() {
    }

    static Raid5Array create(ArraySpec spec, List<? extends MemberDisk> disks, List<? extends MemberDisk> spares)
            throws IOException {
        List<MemberDisk> all = new ArrayList<>(disks);
        all.addAll(spares);
        checkDistinct(all);
        if (disks.size() < Raid5Layout.MIN_DISKS) {
            throw new ArrayConfigException("RAID-5 needs at least " + Raid5Layout.MIN_DISKS + " members, got "
                    + disks.size());
        }
        long smallest = Long.MAX_VALUE;
        for (MemberDisk d : disks) {
            smallest = Math.min(smallest, d.size());
        }
        long dataOffset = DataOffset.forNewMember(smallest / 512, spec.chunkSize() / 512) * 512;
        long usable = smallest - dataOffset;
        if (spec.memberDataBytes() != 0) {
            if (spec.memberDataBytes() > usable) {
                throw new ArrayConfigException("requested " + spec.memberDataBytes() + " bytes per member, but the "
                        + "smallest member holds only " + usable + " bytes after the " + dataOffset + "-byte data offset");
            }
            usable = spec.memberDataBytes();
        }
        usable -= usable % spec.chunkSize();
        if (usable < spec.chunkSize()) {
            throw new ArrayConfigException("members too small: the smallest (" + smallest + " bytes) leaves no room for "
                    + "one " + spec.chunkSize() + "-byte chunk after the " + dataOffset + "-byte data offset");
        }
        Raid5Layout layout = new Raid5Layout(spec.algorithm(), disks.size(), spec.chunkSize(), usable);
        for (MemberDisk s : spares) {
            if (s.size() < dataOffset + usable) {
                throw new ArrayConfigException(s.name() + " is too small to be a spare: it needs "
                        + (dataOffset + usable) + " bytes, it has " + s.size());
            }
        }
        byte[] uuid = spec.uuid() != null ? spec.uuid() : MdUuid.random();
        long ctime = org.raidfive.md.MdTime.nowSeconds();
        ArrayMetadata meta = new ArrayMetadata(uuid, spec.name(), ctime, layout, 0,
                spec.assumeClean() ? Long.MAX_VALUE : 0);
        Member[] slots = new Member[disks.size()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Member(disks.get(i), dataOffset, i, MdUuid.random(), i, MemberState.IN_SYNC, 0,
                    spec.counterMode());
        }
        ArrayCore core = new ArrayCore(spec.name(), layout, slots, spec.counterMode(), meta);
        meta.attach(core);
        meta.members.addAll(Arrays.asList(slots));
        for (int j = 0; j < spares.size(); j++) {
            meta.members.add(new Member(spares.get(j), dataOffset, slots.length + j, MdUuid.random(), -1,
                    MemberState.SPARE, 0, spec.counterMode()));
        }
        Raid5Array array = new Raid5Array(core, meta, spec.syncLimits(), false);
        for (Member m : meta.members) {
            SuperblockIo.initBadBlockLog(meta, m);
        }
        meta.writeAll();
        LOG.info("created {}: {}", spec.name(), layout);
        if (!spec.assumeClean()) {
            array.startSync();
        }
        return array;
    }

    static Member newSpare(Raid5Array array, MemberDisk disk) throws IOException {
        ArrayMetadata meta = array.meta;
        synchronized (meta.lock) {
            for (Member m : meta.members) {
                if (m.disk == disk || m.disk.name().equals(disk.name())) {
                    throw new ArrayConfigException(disk.name() + " is already a member of " + meta.name);
                }
            }
            long dataOffset = meta.members.isEmpty()
                    ? DataOffset.forNewMember(disk.size() / 512, meta.layout.chunkSize() / 512) * 512
                    : meta.members.get(0).dataOffsetBytes;
            long needed = dataOffset + meta.layout.memberBytesUsed();
            if (disk.size() < needed) {
                throw new ArrayConfigException(disk.name() + " is too small to join " + meta.name + ": it needs "
                        + needed + " bytes, it has " + disk.size());
            }
            Member spare = new Member(disk, dataOffset, meta.nextDevNumber(), MdUuid.random(), -1, MemberState.SPARE,
                    0, array.core.counterMode);
            SuperblockIo.initBadBlockLog(meta, spare);
            return spare;
        }
    }

    private static void checkDistinct(List<? extends MemberDisk> disks) throws ArrayConfigException {
        Map<MemberDisk, Boolean> seen = new IdentityHashMap<>();
        Map<String, Boolean> names = new HashMap<>();
        for (MemberDisk d : disks) {
            if (seen.put(d, Boolean.TRUE) != null || names.put(d.name(), Boolean.TRUE) != null) {
                throw new ArrayConfigException(d.name() + " is given twice");
            }
        }
    }

    /** One disk and what its superblock says. */
    private record Found(MemberDisk disk, Superblock sb) {
    }

    static Raid5Array assemble(List<? extends MemberDisk> disks, AssembleOptions options) throws IOException {
        if (disks.isEmpty()) {
            throw new ArrayConfigException("no members given");
        }
        checkDistinct(disks);
        List<Found> found = new ArrayList<>();
        for (MemberDisk d : disks) {
            try {
                found.add(new Found(d, SuperblockIo.read(d)));
            } catch (SuperblockException e) {
                throw new ArrayConfigException(e.getMessage(), e);
            } catch (IOException e) {
                throw new IOException("cannot read the superblock of " + d.name() + ": " + e.getMessage(), e);
            }
        }
        // The array is the UUID most members carry; anything else belongs to another array.
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (Found f : found) {
            votes.merge(MdUuid.format(f.sb.setUuid()), 1, Integer::sum);
        }
        String uuid = votes.entrySet().stream().max((a, b) -> Integer.compare(a.getValue(), b.getValue()))
                .orElseThrow().getKey();
        for (Found f : found) {
            String u = MdUuid.format(f.sb.setUuid());
            if (!u.equals(uuid)) {
                throw new ArrayConfigException(f.disk.name() + " is a member of another array (UUID " + u
                        + ", not " + uuid + ")");
            }
        }
        Map<String, Found> byDevice = new HashMap<>();
        for (Found f : found) {
            Found other = byDevice.put(MdUuid.format(f.sb.deviceUuid()), f);
            if (other != null) {
                throw new ArrayConfigException(f.disk.name() + " and " + other.disk.name()
                        + " are the same member (device UUID " + MdUuid.format(f.sb.deviceUuid()) + "): a copy?");
            }
        }
        Found freshest = found.get(0);
        for (Found f : found) {
            if (Long.compareUnsigned(f.sb.events(), freshest.sb.events()) > 0) {
                freshest = f;
            }
        }
        Superblock top = freshest.sb;
        if (top.level() != Superblock.LEVEL_RAID5) {
            throw new ArrayConfigException(freshest.disk.name() + " belongs to a RAID-" + top.level()
                    + " array; raidfive runs RAID-5 only");
        }
        int raidDisks = top.raidDisks();
        int chunk = top.chunkSectors() * 512;
        Raid5Algorithm algorithm = Raid5Algorithm.fromMdNumber(top.layout());
        Raid5Layout layout = new Raid5Layout(algorithm, raidDisks, chunk, top.size() * 512);
        AssembleOptions opts = options;

        Member[] slots = new Member[raidDisks];
        Member[] replacements = new Member[raidDisks];
        List<Member> members = new ArrayList<>();
        List<String> stale = new ArrayList<>();
        for (Found f : found) {
            Superblock sb = f.sb;
            if (sb.raidDisks() != raidDisks || sb.chunkSectors() != top.chunkSectors() || sb.layout() != top.layout()
                    || sb.size() != top.size()) {
                throw new ArrayConfigException(f.disk.name() + " disagrees with " + freshest.disk.name()
                        + " on the geometry (raid disks, chunk, layout or size); reshape is not supported");
            }
            long needed = (sb.dataOffset() + top.size()) * 512;
            if (f.disk.size() < needed) {
                throw new ArrayConfigException(f.disk.name() + " is too small: its data area ends at " + needed
                        + " bytes but the disk holds only " + f.disk.size() + " (truncated?)");
            }
            int dev = sb.devNumber();
            int role = dev < top.maxDev() ? top.devRole(dev) : Superblock.ROLE_SPARE;
            boolean behind = Long.compareUnsigned(sb.events() + 1, top.events()) < 0;
            boolean ownRoleActive = sb.devRole(dev) < Superblock.ROLE_MAX;
            MemberState state;
            int slot = -1;
            long recovery = 0;
            if (role == Superblock.ROLE_FAULTY || (behind && (role < Superblock.ROLE_MAX || ownRoleActive))) {
                String why = role == Superblock.ROLE_FAULTY
                        ? "it is marked faulty in the array (events " + top.events() + "), its own superblock is at "
                        + sb.events()
                        : "its events (" + sb.events() + ") lag the array's (" + top.events() + ")";
                if (!opts.takeStaleAsSpare()) {
                    stale.add(f.disk.name() + " is stale: " + why
                            + "; it failed or was removed earlier and its data is out of date"
                            + " (add it back as a spare to rebuild it)");
                    continue;
                }
                LOG.warn("{}: taking stale member {} as a spare ({})", top.name(), f.disk.name(), why);
                state = MemberState.SPARE;
            } else if (role == Superblock.ROLE_SPARE || role >= Superblock.ROLE_MAX) {
                state = MemberState.SPARE;
            } else {
                if (role >= raidDisks) {
                    throw new ArrayConfigException(f.disk.name() + " claims slot " + role + " of a " + raidDisks
                            + "-member array");
                }
                slot = role;
                boolean rebuilding = sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET);
                state = rebuilding ? MemberState.REBUILDING : MemberState.IN_SYNC;
                recovery = rebuilding ? sb.recoveryOffset() * 512 : 0;
            }
            Member m = new Member(f.disk, sb.dataOffset() * 512, dev, sb.deviceUuid(), slot, state, recovery,
                    opts.counterMode());
            m.correctedReadErrors.set(sb.cntCorrectedRead());
            if (slot >= 0) {
                boolean replacement = sb.hasFeature(Superblock.MD_FEATURE_REPLACEMENT);
                Member[] table = replacement ? replacements : slots;
                if (table[slot] != null) {
                    throw new ArrayConfigException(f.disk.name() + " and " + table[slot].name() + " both claim slot "
                            + slot);
                }
                table[slot] = m;
            }
            members.add(m);
        }
        if (!stale.isEmpty()) {
            throw new ArrayConfigException(String.join("; ", stale));
        }
        // A replacement whose primary is gone takes the slot as an ordinary rebuilding member.
        for (int i = 0; i < raidDisks; i++) {
            if (slots[i] == null && replacements[i] != null) {
                slots[i] = replacements[i];
                replacements[i] = null;
            }
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < raidDisks; i++) {
            if (slots[i] == null) {
                out.add("slot " + i + " missing");
            } else if (slots[i].state != MemberState.IN_SYNC) {
                out.add("slot " + i + " (" + slots[i].name() + ") still rebuilding");
            }
        }
        if (out.size() > 1) {
            throw new ArrayConfigException("too few members to run " + top.name() + ": RAID-5 needs " + (raidDisks - 1)
                    + " of " + raidDisks + " in sync, but " + String.join(", ", out));
        }
        boolean degraded = !out.isEmpty();
        long recoveryCp = SuperblockIo.toBytes(top.resyncOffset());
        if (degraded && recoveryCp != Long.MAX_VALUE && !opts.force()) {
            throw new ArrayConfigException(top.name() + " is dirty and degraded (" + out.get(0) + "): it was not shut "
                    + "down cleanly while a member was missing, so parity of the stripes being written at that moment "
                    + "may not match their data (the RAID-5 write hole) and the missing member's data there cannot be "
                    + "trusted; refusing to start it. Use force to start it anyway and accept that risk.");
        }
        ArrayMetadata meta = new ArrayMetadata(top.setUuid(), top.name(), top.ctime(), layout, top.events(), recoveryCp);
        ArrayCore core = new ArrayCore(top.name(), layout, slots, opts.counterMode(), meta);
        core.replacements = replacements;
        core.readOnly = opts.readOnly();
        meta.attach(core);
        meta.members.addAll(members);
        Raid5Array array = new Raid5Array(core, meta, opts.syncLimits(), opts.readOnly());
        if (!opts.readOnly()) {
            meta.writeAll();
        }
        LOG.info("assembled {} from {} members ({}{})", top.name(), members.size(), degraded ? "degraded" : "healthy",
                recoveryCp == Long.MAX_VALUE ? ", clean" : ", needs resync from member offset " + recoveryCp);
        if (opts.startSync() && !opts.readOnly()) {
            array.startSync();
        }
        return array;
    }
}
