package org.raidfive.disk;

/**
 * Ownership of a member's storage, taken by {@link MemberDisk#claim} and given up by
 * {@link #close()} (idempotent). The operating system drops the file lock behind it when the
 * process dies, so a killed holder leaves its members free at once.
 */
public interface DiskClaim extends AutoCloseable {
    /** A claim that excludes nothing: for storage that cannot be locked from here. */
    DiskClaim NONE = () -> {};

    /** Gives the member up. Idempotent; never throws. */
    @Override
    void close();
}
