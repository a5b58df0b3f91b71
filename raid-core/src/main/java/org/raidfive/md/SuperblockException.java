package org.raidfive.md;

/**
 * A member's superblock cannot be used: it is absent, of a kind this engine
 * does not support, or damaged ({@link CorruptSuperblockException}).
 *
 * <p>The message always starts with the member's name, then says the exact
 * problem, e.g. {@code "disk2.img: not an md member (magic 0x00000000, expected 0xa92b4efc)"}.
 */
public class SuperblockException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The member whose superblock it is. */
    private final String memberName;
    /** What is wrong with it. */
    private final String problem;

    /** {@code memberName}'s superblock cannot be used because of {@code problem}. */
    public SuperblockException(final String memberName, final String problem) {
        super(memberName + ": " + problem);
        this.memberName = memberName;
        this.problem = problem;
    }

    /** The member (file, device) the superblock was read from, as the caller named it. */
    public String memberName() {
        return memberName;
    }

    /** The problem alone, without the member name. */
    public String problem() {
        return problem;
    }
}
