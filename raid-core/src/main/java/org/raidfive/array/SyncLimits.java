package org.raidfive.array;

/**
 * md's {@code speed_limit_min} / {@code speed_limit_max} for background passes, in bytes per second
 * per member. Above {@code min} a pass yields to foreground I/O; it never exceeds {@code max}.
 */
public record SyncLimits(long minBytesPerSecond, long maxBytesPerSecond) {
    /** md's defaults: 1,000 KiB/s and 200,000 KiB/s. */
    public static final SyncLimits MD_DEFAULT = new SyncLimits(1_000L * 1024, 200_000L * 1024);
    /** No limit at all: passes run as fast as the members allow. */
    public static final SyncLimits UNLIMITED = new SyncLimits(Long.MAX_VALUE, Long.MAX_VALUE);

    /** Checks that both limits are positive and the minimum is not above the maximum. */
    public SyncLimits {
        if (minBytesPerSecond <= 0 || maxBytesPerSecond <= 0 || minBytesPerSecond > maxBytesPerSecond) {
            throw new IllegalArgumentException("sync speed limits need 0 < min <= max, got min " + minBytesPerSecond
                    + " max " + maxBytesPerSecond + " bytes/s");
        }
    }
}
