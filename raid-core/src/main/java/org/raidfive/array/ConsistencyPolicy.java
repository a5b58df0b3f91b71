package org.raidfive.array;

import java.util.Locale;

/**
 * How an array keeps parity consistent across a crash, md's {@code consistency_policy}: what must
 * be durable before a stripe's data and parity are written, and what a dirty start does.
 */
public enum ConsistencyPolicy {
    /**
     * Nothing is logged; a dirty array resyncs every stripe at its next start, and a dirty array
     * that is also degraded is refused unless forced (the RAID-5 write hole).
     */
    RESYNC,
    /**
     * md's internal write-intent bitmap: before a write reaches a member its chunk's bit is set on
     * disk; a dirty start resyncs only the chunks with bits set, and a member that comes back after a
     * short absence is rebuilt only where writes happened without it.
     */
    BITMAP,
    /**
     * md's partial parity log: before a stripe's data and parity are written, the XOR of the data
     * the write leaves alone is logged on that stripe's parity member; a dirty start recomputes the
     * parity of the logged stripes only, degraded or not.
     */
    PPL;

    /** The name mdadm uses ({@code --consistency-policy=}). */
    public String mdadmName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The policy mdadm calls {@code name}. */
    public static ConsistencyPolicy parse(String name) {
        for (ConsistencyPolicy p : values()) {
            if (p.mdadmName().equals(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown consistency policy '" + name + "' (resync, bitmap or ppl)");
    }
}
