package org.raidfive.disk;

import java.io.IOException;

/**
 * A member is held by another array, in this process or another one: the claim was refused and
 * nothing was written. The message names the member and, when it can be found, the holder.
 */
public final class MemberInUseException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The member's name. */
    private final String member;
    /** The holding process, or -1 when it is this one or unknown. */
    private final long holderPid;

    /** {@code member} is held; {@code message} names the holder. */
    public MemberInUseException(String member, String message, long holderPid) {
        super(message);
        this.member = member;
        this.holderPid = holderPid;
    }

    /** The member's name, as {@link MemberDisk#name()} gives it. */
    public String member() {
        return member;
    }

    /** The process holding the member: this one's pid when held here, -1 when unknown. */
    public long holderPid() {
        return holderPid;
    }
}
