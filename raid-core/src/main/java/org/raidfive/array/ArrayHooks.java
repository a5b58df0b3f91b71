package org.raidfive.array;

import java.io.IOException;

/**
 * What the data path asks of the array's metadata: state changes that must be on disk before
 * I/O goes on (md writes the superblocks before it acts on a state change).
 */
interface ArrayHooks {

    /** Called before every write; marks the array dirty on disk if it is clean (cheap when dirty). */
    void beforeWrite() throws IOException;

    /**
     * Marks {@code member} faulty (if it is not already), bumps events and writes the superblocks
     * of every live member before returning.
     *
     * @throws ArrayFailedException when the array can no longer serve I/O
     */
    void memberFailed(Member member, IOException cause) throws IOException;

    /**
     * {@code member} recorded new bad blocks (an error md could not correct): writes the
     * superblocks, with the bad block log, before the I/O that found them returns.
     */
    void badBlocksRecorded(Member member) throws IOException;
}
