package org.raidfive.nbd;

/**
 * What {@link NbdServer} does with {@code NBD_CMD_TRIM}. {@link org.raidfive.disk.MemberDisk} has no
 * discard, so a trim is either a hint that is dropped or a write of zeros.
 */
public enum TrimMode {
    /**
     * Advertise trim and acknowledge it without touching the disk. The protocol allows this: a
     * trimmed range's contents are unspecified until rewritten, so the old bytes remain valid.
     */
    IGNORE,
    /** Advertise trim and write zeros over the range (costs a full write, e.g. parity updates). */
    ZERO,
    /** Do not advertise trim; a client that sends it anyway gets EINVAL. */
    UNSUPPORTED
}
