package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.raidfive.array.OfflineReshape;
import org.raidfive.array.ReshapeState;
import org.raidfive.array.SyncLimits;
import org.raidfive.bench.Sizes;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;

/**
 * {@code raid grow --raid-devices N --add FILE...}, {@code --raid-devices N --array-size SIZE} (fewer
 * members), {@code --chunk}/{@code --layout} and {@code raid grow --continue}: an
 * {@link OfflineReshape} in the foreground, with progress on stderr, and Ctrl-C stopping it at the
 * next batch with the position checkpointed on every member.
 */
final class ReshapeRun {
    private final GrowCommand verb;
    private final ArraySource source;
    private final List<String> members;

    /** Only start the reshape (its first superblocks written), for raid serve to continue. */
    private final boolean startOnly;

    ReshapeRun(GrowCommand verb, ArraySource source, List<String> members, boolean startOnly) {
        this.verb = verb;
        this.source = source;
        this.members = members;
        this.startOnly = startOnly;
    }

    /**
     * Starts a reshape to {@code raidDevices} members (fewer: a shrink to {@code arraySize} bytes, null
     * when not given; more: a grow, which may change the chunk and layout too), or to {@code newChunk}
     * bytes (0: kept) and {@code newLayout} (null: kept) on the same members, or (none of these)
     * continues the one recorded; runs it within {@code limits}.
     */
    int run(
            Integer raidDevices,
            Long arraySize,
            List<String> add,
            SyncLimits limits,
            int newChunk,
            Raid5Algorithm newLayout)
            throws Exception {
        boolean change = newChunk != 0 || newLayout != null;
        if (change && raidDevices == null && !add.isEmpty()) {
            throw CliException.usage("--chunk and --layout restripe the same members; add members with "
                    + "--raid-devices N --add FILE (with --chunk/--layout or not)");
        }
        if (raidDevices == null && !change && !add.isEmpty()) {
            throw CliException.usage("--continue takes every member, the added ones included; no --add");
        }
        boolean shrink = raidDevices != null && raidDevices < members.size();
        if (shrink && (change || !add.isEmpty())) {
            throw CliException.usage("--raid-devices " + raidDevices + " removes members from the " + members.size()
                    + " given: no --add, --chunk or --layout with it (one reshape at a time)");
        }
        if (arraySize != null && !shrink) {
            throw CliException.usage("--array-size goes with --raid-devices N below the member count (a shrink); "
                    + "raidfive does not truncate a running array");
        }
        if (raidDevices != null && !shrink && raidDevices != members.size() + add.size()) {
            throw CliException.usage("--raid-devices " + raidDevices + " with " + members.size() + " members needs "
                    + (raidDevices - members.size()) + " --add file(s), got " + add.size());
        }
        List<String> all = new ArrayList<>(members);
        all.addAll(add);
        Members.checkDistinct(all);
        List<Path> created = new ArrayList<>();
        List<MemberDisk> added = new ArrayList<>();
        OfflineReshape reshape;
        try (MemberSet set = Members.openAll(members, false)) {
            try {
                for (String a : add) {
                    String data = Members.dataFound(a);
                    if (data != null
                            && !leftOverByAnInterruptedStart(a, set.disks().get(0))) {
                        throw CliException.usage(data + ": a file added as a member must be blank");
                    }
                }
                long size = set.disks().get(0).size();
                for (String a : add) {
                    // An existing file is taken at its size (a short one is refused, not extended); an
                    // absent one is created sparse at the members' size.
                    boolean absent = !Members.isNbd(a) && !Files.exists(Members.path(a));
                    if (absent) {
                        created.add(Members.path(a));
                    }
                    added.add(absent ? Members.createOrExtend(a, size) : Members.open(a));
                }
                reshape = raidDevices != null && !shrink
                        ? OfflineReshape.grow(set.disks(), added, newChunk, newLayout)
                        : change
                                ? OfflineReshape.change(set.disks(), newChunk, newLayout)
                                : shrink
                                        // without --array-size the refusal names the size to give, as mdadm's does
                                        ? OfflineReshape.shrink(
                                                set.disks(),
                                                raidDevices,
                                                arraySize == null ? Long.MAX_VALUE : arraySize)
                                        : OfflineReshape.resume(set.disks());
            } catch (IOException | RuntimeException e) {
                MemberSet.closeQuietly(added);
                for (Path p : created) {
                    Files.deleteIfExists(p); // a refused command leaves nothing behind
                }
                throw e;
            }
            try (reshape) {
                if (startOnly) {
                    verb.say(reshape.name() + ": reshape started, " + describe(reshape) + ", array "
                            + Sizes.human(reshape.oldArrayBytes()) + " -> " + Sizes.human(reshape.newArrayBytes())
                            + ", recorded on every member; raid serve " + source.again(all)
                            + " continues it while it serves the array (raid grow --continue in the foreground)");
                    return ExitCode.OK;
                }
                reshape.setSyncLimits(limits);
                return follow(reshape, all);
            } finally {
                MemberSet.closeQuietly(added);
            }
        }
    }

    /**
     * A grow killed while it wrote the superblocks of its start leaves the added file with a superblock
     * of this array that the members (still at their old count) do not list: taking it again is safe.
     */
    private static boolean leftOverByAnInterruptedStart(String spec, MemberDisk member) {
        try {
            Superblock added = SuperblockFile.read(spec).sb();
            Superblock ours = SuperblockFile.read(member, member.name()).sb();
            return Arrays.equals(added.setUuid(), ours.setUuid())
                    && added.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE)
                    && !ours.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE)
                    && added.role() >= ours.raidDisks()
                    && ours.devRole(added.devNumber()) != added.role();
        } catch (IOException | SuperblockException e) {
            return false;
        }
    }

    private int follow(OfflineReshape reshape, List<String> all) throws Exception {
        String name = reshape.name();
        verb.say(name + ": reshaping " + describe(reshape) + ", from "
                + String.format(Locale.ROOT, "%.1f%%", percent(reshape, reshape.position())) + ", array "
                + Sizes.human(reshape.oldArrayBytes()) + " -> " + Sizes.human(reshape.newArrayBytes()));
        CountDownLatch ended = new CountDownLatch(1);
        Stopper stopper = new Stopper(ended);
        Runtime.getRuntime().addShutdownHook(stopper);
        try {
            long[] shown = {System.nanoTime()};
            String[] toldMissing = {reshape.missingMember()};
            if (reshape.resyncDue()) {
                verb.say(name + " was written to mid-reshape and not stopped cleanly: the reshape continues (it "
                        + "recomputes every stripe it moves), and the resync md runs after it is due at its end");
            }
            if (toldMissing[0] != null) {
                verb.say(name + ": continuing without " + toldMissing[0]
                        + " (recorded faulty): the reshape runs degraded");
            }
            boolean done = reshape.run(() -> stopper.stop, p -> {
                String missing = reshape.missingMember();
                if (missing != null && toldMissing[0] == null) {
                    toldMissing[0] = missing;
                    verb.err().println();
                    verb.say(name + ": " + missing + " failed and is recorded faulty on the other members; the reshape "
                            + "goes on degraded, as md's does");
                }
                long now = System.nanoTime();
                if (now - shown[0] > 1_000_000_000L) {
                    shown[0] = now;
                    verb.err()
                            .printf(
                                    Locale.ROOT,
                                    "\rreshape %5.1f%% (%d of %d sectors)",
                                    percent(reshape, p),
                                    reshape.sectorsDone(p),
                                    reshape.sectorsTotal());
                    verb.err().flush();
                }
            });
            verb.err().println();
            List<String> left = toldMissing[0] == null ? all : without(all, toldMissing[0]);
            if (!done) {
                verb.say(String.format(
                        Locale.ROOT,
                        "interrupted at %.1f%%; the position is checkpointed on every member. Resume with: raid "
                                + "grow --continue %s",
                        percent(reshape, reshape.position()),
                        source.again(left)));
                return ExitCode.PROBLEM;
            }
            verb.say(name + ": " + reshape.newDisks() + " members, chunk " + Sizes.chunk(reshape.newChunkBytes()) + ", "
                    + reshape.newAlgorithm().mdadmName() + ", array " + Sizes.human(reshape.newArrayBytes()) + " ("
                    + reshape.newArrayBytes() + " bytes)");
            if (reshape.resyncDue()) {
                verb.say(name + "'s resync is due (written to before a crash mid-reshape): raid rebuild "
                        + source.again(left) + " runs it in the foreground, raid serve in the background");
            }
            // the failed member is not asked: a dead link may take its connect timeout to say so
            for (String spare : reshape.newDisks() < reshape.oldDisks() ? sparesOf(left) : List.<String>of()) {
                verb.say(spare + " is now a spare of " + name + " (raid remove --member " + spare + " "
                        + source.again(all) + " takes it out)");
            }
            if (toldMissing[0] != null) {
                verb.say(name + " is degraded: " + toldMissing[0] + " failed; rebuild onto a new member with: raid add "
                        + "--spare FILE " + source.again(left));
                return ExitCode.PROBLEM;
            }
            return ExitCode.OK;
        } finally {
            // After the last word: a Ctrl-C's hook waits for this, and the JVM ends when the hook does.
            ended.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(stopper);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs
            }
        }
    }

    /** What the reshape changes, as {@code 3 -> 4 members, chunk 64K -> 128K, layout ...}. */
    static String describe(ReshapeState reshape) {
        StringBuilder what = new StringBuilder();
        if (reshape.oldDisks() != reshape.newDisks()) {
            what.append(", ")
                    .append(reshape.oldDisks())
                    .append(" -> ")
                    .append(reshape.newDisks())
                    .append(" members");
        }
        if (reshape.oldChunkBytes() != reshape.newChunkBytes()) {
            what.append(", chunk ")
                    .append(Sizes.chunk(reshape.oldChunkBytes()))
                    .append(" -> ")
                    .append(Sizes.chunk(reshape.newChunkBytes()));
        }
        if (reshape.oldAlgorithm() != reshape.newAlgorithm()) {
            what.append(", layout ")
                    .append(reshape.oldAlgorithm().mdadmName())
                    .append(" -> ")
                    .append(reshape.newAlgorithm().mdadmName());
        }
        return what.substring(2);
    }

    /** The member arguments but the one whose disk is called {@code diskName}. */
    private static List<String> without(List<String> specs, String diskName) {
        List<String> left = new ArrayList<>();
        for (String spec : specs) {
            String named = Members.isNbd(spec) ? spec : Members.path(spec).toString();
            if (!named.equals(diskName)) {
                left.add(spec);
            }
        }
        return left;
    }

    private static double percent(OfflineReshape r, long position) {
        return r.sectorsTotal() == 0 ? 100 : 100.0 * r.sectorsDone(position) / r.sectorsTotal();
    }

    /** The members a finished shrink left as spares, as their superblocks say. */
    private static List<String> sparesOf(List<String> specs) {
        List<String> spares = new ArrayList<>();
        for (String spec : specs) {
            try {
                if (SuperblockFile.read(spec).sb().role() == Superblock.ROLE_SPARE) {
                    spares.add(spec);
                }
            } catch (IOException | SuperblockException e) {
                // a member that failed: said already
            }
        }
        return spares;
    }

    /** Ctrl-C: asks the reshape to stop at the next batch and waits for its checkpoint. */
    private static final class Stopper extends Thread {
        private final CountDownLatch ended;
        volatile boolean stop;

        Stopper(CountDownLatch ended) {
            super("raid-reshape-stop");
            this.ended = ended;
        }

        @Override
        public void run() {
            stop = true;
            try {
                ended.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
