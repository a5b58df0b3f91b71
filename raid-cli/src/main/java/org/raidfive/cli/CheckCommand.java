package org.raidfive.cli;

import picocli.CommandLine.Command;

/** {@code raid check}: counts parity mismatches; read-only. */
@Command(
        header = "Scrub: count parity mismatches (read-only).",
        name = "check",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Scrub: recompute every stripe's parity and count mismatched sectors (md's mismatch_cnt). "
                    + "Assembles read-only: nothing is written. An array with a resync pending (not shut down cleanly) "
                    + "is refused: md resyncs before it checks; raid repair resyncs it first.",
            "Exit 0 when parity is consistent, 1 when mismatches were found or the array is degraded, 2 when "
                    + "refused."
        })
final class CheckCommand extends ScrubCommand {
    @Override
    boolean repair() {
        return false;
    }
}
