package org.raidfive.md;

/**
 * The member has an md superblock, but it is damaged or inconsistent: bad
 * checksum, non-zero reserved bytes, offsets and sizes that contradict each
 * other, roles out of range. Unlike its parent, this is never "not an md
 * member" or "unsupported": the bytes are wrong.
 */
public class CorruptSuperblockException extends SuperblockException {
    private static final long serialVersionUID = 1L;

    /** {@code memberName}'s superblock is damaged in the way {@code problem} says. */
    public CorruptSuperblockException(final String memberName, final String problem) {
        super(memberName, problem);
    }
}
