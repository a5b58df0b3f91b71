package org.raidfive.cli;

import picocli.CommandLine.Command;

/** {@code raid repair}: rewrites parity where it mismatches. */
@Command(
        header = "Scrub and rewrite mismatched parity.",
        name = "repair",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Scrub and rewrite parity wherever it does not match the data; prints how many sectors "
                    + "mismatched (md's mismatch_cnt). An array not shut down cleanly is resynced first, as md does.",
            "Exit 0 when the pass completed, 1 when the array is degraded or the pass failed."
        })
final class RepairCommand extends ScrubCommand {
    @Override
    boolean repair() {
        return true;
    }
}
