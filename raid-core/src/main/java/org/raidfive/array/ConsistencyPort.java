package org.raidfive.array;

import java.io.IOException;

/**
 * What the stripe engine and the passes ask of the array's consistency policy: one implementation
 * each, {@link #RESYNC} (nothing to do per write: a dirty start resyncs everything),
 * {@link WriteIntentBitmap} and {@link PartialParityLog}. A stripe write is bracketed by
 * {@link #startWrite} and {@link #endWrite}; in between, when {@link #logsPartialParity}, it logs its
 * partial parity through {@link #log} before any of its data or parity reaches a member. Nothing else
 * in the data path names the policy.
 *
 * <p>The array holds one port at a time ({@link ArrayCore#consistency}), replaced only while it is
 * quiesced (a policy change), so a write sees one policy from its start to its end.
 */
interface ConsistencyPort {

    /** Which policy this is. */
    ConsistencyPolicy policy();

    /** The longest write piece the policy takes in one bracket (the log's entry space). */
    default int maxPiece() {
        return Integer.MAX_VALUE;
    }

    /**
     * Before a write of member data {@code [memberOffset, +len)} reaches any member (the bitmap's bits
     * are on disk when this returns).
     */
    default void startWrite(long memberOffset, int len) throws IOException {}

    /**
     * {@link #startWrite} if it needs no I/O and no wait (and {@link #endWrite} never waits for this
     * write), for a write that runs on a completion's thread; false, having done nothing, when it
     * would wait (a bitmap bit not yet on disk) or when the policy logs. The resync policy always
     * starts at once; the log never does.
     */
    default boolean tryStartWrite(long memberOffset, int len) {
        return false;
    }

    /** Whether a stripe write computes its partial parity and {@link #log}s it before writing. */
    default boolean logsPartialParity() {
        return false;
    }

    /**
     * Logs a stripe's {@code entry} on {@code parity}'s log (slot {@code paritySlot}) and returns once
     * it is durable. Only when {@link #logsPartialParity}.
     */
    default Logged log(Member parity, int paritySlot, PartialParityEntry entry) throws IOException {
        throw new UnsupportedOperationException(policy() + " logs no partial parity");
    }

    /**
     * Whether {@link #endWrite} reads its {@code whole} argument (the bitmap); the engine then looks at
     * every member's state after a write, others pass false without looking.
     */
    default boolean asksWhole() {
        return false;
    }

    /**
     * After the write, whatever happened: {@code whole} when it reached every member of an array with
     * every member in sync (else the bitmap keeps its bits until a pass; always false unless
     * {@link #asksWhole}), {@code logged} what {@link #log} returned (or null) and {@code wroteSlots}
     * a mask of the slots written.
     */
    default void endWrite(long memberOffset, int len, boolean whole, Logged logged, long wroteSlots)
            throws IOException {}

    /**
     * Whether a resync or bitmap recovery must visit member data {@code [memberOffset, +len)}: false
     * only where the bitmap knows no write happened since it was last clean.
     */
    default boolean mayBeInconsistent(long memberOffset, long len) {
        return true;
    }

    /**
     * A pass made the whole array consistent on every member with no member out: what the policy
     * kept for a pass may go (the bitmap's marks of degraded writes).
     */
    default void allSynced() {}

    /**
     * Writes the policy's area (an empty log, the bitmap's pages) to {@code m}, a member joining the
     * array, before the superblocks name it.
     */
    default void writeAreaTo(Member m) throws IOException {}

    /** What {@link #log} hands back for {@link #endWrite}: the io_unit the stripe's entry went into. */
    interface Logged {}

    /** md's resync policy: no per-write work; a dirty start resyncs the whole array. */
    ConsistencyPort RESYNC = new ConsistencyPort() {
        @Override
        public ConsistencyPolicy policy() {
            return ConsistencyPolicy.RESYNC;
        }

        @Override
        public boolean tryStartWrite(long memberOffset, int len) {
            return true;
        }
    };
}
