package org.raidfive.array;

import org.raidfive.layout.Raid5Algorithm;

/**
 * What a reshape is and where it stands, read-only: the shape before and after, md's reshape
 * position, and why a write is refused. {@link OfflineReshape} is one; {@link OnlineReshape#state}
 * gives the one a running array's reshape has. Each value may be read from any thread while the
 * reshape runs.
 */
public interface ReshapeState {
    /** {@code holder}-style name of the array: its name and UUID. */
    String name();

    /** The array's UUID, as {@link Raid5Array#uuid} gives it. */
    String uuid();

    /**
     * md's reshape position, in array sectors: below it (forwards) or from it up ({@link
     * #backwards}) the array is in the new geometry.
     */
    long position();

    /** Whether the reshape runs from the array's end down to 0 (md's {@code reshape_backwards}). */
    boolean backwards();

    /** Array sectors the reshape moves in all: from its start position to its end position. */
    long sectorsTotal();

    /** Array sectors already moved when the reshape is at {@code position}. */
    long sectorsDone(long position);

    /** Members before the reshape. */
    int oldDisks();

    /** Members after it. */
    int newDisks();

    /** The chunk size before the reshape, in bytes. */
    int oldChunkBytes();

    /** The chunk size after the reshape, in bytes. */
    int newChunkBytes();

    /** The parity layout before the reshape. */
    Raid5Algorithm oldAlgorithm();

    /** The parity layout after the reshape. */
    Raid5Algorithm newAlgorithm();

    /** The array's size in bytes before the reshape. */
    long oldArrayBytes();

    /** The array's size in bytes once the reshape is done. */
    long newArrayBytes();

    /** The array's size while the reshape is under way, in bytes (md's: the smaller of the two). */
    long reshapingArrayBytes();

    /** The member the reshape runs without (one failed or was recorded faulty), or null. */
    String missingMember();

    /**
     * Whether the members were dirty when the reshape was opened: the array's resync is due after
     * its end, as md runs it.
     */
    boolean resyncDue();

    /** Why a write to the array is refused during the reshape, or null when writes are served. */
    String whyNoWrites();
}
