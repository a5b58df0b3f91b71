package org.raidfive.array;

import java.io.IOException;

/**
 * What the stripe engine and the passes ask of the array's consistency policy: one implementation
 * each, {@link #RESYNC} (nothing to do per write: a dirty start resyncs everything),
 * {@link WriteIntentBitmap} and {@link PartialParityLog}. A stripe write is bracketed by
 * {@link #startWrite} and {@link #endWrite}; in between, when {@link #logsPartialParity}, it logs its
 * partial parity through {@link #log} before any of its data or parity reaches a member. A write
 * that runs without a thread uses {@link #tryStartWrite}, {@link #logThen} and {@link #endWriteThen}
 * instead, which never wait. Nothing else in the data path names the policy.
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
     * would wait (a bitmap bit not yet on disk). The resync policy and the log always start at
     * once (the log's wait comes later, in {@link #logThen}).
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
     * {@link #log} for a write that runs without a thread ({@link #tryStartWrite} took it): never
     * waits. The entry's partial parity is computed now; {@code waiter} is told the io_unit the
     * entry joined ({@link LogWaiter#joined}, under the log's lock, before that unit can be durable)
     * and is run once the unit is durable: on the thread that learns it, or handed to
     * {@link org.raidfive.disk.IoThreads#runContinuation} when {@code handOff} (members on a
     * connection, whose reader must not wait). Only when {@link #logsPartialParity}.
     */
    default void logThen(Member parity, int paritySlot, PartialParityEntry entry, LogWaiter waiter, boolean handOff) {
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
     * {@link #endWrite} for a write started by {@link #tryStartWrite}, on a completion's thread: never
     * waits, and runs {@code then} once the write's bracket is over (now, or later on another thread
     * when the policy still has I/O to finish for it: the log's flushes of the members an io_unit
     * wrote, which md makes before the log's next io_unit). Throws, without running {@code then},
     * only as {@link #endWrite} does.
     */
    default void endWriteThen(long memberOffset, int len, boolean whole, Logged logged, long wroteSlots, Runnable then)
            throws IOException {
        endWrite(memberOffset, len, whole, logged, wroteSlots);
        then.run();
    }

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

    /** A write logging without a thread ({@link #logThen}): {@link #run} when its io_unit is durable. */
    interface LogWaiter extends Runnable {
        /** The entry joined {@code unit}, which the write hands to {@link #endWriteThen} or {@link #endWrite}. */
        void joined(Logged unit);
    }

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
