package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayConfigException;
import org.raidfive.array.ArrayStateException;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncProgress;
import org.raidfive.bench.Sizes;
import org.raidfive.disk.MemberInUseException;
import org.raidfive.layout.Raid5Algorithm;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid grow}: changes what the engine can change on an existing array, as {@code mdadm
 * --grow} does: the consistency policy, and the space used on each member after the member files
 * grew ({@code --size}). What it cannot change (members, chunk, layout) it says so.
 */
@Command(
        header = "Change an existing array.",
        name = "grow",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Change an array in place, like mdadm --grow.",
            "--consistency-policy ppl adds md's partial parity log (8 sectors after the superblock, up to 1 MiB, "
                    + "before the bad block log; refused without room for it); bitmap (or --bitmap internal) adds md's "
                    + "internal write-intent bitmap where mdadm puts it; resync (or --bitmap none) removes either.",
            "--size max (or SIZE) uses more of each member after the member files or devices grew, as mdadm --grow "
                    + "--size does: the data stays where it is, the array grows by the new stripes, and their parity is "
                    + "resynced in the foreground (Ctrl-C leaves the rest to raid rebuild or raid serve, as md resumes "
                    + "from resync_offset). Refused with a partial parity log "
                    + "(as md refuses), below the size in use, or when a member has no room (named).",
            "--raid-devices N --add FILE... adds data members to an array that is not running, as mdadm --grow "
                    + "--raid-devices does: the FILEs (created sparse at the members' size when absent; refused if they "
                    + "hold data or are smaller than a member, never extended) become members and the data is restriped over N members in md's on-disk form, the "
                    + "data offset moving down as mdadm moves it (refused, naming the room missing, without space "
                    + "before the data), then the array is N-1 chunks wide. An internal bitmap is kept, as md keeps "
                    + "it. A member failing mid-way is recorded faulty and the reshape finishes degraded, as md's does (exit 1, "
                    + "naming the raid add --spare that rebuilds it). Refused with a partial parity log (md refuses it too), "
                    + "degraded, or not stopped cleanly. Ctrl-C stops at the next batch with the "
                    + "position checkpointed on every member; --continue (with every member, new ones included) "
                    + "resumes it, and finishes a reshape Linux md left that adds members. --speed-limit-max paces it "
                    + "as md's speed_limit_max does (per member per second; nothing else runs on the stopped array, "
                    + "so the minimum has nothing to yield to). With --start-only the reshape is started and "
                    + "recorded, and raid serve continues it while it serves the array (reads and writes); "
                    + "Linux md can also take it over (mdadm --assemble resumes it).",
            "--chunk SIZE and/or --layout NAME restripe the same members into a new chunk size or parity layout, as "
                    + "mdadm --grow --chunk/--layout does on an array that is not running: the data offset moves down "
                    + "towards the larger free space as mdadm moves it: down (the reshape runs forwards) or, when the "
                    + "room is after the data, up (md's backwards reshape, from the end down); refused, naming the room "
                    + "missing, without enough of either. The "
                    + "component size must be a whole number of new chunks (as mdadm demands), and progress, Ctrl-C, "
                    + "--continue, a failing member and --speed-limit-max behave as for --raid-devices.",
            "--raid-devices N below the member count with --array-size SIZE removes members, as mdadm --grow "
                    + "--array-size then --raid-devices does (mdadm insists on the size first; without it the refusal "
                    + "names the size to give): the data in the first SIZE bytes is restriped over N members from the "
                    + "end down, the data offset moving up by mdadm's amount (refused, naming the room missing, "
                    + "without space after the data), and the members left over become spares (named). Progress, "
                    + "Ctrl-C, --continue, a failing member and --speed-limit-max behave as for a grow."
        })
final class GrowCommand extends Verb {
    @Option(
            names = "--consistency-policy",
            paramLabel = "POLICY",
            converter = PolicyConverter.class,
            description = "resync, bitmap or ppl.")
    ConsistencyPolicy policy;

    @Option(
            names = "--bitmap",
            paramLabel = "internal|none",
            description = "mdadm's spelling: internal adds a write-intent bitmap, none removes it.")
    String bitmap;

    @Option(
            names = {"--raid-devices", "-n"},
            paramLabel = "N",
            description = "Members after the reshape: the members given plus the --add files, or fewer than given "
                    + "(with --array-size) to remove members.")
    Integer raidDevices;

    @Option(names = "--continue", description = "Continue the reshape the members record (raidfive's or md's).")
    boolean continueReshape;

    @Option(
            names = "--start-only",
            description = "With --raid-devices, --chunk or --layout: start the reshape (its first superblocks on "
                    + "every member) and return; raid serve then continues it while it serves the array, raid grow "
                    + "--continue in the foreground.")
    boolean startOnly;

    @Option(
            names = "--chunk",
            paramLabel = "SIZE",
            description = "New chunk size (a power of two from 4K to 1G), restriping the same members as mdadm "
                    + "--grow --chunk does, or, with --raid-devices N --add, in the same reshape as the grow.")
    String chunk;

    @Option(
            names = "--layout",
            paramLabel = "NAME",
            description =
                    "New parity layout, as mdadm names it (left-symmetric, right-asymmetric, ...), restriping the "
                            + "same members as mdadm --grow --layout does, or, with --raid-devices N --add, in the "
                            + "same reshape as the grow.")
    String layout;

    @Option(
            names = "--size",
            paramLabel = "max|SIZE",
            description = "Space used on each member (mdadm's component size): max, or a size such as 96M "
                    + "(rounded down to the chunk).")
    String size;

    @Option(
            names = "--array-size",
            paramLabel = "SIZE",
            description = "With --raid-devices below the member count: the size the smaller array keeps (mdadm's "
                    + "--array-size, which mdadm insists on first), with its unit (B, K, M, G, T: a bare number, "
                    + "KiB to mdadm, is refused); the data past it is not kept.")
    String arraySize;

    @Mixin
    SpeedOptions speed;

    @Option(names = "--add", paramLabel = "FILE", description = "A file to add as a data member (repeatable).")
    List<String> add = new ArrayList<>();

    /** mdadm --grow's words for what raidfive cannot change: refused with where it is done instead. */
    private void refuseMisplacedOptions() {
        if (!add.isEmpty() && raidDevices == null) {
            throw CliException.usage("--add: give --raid-devices N too (members after the reshape); a spare is added "
                    + "with raid add --spare " + add.get(0));
        }
        if (arraySize != null && raidDevices == null) {
            throw CliException.usage("--array-size goes with --raid-devices N below the member count (a shrink)");
        }
        if ((speed.min != null || speed.max != null) && !reshapes()) {
            throw CliException.usage("speed limits apply to the reshape raid grow runs (--raid-devices, --chunk, "
                    + "--layout, --continue) "
                    + "and are not stored with the array (md keeps them in sysfs, per running array): for other "
                    + "passes give --speed-limit-min/--speed-limit-max to the command that runs them (raid rebuild, "
                    + "raid re-add, raid check, raid repair)");
        }
    }

    /** Whether this grow is a reshape (it restripes the data). */
    private boolean reshapes() {
        return raidDevices != null || continueReshape || chunk != null || layout != null;
    }

    /**
     * {@code --array-size} in bytes, null when not given. A bare number is refused: mdadm reads it
     * as KiB and raidfive's sizes as bytes, and the data past the size is not kept, so the unit must
     * be said.
     */
    private Long arraySize() {
        if (arraySize == null) {
            return null;
        }
        if (!arraySize.isEmpty() && arraySize.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw CliException.usage("--array-size " + arraySize + " has no unit: give one (" + arraySize
                    + "K as mdadm reads a bare number, or " + arraySize + "B for bytes); the data past the size is "
                    + "not kept");
        }
        try {
            return Sizes.parse(arraySize);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--array-size takes a size with a unit such as 96M, not '" + arraySize + "'");
        }
    }

    /** {@code --chunk} in bytes, 0 when not given (kept). */
    private int newChunk() {
        if (chunk == null) {
            return 0;
        }
        long bytes;
        try {
            bytes = Sizes.parse(chunk);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--chunk takes a size such as 128K, not '" + chunk + "'");
        }
        if (bytes <= 0 || bytes > 1L << 30 || Long.bitCount(bytes) != 1 || bytes < 4096) {
            throw CliException.usage("--chunk " + chunk + ": a chunk is a power of two from 4K to 1G");
        }
        return (int) bytes;
    }

    /** {@code --layout}, null when not given (kept). */
    private Raid5Algorithm newLayout() {
        try {
            return layout == null ? null : Raid5Algorithm.parse(layout);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--layout: " + e.getMessage());
        }
    }

    /** {@code --size}: more of each member, as the member disks now allow. */
    private int growSize() throws Exception {
        long asked = 0;
        if (!size.equals("max")) {
            try {
                asked = Sizes.parse(size);
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--size takes max or a size such as 96M, not '" + size + "'");
            }
        }
        try (ArraySession session = readWriteSession(members);
                SigintGuard guard = SigintGuard.install(
                        session,
                        err(),
                        "grow",
                        "the array has its new size; the new stripes' resync is saved on the members. Resume with: "
                                + "raid rebuild " + source.again(members))) {
            Raid5Array array = session.array();
            long before = array.layout().memberBytesUsed();
            long arrayBefore = array.size();
            long target = size.equals("max") ? array.maxMemberBytes() : asked;
            boolean grew;
            try {
                grew = array.growMemberBytes(target);
            } catch (ArrayConfigException | ArrayStateException e) {
                throw CliException.usage(e.getMessage());
            }
            if (!grew) {
                say(array.name() + " already uses " + Sizes.human(before) + " (" + before + " bytes) of each member"
                        + (size.equals("max") ? ": the members have no more room" : "") + "; nothing changed");
                return ExitCode.OK;
            }
            long after = array.layout().memberBytesUsed();
            say(array.name() + ": " + Sizes.human(before) + " -> " + Sizes.human(after) + " per member, array "
                    + Sizes.human(arrayBefore) + " -> " + Sizes.human(array.size()) + " (" + array.size() + " bytes)");
            // As md after raid5_resize: the new stripes are resynced (here in the foreground; a degraded
            // array has nothing to resync them with until it is rebuilt).
            SyncProgress p = Progress.on(err()).follow(array, guard::stopped);
            if (guard.stopped()) {
                RebuildCommand.awaitShutdown();
            }
            if (p != null && !p.complete()) {
                throw new CliException(
                        ExitCode.PROBLEM,
                        "grown, but the resync of the new stripes stopped"
                                + (p.error() == null ? "" : ": " + p.error()) + "; resume with raid rebuild "
                                + source.again(members));
            }
            say(
                    p != null
                            ? "the new stripes are resynced"
                            : "the new stripes are resynced by raid rebuild " + source.again(members)
                                    + " once the array is whole");
        }
        return ExitCode.OK;
    }

    /** mdadm's --bitmap words. */
    static ConsistencyPolicy bitmapPolicy(String word) {
        switch (word) {
            case "internal":
                return ConsistencyPolicy.BITMAP;
            case "none":
                return ConsistencyPolicy.RESYNC;
            default:
                throw CliException.usage("--bitmap takes internal or none, not '" + word + "' (an external bitmap "
                        + "file is not supported)");
        }
    }

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        refuseMisplacedOptions();
        members = source.members();
        int asked = (policy == null ? 0 : 1)
                + (bitmap == null ? 0 : 1)
                + (size == null ? 0 : 1)
                // mdadm changes the member count, chunk and layout in one reshape
                + (raidDevices == null && chunk == null && layout == null ? 0 : 1)
                + (continueReshape ? 1 : 0);
        if (asked != 1) {
            throw CliException.usage("give one of --consistency-policy, --bitmap, --size, --raid-devices and/or "
                    + "--chunk/--layout, and --continue");
        }
        if (startOnly && (!reshapes() || continueReshape)) {
            throw CliException.usage("--start-only starts a reshape: give --raid-devices, --chunk or --layout");
        }
        if (reshapes()) {
            try {
                return new ReshapeRun(this, source, members, startOnly)
                        .run(raidDevices, arraySize(), add, speed.limits(), newChunk(), newLayout());
            } catch (MemberInUseException held) {
                if (held.holderPid() <= 0) {
                    throw held;
                }
                // md reshapes a running array; raidfive's server has no channel for it yet, but
                // continues a reshape whose start the members record
                throw new MemberInUseException(
                        held.member(),
                        held.getMessage() + "; to reshape an array raid serve holds: raid stop " + source.again(members)
                                + ", then raid grow --start-only with these options (it records the start), then "
                                + "raid serve again, which continues the reshape while it serves",
                        held.holderPid());
            }
        }
        if (size != null) {
            return growSize();
        }
        if (bitmap != null) {
            policy = bitmapPolicy(bitmap);
        }
        try (ArraySession session = readWriteSession(members)) {
            ConsistencyPolicy before = session.array().consistencyPolicy();
            if (before == policy) {
                say(session.array().name() + " already has consistency policy " + policy.mdadmName());
                return ExitCode.OK;
            }
            try {
                session.array().setConsistencyPolicy(policy);
            } catch (ArrayConfigException e) {
                throw CliException.usage(e.getMessage());
            }
            say(session.array().name() + ": consistency policy " + before.mdadmName() + " -> " + policy.mdadmName());
        }
        return ExitCode.OK;
    }
}
