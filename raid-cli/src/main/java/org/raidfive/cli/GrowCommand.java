package org.raidfive.cli;

import java.util.List;
import org.raidfive.array.ArrayConfigException;
import org.raidfive.array.ConsistencyPolicy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid grow}: changes what the engine can change on an existing array, as {@code mdadm
 * --grow} does; today the consistency policy. What it cannot change (members, chunk, layout, size)
 * it says so.
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
            "raidfive does not reshape: adding or removing data members, and changing chunk size, layout or "
                    + "member size, are done with Linux md (mdadm --grow)."
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
            hidden = true)
    Integer raidDevices;

    @Option(names = "--chunk", paramLabel = "SIZE", hidden = true)
    String chunk;

    @Option(names = "--layout", paramLabel = "NAME", hidden = true)
    String layout;

    @Option(names = "--size", paramLabel = "SIZE", hidden = true)
    String size;

    @Option(
            names = {"--speed-limit-min", "--speed-limit-max"},
            paramLabel = "RATE",
            hidden = true)
    String speedLimit;

    @Option(names = "--add", paramLabel = "FILE", hidden = true)
    String add;

    /** mdadm --grow's words for what raidfive cannot change: refused with where it is done instead. */
    private void refuseReshape() {
        String what = raidDevices != null
                ? "--raid-devices (adding or removing data members)"
                : chunk != null ? "--chunk" : layout != null ? "--layout" : size != null ? "--size" : null;
        if (what != null) {
            throw CliException.usage("raidfive does not reshape: " + what + " is changed with Linux md (mdadm --grow "
                    + "on the assembled array); raid grow changes the consistency policy and the bitmap");
        }
        if (add != null) {
            throw CliException.usage("--add: raidfive adds spares, not data members: raid add --spare " + add
                    + " (reshaping to more members is done with Linux md)");
        }
        if (speedLimit != null) {
            throw CliException.usage("speed limits are not stored with the array (md keeps them in sysfs, per running "
                    + "array): give --speed-limit-min/--speed-limit-max to the command that runs the pass (raid rebuild, "
                    + "raid re-add, raid check, raid repair)");
        }
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
        refuseReshape();
        members = source.members();
        if ((policy == null) == (bitmap == null)) {
            throw CliException.usage("give one of --consistency-policy and --bitmap");
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
