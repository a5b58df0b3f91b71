package org.raidfive.md;

import java.time.Instant;

/**
 * md's time stamps ({@code ctime}, {@code utime}): one 64-bit value, low 40 bits
 * seconds since the epoch ({@code MD_SUPERBLOCK_1_TIME_SEC_MASK}), high 24 bits
 * microseconds. mdadm and the kernel write whole seconds (microseconds 0).
 */
public final class MdTime {
    /** Low 40 bits of an md time hold the seconds. */
    public static final long SECONDS_MASK = (1L << 40) - 1;

    private MdTime() {}

    /** md's encoding of {@code epochSeconds} and {@code micros}. */
    public static long of(final long epochSeconds, final int micros) {
        if (epochSeconds < 0 || epochSeconds > SECONDS_MASK) {
            throw new IllegalArgumentException("seconds " + epochSeconds + " do not fit md's 40 bits");
        }
        if (micros < 0 || micros >= 1_000_000) {
            throw new IllegalArgumentException("microseconds " + micros + " out of range (0..999999)");
        }
        return epochSeconds | ((long) micros << 40);
    }

    /** md's encoding of {@code instant} (microsecond precision, truncated). */
    public static long of(final Instant instant) {
        return of(instant.getEpochSecond(), instant.getNano() / 1000);
    }

    /** md's encoding of the current time, in whole seconds as mdadm and the kernel write it. */
    public static long nowSeconds() {
        return of(Instant.now().getEpochSecond(), 0);
    }

    /** The seconds part. */
    public static long seconds(final long mdTime) {
        return mdTime & SECONDS_MASK;
    }

    /** The microseconds part (top 24 bits). */
    public static int micros(final long mdTime) {
        return (int) (mdTime >>> 40);
    }

    /** The instant an md time stands for. */
    public static Instant toInstant(final long mdTime) {
        return Instant.ofEpochSecond(seconds(mdTime), micros(mdTime) * 1000L);
    }
}
