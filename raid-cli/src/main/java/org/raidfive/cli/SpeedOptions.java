package org.raidfive.cli;

import org.raidfive.array.SyncLimits;
import picocli.CommandLine.Option;

/** md's {@code speed_limit_min}/{@code speed_limit_max} for a foreground pass, per member, per second. */
final class SpeedOptions {
    @Option(
            names = "--speed-limit-min",
            paramLabel = "RATE",
            converter = SizeConverter.class,
            description = "Rate the pass keeps even while other I/O runs, per member per second (default md's 1000K).")
    Long min;

    @Option(
            names = "--speed-limit-max",
            paramLabel = "RATE",
            converter = SizeConverter.class,
            description = "Rate the pass never exceeds, per member per second, e.g. 2M (default md's 200000K).")
    Long max;

    /** The limits asked for; an unset limit follows the other one if md's default would contradict it. */
    SyncLimits limits() {
        long mn = min != null ? min : SyncLimits.MD_DEFAULT.minBytesPerSecond();
        long mx = max != null ? max : SyncLimits.MD_DEFAULT.maxBytesPerSecond();
        if (min == null && mn > mx) {
            mn = mx;
        }
        if (max == null && mx < mn) {
            mx = mn;
        }
        if (mn <= 0 || mx <= 0 || mn > mx) {
            throw CliException.usage("speed limits need 0 < --speed-limit-min <= --speed-limit-max, got min " + mn
                    + " and max " + mx + " bytes/s");
        }
        return new SyncLimits(mn, mx);
    }
}
