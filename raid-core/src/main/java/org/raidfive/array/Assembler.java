package org.raidfive.array;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;
import org.raidfive.disk.ClaimMode;
import org.raidfive.disk.DiskClaim;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemberInUseException;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.BadBlockLog;
import org.raidfive.md.BitmapSuperblock;
import org.raidfive.md.DataOffset;
import org.raidfive.md.MdFeatures;
import org.raidfive.md.MdTime;
import org.raidfive.md.MdUuid;
import org.raidfive.md.MemberAreas;
import org.raidfive.md.PplHeader;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds arrays: {@code create} writes new metadata; {@code assemble} reads it back from members
 * given in any order and applies md's rules for which of them can be trusted.
 *
 * <p>Both claim every member first ({@link MemberDisk#claim}: exclusive for a writable array,
 * shared for a read-only one), so a member another array holds, in this process or another, is
 * refused before anything is written.
 *
 * <p>Assembly, as mdadm and md do it: a member the freshest superblock records as faulty, or whose
 * events lag it, is left out (reported in {@link AssemblyReport}) and the array runs without it,
 * degraded, when it can. When too few members are fresh to run, {@code force} takes back the
 * members that failed most recently, as {@code mdadm --assemble --force} does, plus any other
 * member that failed together with them (within {@link #FORCE_TOGETHER_EVENTS} events of the
 * freshest), brings their events up and marks the array dirty so that a resync recomputes parity.
 * md features raidfive does not implement are refused ({@link MdFeatures}); read-only or not.
 */
final class Assembler {
    private static final Logger LOG = LoggerFactory.getLogger(Assembler.class);
    /**
     * Members whose events are this close to the freshest failed together with the last ones to
     * fail (a failure bumps events once, a retried superblock write once more): force takes them
     * all back, so the array comes back whole and no stripe is rebuilt from a half-written one.
     */
    static final long FORCE_TOGETHER_EVENTS = 8;

    private Assembler() {}

    static Raid5Array create(ArraySpec spec, List<? extends MemberDisk> disks, List<? extends MemberDisk> spares)
            throws IOException {
        List<MemberDisk> all = new ArrayList<>();
        int missing = 0;
        for (MemberDisk d : disks) {
            if (d == null) {
                missing++;
            } else {
                all.add(d);
            }
        }
        for (MemberDisk s : spares) {
            all.add(java.util.Objects.requireNonNull(s, "a spare is null"));
        }
        checkDistinct(all);
        if (disks.size() < Raid5Layout.MIN_DISKS) {
            throw new ArrayConfigException(
                    "RAID-5 needs at least " + Raid5Layout.MIN_DISKS + " members, got " + disks.size());
        }
        if (missing > 1) {
            throw new ArrayConfigException("RAID-5 runs with at most one member missing, " + missing + " are missing");
        }
        long smallest = Long.MAX_VALUE;
        for (MemberDisk d : disks) {
            if (d != null) {
                smallest = Math.min(smallest, d.size());
            }
        }
        boolean ppl = spec.consistencyPolicy() == ConsistencyPolicy.PPL;
        if (ppl && disks.size() > PplHeader.MAX_DISKS) {
            throw new ArrayConfigException("a partial parity log takes at most " + PplHeader.MAX_DISKS
                    + " members (md's limit), got " + disks.size());
        }
        long dataOffset = DataOffset.forNewMember(smallest / 512, spec.chunkSize() / 512, ppl) * 512;
        long usable = smallest - dataOffset;
        if (spec.memberDataBytes() != 0) {
            if (spec.memberDataBytes() > usable) {
                throw new ArrayConfigException("requested " + spec.memberDataBytes() + " bytes per member, but the "
                        + "smallest member holds only " + usable + " bytes after the " + dataOffset
                        + "-byte data offset");
            }
            usable = spec.memberDataBytes();
        }
        usable -= usable % spec.chunkSize();
        if (usable < spec.chunkSize()) {
            throw new ArrayConfigException(
                    "members too small: the smallest (" + smallest + " bytes) leaves no room for " + "one "
                            + spec.chunkSize() + "-byte chunk after the " + dataOffset + "-byte data offset");
        }
        Raid5Layout layout = new Raid5Layout(spec.algorithm(), disks.size(), spec.chunkSize(), usable);
        for (MemberDisk s : spares) {
            if (s.size() < dataOffset + usable) {
                throw new ArrayConfigException(s.name() + " is too small to be a spare: it needs "
                        + (dataOffset + usable) + " bytes, it has " + s.size());
            }
        }
        byte[] uuid = spec.uuid() != null ? spec.uuid() : MdUuid.random();
        List<DiskClaim> claims = claimAll(all, ClaimMode.EXCLUSIVE, ArrayMetadata.holder(spec.name(), uuid), null);
        try {
            long ctime = MdTime.nowSeconds();
            // A degraded array has nothing to resync (md resyncs only whole arrays): the missing
            // member's contents are by definition what parity and the others make them.
            boolean inSync = spec.assumeClean() || missing > 0;
            Member[] slots = new Member[disks.size()];
            for (int i = 0; i < slots.length; i++) {
                // dev_number = slot, as mdadm numbers them; a missing slot leaves its number unused.
                slots[i] = disks.get(i) == null
                        ? null
                        : new Member(
                                disks.get(i),
                                dataOffset,
                                DeviceId.fresh(i),
                                i,
                                MemberState.IN_SYNC,
                                spec.counterMode());
            }
            ArrayMetadata meta = new ArrayMetadata(
                    new ArrayIdentity(uuid, spec.name(), ctime),
                    layout,
                    0,
                    inSync ? Long.MAX_VALUE : 0,
                    MemberTable.of(slots),
                    spec.counterMode());
            ArrayCore core = meta.core();
            if (ppl) {
                // mdadm 1.2: the 1 MiB area 8 sectors after the superblock, in the bitmap's place.
                meta.pplOffset = PplHeader.AREA_OFFSET;
                meta.pplSize = PplHeader.AREA_SECTORS;
                core.consistency = new PartialParityLog(core, uuid, meta.pplSize);
            }
            boolean bitmap = spec.consistencyPolicy() == ConsistencyPolicy.BITMAP
                    || (spec.consistencyPolicy() == null && usable > ArraySpec.BITMAP_BY_DEFAULT_ABOVE);
            for (Member m : slots) {
                if (m != null) {
                    meta.members.add(m);
                }
            }
            for (int j = 0; j < spares.size(); j++) {
                meta.members.add(new Member(
                        spares.get(j),
                        dataOffset,
                        DeviceId.fresh(slots.length + j),
                        -1,
                        MemberState.SPARE,
                        spec.counterMode()));
            }
            for (int i = 0; i < meta.members.size(); i++) {
                Member m = meta.members.get(i);
                m.claimed(claims.get(i));
                m.pplOffset = meta.pplOffset;
                m.pplSize = meta.pplSize;
            }
            if (bitmap) {
                // mdadm's room for the bitmap at create: choose_bm_space of the used size.
                long room = DataOffset.bitmapSpace(layout.memberBytesUsed() / 512);
                // an initial resync does every chunk
                core.consistency = newBitmap(core, meta, room, spec.bitmapChunk(), meta.members, end -> !inSync);
            }
            Raid5Array array = new Raid5Array(core, meta, spec.syncLimits(), false, AssemblyReport.NONE);
            if (spec.listener() != null) {
                array.addListener(spec.listener());
            }
            for (Member m : meta.members) {
                SuperblockIo.initBadBlockLog(meta, m);
                core.consistency.writeAreaTo(m); // mdadm's write_init_ppl1 (the bitmap's pages are written)
            }
            meta.writeAll();
            LOG.info(
                    "created {}: {}{}",
                    spec.name(),
                    layout,
                    ppl ? ", partial parity log" : bitmap ? ", write-intent bitmap" : "");
            if (!inSync || (missing > 0 && !spares.isEmpty())) {
                array.startSync(); // the initial resync, or recovery onto a spare given with a missing slot
            }
            return array;
        } catch (IOException | RuntimeException e) {
            claims.forEach(DiskClaim::close);
            throw e;
        }
    }

    /**
     * md's {@code md_bitmap_load}: the bits as the freshest member holds them; a bit set below the
     * point a resync must start from is to be resynced. That point is the resync offset, or the start
     * when the array is degraded and bits were cleared since (a missing member may come back and need
     * them); a bitmap older than the superblocks (it missed an update) is stale: every chunk is dirty.
     */
    private static WriteIntentBitmap loadBitmap(
            ArrayMetadata meta, MemberDisk from, Superblock top, BitmapSuperblock sb, boolean degraded, long recoveryCp)
            throws IOException {
        int chunks = (int) sb.bits(); // its area fits before the data (checkAreas), so this is small
        boolean stale = sb.stale() || Long.compareUnsigned(sb.events(), top.events()) < 0;
        boolean[] set = stale ? new boolean[chunks] : SuperblockIo.readBitmapBits(from, top.bitmapOffset(), chunks);
        if (stale) {
            Arrays.fill(set, true);
            LOG.warn(
                    "{}: the write-intent bitmap is out of date ({}): every chunk is resynced",
                    top.name(),
                    sb.stale()
                            ? "BITMAP_STALE"
                            : "events " + Long.toUnsignedString(sb.events()) + " < "
                                    + Long.toUnsignedString(top.events()));
            // md_bitmap_read_sb/md_bitmap_load: a stale bitmap restarts from now, every bit set on disk
            sb.eventsCleared(top.events()).state(sb.state() & ~BitmapSuperblock.STATE_STALE);
        }
        long start = !degraded || sb.eventsCleared() == top.events() ? recoveryCp : 0;
        boolean[] needed = new boolean[chunks];
        for (int c = 0; c < chunks; c++) {
            needed[c] = set[c] && (stale || (c + 1L) * sb.chunkBytes() > start);
        }
        return WriteIntentBitmap.of(meta.core(), meta::events, sb, top.bitmapOffset(), set, needed);
    }

    /**
     * A new internal bitmap, as mdadm's {@code add_internal_bitmap1} and {@code write_bitmap1} make one:
     * 8 sectors after the superblock, the chunk asked for or mdadm's default for the room there,
     * every bit set; written to every member given and named in {@code meta}. A chunk is to be resynced
     * (or recovered) when {@code needed} holds for the member offset where it ends.
     */
    static WriteIntentBitmap newBitmap(
            ArrayCore core,
            ArrayMetadata meta,
            long roomSectors,
            long chunkBytes,
            List<Member> members,
            LongPredicate needed)
            throws IOException {
        long sync = meta.layout().memberBytesUsed() / 512;
        long minChunk = BitmapSuperblock.minimumChunk(sync, roomSectors);
        long chunk = chunkBytes > 0 ? chunkBytes : BitmapSuperblock.defaultChunk(sync, roomSectors);
        if (chunk < minChunk || Long.bitCount(chunk) != 1 || chunk > Integer.MAX_VALUE) {
            throw new ArrayConfigException("bitmap chunk " + chunk + " bytes: it must be a power of two of at least "
                    + minChunk + " bytes for this array (the bits must fit " + roomSectors + " sectors)");
        }
        BitmapSuperblock sb = BitmapSuperblock.create(meta.uuid, (int) chunk, sync);
        for (Member m : members) {
            SuperblockIo.writeNewBitmap(m.disk, BITMAP_OFFSET, sb);
        }
        meta.bitmapOffset = BITMAP_OFFSET;
        meta.bitmapBitBytes = sb.bitBytes();
        boolean[] set = new boolean[(int) sb.bits()];
        Arrays.fill(set, true);
        boolean[] neededChunks = new boolean[set.length];
        for (int c = 0; c < neededChunks.length; c++) {
            neededChunks[c] = needed.test((c + 1L) * sb.chunkBytes());
        }
        return WriteIntentBitmap.of(core, meta::events, sb, BITMAP_OFFSET, set, neededChunks);
    }

    /** Where mdadm puts an internal bitmap: sectors after a v1.2 superblock. */
    static final int BITMAP_OFFSET = 8;

    /**
     * Claims every disk, or none: on a refusal the claims already taken are given back and the
     * refusal says which array the member belongs to, when its superblock tells.
     */
    private static List<DiskClaim> claimAll(
            List<? extends MemberDisk> disks, ClaimMode mode, String holder, Map<MemberDisk, Superblock> superblocks)
            throws IOException {
        List<DiskClaim> claims = new ArrayList<>();
        try {
            for (MemberDisk d : disks) {
                claims.add(d.claim(mode, holder));
            }
        } catch (MemberInUseException e) {
            claims.forEach(DiskClaim::close);
            Superblock sb = superblocks == null ? null : superblocks.get(find(disks, e.member()));
            throw sb == null
                    ? e
                    : new MemberInUseException(
                            e.member(),
                            e.getMessage() + "; it is a member of " + ArrayMetadata.holder(sb.name(), sb.setUuid())
                                    + ", held there",
                            e.holderPid());
        } catch (IOException | RuntimeException e) {
            claims.forEach(DiskClaim::close);
            throw e;
        }
        return claims;
    }

    private static MemberDisk find(List<? extends MemberDisk> disks, String name) {
        for (MemberDisk d : disks) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        return null;
    }

    /** A disk joining a running array (hot spare or replacement): claimed, with an empty bad block log. */
    static Member newSpare(Raid5Array array, MemberDisk disk) throws IOException {
        ArrayMetadata meta = array.meta;
        synchronized (meta.lock) {
            for (Member m : meta.members) {
                if (m.disk == disk || m.disk.name().equals(disk.name())) {
                    throw new ArrayConfigException(disk.name() + " is already a member of " + meta.name);
                }
            }
            long dataOffset = meta.members.isEmpty()
                    ? DataOffset.forNewMember(disk.size() / 512, meta.layout().chunkSize() / 512, meta.pplSize != 0)
                            * 512
                    : meta.members.get(0).dataOffsetBytes;
            long needed = dataOffset + meta.layout().memberBytesUsed();
            if (disk.size() < needed) {
                throw new ArrayConfigException(disk.name() + " is too small to join " + meta.name + ": it needs "
                        + needed + " bytes, it has " + disk.size());
            }
            DiskClaim claim = disk.claim(ClaimMode.EXCLUSIVE, ArrayMetadata.holder(meta.name, meta.uuid));
            try {
                Member spare = new Member(
                        disk,
                        dataOffset,
                        DeviceId.fresh(meta.nextDevNumber()),
                        -1,
                        MemberState.SPARE,
                        array.core.counterMode);
                // The PPL area goes with the data offset: both as the first member has them.
                spare.pplOffset = meta.members.isEmpty() ? meta.pplOffset : meta.members.get(0).pplOffset;
                spare.pplSize = meta.members.isEmpty() ? meta.pplSize : meta.members.get(0).pplSize;
                spare.claimed(claim);
                return spare; // nothing written yet: Membership writes its areas once the change can go ahead
            } catch (RuntimeException e) {
                claim.close();
                throw e;
            }
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
    private record Found(MemberDisk disk, Superblock sb) {}

    /** Every disk's superblock; the array is the UUID most carry, anything else is refused. */
    private static List<Found> readAll(List<? extends MemberDisk> disks) throws IOException {
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
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (Found f : found) {
            votes.merge(MdUuid.format(f.sb.setUuid()), 1, Integer::sum);
        }
        String uuid = votes.entrySet().stream()
                .max((a, b) -> Integer.compare(a.getValue(), b.getValue()))
                .orElseThrow()
                .getKey();
        for (Found f : found) {
            String u = MdUuid.format(f.sb.setUuid());
            if (!u.equals(uuid)) {
                throw new ArrayConfigException(
                        f.disk.name() + " is a member of another array (UUID " + u + ", not " + uuid + ")");
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
        return found;
    }

    private static Found freshest(List<Found> found) {
        Found freshest = found.get(0);
        for (Found f : found) {
            if (Long.compareUnsigned(f.sb.events(), freshest.sb.events()) > 0) {
                freshest = f;
            }
        }
        return freshest;
    }

    /** A member the freshest superblock does not trust, and what force could do with it. */
    private record Stale(Found found, Member member, String reason, boolean forcible) {}

    static Raid5Array assemble(List<? extends MemberDisk> disks, AssembleOptions options) throws IOException {
        if (disks.isEmpty()) {
            throw new ArrayConfigException("no members given");
        }
        checkDistinct(disks);
        List<Found> found = readAll(disks);
        Superblock first = freshest(found).sb;
        Map<MemberDisk, Superblock> bySb = new IdentityHashMap<>();
        for (Found f : found) {
            bySb.put(f.disk, f.sb);
        }
        List<DiskClaim> claims = claimAll(
                disks,
                options.readOnly() ? ClaimMode.SHARED : ClaimMode.EXCLUSIVE,
                ArrayMetadata.holder(first.name(), first.setUuid()),
                bySb);
        Map<MemberDisk, DiskClaim> claimOf = new IdentityHashMap<>();
        for (int i = 0; i < disks.size(); i++) {
            claimOf.put(disks.get(i), claims.get(i));
        }
        try {
            // Read again now that the members are ours: what another holder wrote before letting go counts.
            return assembleClaimed(readAll(disks), options, claimOf);
        } catch (IOException | RuntimeException e) {
            claims.forEach(DiskClaim::close);
            throw e;
        }
    }

    private static Raid5Array assembleClaimed(
            List<Found> found, AssembleOptions opts, Map<MemberDisk, DiskClaim> claimOf) throws IOException {
        Found freshest = freshest(found);
        Superblock top = freshest.sb;
        if (top.level() != Superblock.LEVEL_RAID5) {
            throw new ArrayConfigException(
                    freshest.disk.name() + " belongs to a RAID-" + top.level() + " array; raidfive runs RAID-5 only");
        }
        for (Found f : found) {
            String refusal = MdFeatures.refusal(f.sb, f.disk.name());
            if (refusal != null) {
                throw new ArrayConfigException(refusal);
            }
        }
        int raidDisks = top.raidDisks();
        int chunk = top.chunkSectors() * 512;
        Raid5Algorithm algorithm = Raid5Algorithm.fromMdNumber(top.layout());
        Raid5Layout layout = new Raid5Layout(algorithm, raidDisks, chunk, top.size() * 512);
        List<String> notes = new ArrayList<>();
        BitmapSuperblock bitmap = null;
        if (top.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            checkAreas(freshest, top, 1); // where the bitmap's superblock is read must be metadata space
            try {
                bitmap = SuperblockIo.readBitmap(freshest.disk, top);
            } catch (SuperblockException e) {
                throw new ArrayConfigException(e.getMessage() + "; raidfive will not write to it", e);
            }
            if (bitmap.syncSize() != top.size()) {
                // md_bitmap_read_sb: sync_size is md's own to write; the bits follow the array's size.
                notes.add("the write-intent bitmap's sync_size " + Long.toUnsignedString(bitmap.syncSize())
                        + " is not the array's " + top.size() + " sectors per member: its bits cover the array's "
                        + "size and sync_size is written anew, as md does");
                bitmap.syncSize(top.size());
            }
        }

        Member[] slots = new Member[raidDisks];
        Member[] replacements = new Member[raidDisks];
        List<Member> members = new ArrayList<>();
        List<Stale> stale = new ArrayList<>();
        boolean takenAsSpare = false;
        for (Found f : found) {
            Superblock sb = f.sb;
            int dev = sb.devNumber();
            int role = dev < top.maxDev() ? top.devRole(dev) : Superblock.ROLE_SPARE;
            boolean behind = Long.compareUnsigned(sb.events() + 1, top.events()) < 0;
            boolean ownRoleActive = sb.devRole(dev) < Superblock.ROLE_MAX;
            boolean failedEarlier =
                    role == Superblock.ROLE_FAULTY || (behind && (role < Superblock.ROLE_MAX || ownRoleActive));
            // As mdadm: a member that cannot be used is left out with a warning (the array runs degraded
            // if enough remain); only a member the array trusts and that is wrong stops the assembly.
            String unusable = null;
            // Raid5Array#growMemberBytes cut short by a crash: the members written last still record the
            // old size, one event behind, with a data size (written first) that holds the new one.
            boolean grewPast = sb.size() < top.size()
                    && Long.compareUnsigned(sb.events() + 1, top.events()) == 0
                    && Long.compareUnsigned(sb.dataSize(), top.size()) >= 0;
            if (sb.raidDisks() != raidDisks
                    || sb.chunkSectors() != top.chunkSectors()
                    || sb.layout() != top.layout()
                    || (sb.size() != top.size() && !grewPast)) {
                unusable = "it disagrees with " + freshest.disk.name() + " on the geometry (raid disks, chunk, layout "
                        + "or size)";
                if (!failedEarlier) {
                    throw new ArrayConfigException(
                            f.disk.name() + " " + unusable.substring(3) + "; reshape is not supported");
                }
            }
            long needed = (sb.dataOffset() + top.size()) * 512;
            if (unusable == null && f.disk.size() < needed) {
                unusable = "it is too small: its data area ends at " + needed + " bytes but the disk holds only "
                        + f.disk.size() + " (truncated?)";
            }
            if (unusable == null) {
                try {
                    checkAreas(f, top, bitmap == null ? 0 : bitmap.areaSectors());
                } catch (ArrayConfigException e) {
                    if (!failedEarlier) {
                        throw e;
                    }
                    unusable = "its metadata cannot be trusted: " + e.getMessage();
                }
            }
            if (unusable != null) {
                stale.add(new Stale(f, null, unusable, false));
                continue;
            }
            Member m = member(f, opts);
            if (failedEarlier) {
                String why = role == Superblock.ROLE_FAULTY
                        ? "failed earlier (the array records it as faulty; events " + Long.toUnsignedString(sb.events())
                                + " < " + Long.toUnsignedString(top.events()) + ")"
                        : "it is behind the others (events " + Long.toUnsignedString(sb.events()) + " < "
                                + Long.toUnsignedString(top.events()) + ")";
                if (opts.takeStaleAsSpare()) {
                    LOG.warn("{}: taking stale member {} as a spare ({})", top.name(), f.disk.name(), why);
                    takenAsSpare = true;
                    m.state = MemberState.SPARE;
                    m.slot = -1;
                    members.add(m);
                    continue;
                }
                int ownRole = sb.devRole(dev);
                boolean forcible = ownRole < raidDisks
                        && !sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET)
                        && !sb.hasFeature(Superblock.MD_FEATURE_REPLACEMENT);
                if (forcible) {
                    m.slot = ownRole;
                    m.state = MemberState.IN_SYNC;
                }
                stale.add(new Stale(f, m, why, forcible));
                continue;
            }
            if (role == Superblock.ROLE_SPARE || role >= Superblock.ROLE_MAX) {
                m.state = MemberState.SPARE;
                m.slot = -1;
            } else {
                if (role >= raidDisks) {
                    throw new ArrayConfigException(
                            f.disk.name() + " claims slot " + role + " of a " + raidDisks + "-member array");
                }
                boolean rebuilding = sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET);
                m.slot = role;
                m.state = rebuilding ? MemberState.REBUILDING : MemberState.IN_SYNC;
                m.recoveryOffset = rebuilding ? sb.recoveryOffset() * 512 : 0;
                Member[] table = sb.hasFeature(Superblock.MD_FEATURE_REPLACEMENT) ? replacements : slots;
                if (table[role] != null) {
                    throw new ArrayConfigException(
                            f.disk.name() + " and " + table[role].name() + " both claim slot " + role);
                }
                table[role] = m;
            }
            members.add(m);
        }
        // A replacement whose primary is gone takes the slot as an ordinary rebuilding member.
        for (int i = 0; i < raidDisks; i++) {
            if (slots[i] == null && replacements[i] != null) {
                slots[i] = replacements[i];
                replacements[i] = null;
            }
        }
        List<AssemblyReport.Forced> forced = new ArrayList<>();
        if (outOfSync(slots).size() > 1 && opts.force()) {
            force(slots, stale, members, top, forced);
        }
        List<String> out = outOfSync(slots);
        if (out.size() > 1) {
            StringBuilder why = new StringBuilder("too few members to run " + top.name() + ": RAID-5 needs "
                    + (raidDisks - 1) + " of " + raidDisks + " in sync, but " + String.join(", ", out));
            List<String> forcible = new ArrayList<>();
            for (Stale s : stale) {
                if (s.forcible) {
                    forcible.add(s.found.disk.name() + " (slot " + s.member.slot + ", events "
                            + Long.toUnsignedString(s.found.sb.events()) + ")");
                }
                why.append("; ").append(s.found.disk.name()).append(' ').append(s.reason);
            }
            if (!forcible.isEmpty() && !opts.force()) {
                why.append(". These failed and still hold their last data: ")
                        .append(String.join(", ", forcible))
                        .append("; force (mdadm's --assemble --force) takes the most recent back");
            }
            throw new ArrayConfigException(why.toString());
        }
        List<AssemblyReport.LeftOut> leftOut = new ArrayList<>();
        for (Stale s : stale) {
            if (s.member == null || !members.contains(s.member)) {
                leftOut.add(new AssemblyReport.LeftOut(s.found.disk, s.reason, s.found.sb.events()));
                DiskClaim c = claimOf.remove(s.found.disk);
                if (c != null) {
                    c.close();
                }
                LOG.warn("{}: leaving out {}: {}", top.name(), s.found.disk.name(), s.reason);
            }
        }
        boolean degraded = !out.isEmpty();
        long recoveryCp = SuperblockIo.toBytes(top.resyncOffset());
        // A resync cannot recompute parity with a member missing: forced members back on a degraded
        // array leave it as a forced dirty start does, below.
        boolean resyncForced = !forced.isEmpty() && !degraded;
        if (!forced.isEmpty()) {
            recoveryCp = 0;
        }
        boolean hasPpl =
                top.hasFeature(Superblock.MD_FEATURE_PPL) || top.hasFeature(Superblock.MD_FEATURE_MULTIPLE_PPLS);
        if (degraded && recoveryCp != Long.MAX_VALUE && !hasPpl) {
            if (!opts.force()) {
                throw new ArrayConfigException(
                        top.name() + " is dirty and degraded (" + out.get(0) + "): it was not "
                                + "shut down cleanly while a member was missing, so parity of the stripes being written at that "
                                + "moment may not match their data (the RAID-5 write hole) and the missing member's data there "
                                + "cannot be trusted; refusing to start it. Use force to start it anyway and accept that risk.");
            }
            // mdadm --assemble --force marks a dirty degraded array clean ("Marking array ... as 'clean'"),
            // and md's resync of a degraded RAID-5 ends at once (raid5_sync_request: nothing to compare):
            // forced once, the array is as clean as its next clean stop. A read-only start writes nothing.
            if (!opts.readOnly()) {
                recoveryCp = Long.MAX_VALUE;
                notes.add("started dirty and degraded by force: marking the array clean, as mdadm --assemble --force "
                        + "does (a resync cannot check parity with a member missing); the stripes written at the crash "
                        + "may hold wrong data for the missing member");
            }
        }
        ArrayMetadata meta = new ArrayMetadata(
                new ArrayIdentity(top.setUuid(), top.name(), top.ctime()),
                layout,
                top.events(),
                recoveryCp,
                MemberTable.of(slots, replacements),
                opts.counterMode());
        if (bitmap != null) {
            meta.bitmapOffset = top.bitmapOffset();
            meta.bitmapBitBytes = bitmap.bitBytes();
        }
        ArrayCore core = meta.core();
        core.readOnly = opts.readOnly();
        boolean pplRecovered = false;
        if (hasPpl) {
            meta.pplOffset = top.pplOffset();
            meta.pplSize = top.pplSize();
            int smallest = Integer.MAX_VALUE;
            for (Member m : members) {
                smallest = Math.min(smallest, m.pplSize);
            }
            PartialParityLog log = new PartialParityLog(core, top.setUuid(), smallest);
            core.consistency = log;
            // md's ppl_init_log at start: recover a dirty array's logged stripes, then empty the logs.
            PplRecovery.Outcome ppl = new PplRecovery(core, log).run(recoveryCp != Long.MAX_VALUE, opts.readOnly());
            pplRecovered = ppl.recoveredEntries() > 0 || ppl.corruptEntries() > 0;
            if (ppl.corruptEntries() > 0 && recoveryCp != Long.MAX_VALUE) {
                notes.add("the partial parity log held " + ppl.corruptEntries() + " entries that could not be "
                        + "applied (a bad checksum, or sizes or stripes outside the log or the array): skipped, as md "
                        + "does; a resync checks those stripes");
            }
            if (recoveryCp == 0 && forced.isEmpty() && ppl.recoveredEntries() > 0 && ppl.corruptEntries() == 0) {
                meta.needResyncFrom(Long.MAX_VALUE); // md: a dirty start recovered cleanly is clean
                LOG.info(
                        "{}: recovered from the partial parity log ({} entries); no resync needed",
                        top.name(),
                        ppl.recoveredEntries());
            }
        }
        if (bitmap != null) {
            if (bitmap.stale()) {
                notes.add("the write-intent bitmap is marked out of date (BITMAP_STALE): every chunk is resynced, "
                        + "as md does");
            }
            core.consistency = loadBitmap(meta, freshest.disk, top, bitmap, degraded, recoveryCp);
        }
        meta.members.addAll(members);
        for (Member m : members) {
            m.claimed(claimOf.get(m.disk));
        }
        AssemblyReport report = new AssemblyReport(leftOut, forced, resyncForced, notes);
        Raid5Array array = new Raid5Array(core, meta, opts.syncLimits(), opts.readOnly(), report);
        if (opts.listener() != null) {
            array.addListener(opts.listener());
        }
        // md records at assembly what changed (forced events, a member kicked or taken as a spare, a
        // repaired field, a recovered log, the state); with nothing to record nothing is written until
        // the first write or change, so a command refused after assembly leaves every byte as it was.
        boolean record = !report.lines().isEmpty()
                || pplRecovered
                || takenAsSpare
                || meta.recoveryCp() != SuperblockIo.toBytes(top.resyncOffset())
                || (bitmap != null && Long.compareUnsigned(bitmap.events(), top.events()) < 0);
        if (!opts.readOnly() && record) {
            meta.writeAll();
        }
        for (String line : report.lines()) {
            LOG.info("{}: {}", top.name(), line);
        }
        LOG.info(
                "assembled {} from {} members ({}{})",
                top.name(),
                members.size(),
                degraded ? "degraded" : "healthy",
                meta.recoveryCp() == Long.MAX_VALUE
                        ? ", clean"
                        : ", needs resync from member offset " + meta.recoveryCp());
        if (opts.startSync() && !opts.readOnly()) {
            array.startSync();
        }
        return array;
    }

    /**
     * md's rules for where one member's metadata lies ({@link MemberAreas}), with the array's bitmap
     * (its offset from the freshest member, as md keeps one bitmap for the array, and
     * {@code bitmapSectors}, computed from its chunk and the array's size): checked
     * for every member given, before anything is written. Not even force goes past a wrong offset.
     */
    private static void checkAreas(Found f, Superblock top, long bitmapSectors) throws ArrayConfigException {
        try {
            MemberAreas.check(
                    f.sb,
                    f.disk.size() / 512,
                    top.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET) ? top.bitmapOffset() : null,
                    bitmapSectors,
                    f.disk.name());
        } catch (SuperblockException e) {
            throw new ArrayConfigException(e.getMessage() + "; nothing was written", e);
        }
    }

    /** A member from its superblock: everything md keeps per device, as found. */
    private static Member member(Found f, AssembleOptions opts) throws IOException {
        Superblock sb = f.sb;
        Member m = new Member(
                f.disk,
                sb.dataOffset() * 512,
                new DeviceId(sb.devNumber(), sb.deviceUuid()),
                -1,
                MemberState.SPARE,
                opts.counterMode());
        m.correctedSectors.set(Integer.toUnsignedLong(sb.cntCorrectedRead()));
        m.devflags = sb.devflags();
        m.dataSizeSectors = sb.dataSize();
        m.onDisk = Member.OnDisk.of(sb);
        if (sb.hasFeature(Superblock.MD_FEATURE_PPL) || sb.hasFeature(Superblock.MD_FEATURE_MULTIPLE_PPLS)) {
            m.pplOffset = sb.pplOffset(); // md's rdev->ppl: each member's own
            m.pplSize = sb.pplSize();
        }
        if (sb.bblogOffset() != 0 && sb.bblogSize() > 0) {
            m.bblogOffset = sb.bblogOffset();
            m.bblogSize = sb.bblogSize();
            m.bblogShift = sb.bblogShift();
        }
        try {
            BadBlockLog bad = SuperblockIo.readBadBlocks(f.disk, sb);
            m.loadBadBlocks(bad);
            if (!bad.isEmpty()) {
                LOG.info(
                        "{}: {} lists bad blocks {}: those sectors are rebuilt from parity when read",
                        sb.name(),
                        f.disk.name(),
                        bad);
            }
        } catch (SuperblockException e) {
            throw new ArrayConfigException(e.getMessage(), e);
        }
        return m;
    }

    /** Slots that are not in sync, described. */
    private static List<String> outOfSync(Member[] slots) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] == null) {
                out.add("slot " + i + " missing");
            } else if (slots[i].state != MemberState.IN_SYNC) {
                out.add("slot " + i + " (" + slots[i].name() + ") still rebuilding");
            }
        }
        return out;
    }

    /**
     * mdadm's forced assembly: the freshest failed member whose slot is free is taken back, again
     * and again, until the array can run; then also every other one that failed together with them.
     */
    private static void force(
            Member[] slots,
            List<Stale> stale,
            List<Member> members,
            Superblock top,
            List<AssemblyReport.Forced> forced) {
        List<Stale> candidates = new ArrayList<>();
        for (Stale s : stale) {
            if (s.forcible) {
                candidates.add(s);
            }
        }
        candidates.sort(Comparator.comparing((Stale s) -> s.found.sb.events(), Long::compareUnsigned)
                .reversed());
        for (Stale s : candidates) {
            boolean needed = outOfSync(slots).size() > 1;
            boolean together = Long.compareUnsigned(s.found.sb.events() + FORCE_TOGETHER_EVENTS, top.events()) >= 0;
            int slot = s.member.slot;
            if ((needed || together) && slots[slot] == null) {
                slots[slot] = s.member;
                members.add(s.member);
                forced.add(new AssemblyReport.Forced(s.found.disk.name(), slot, s.found.sb.events(), top.events() + 1));
            }
        }
    }
}
