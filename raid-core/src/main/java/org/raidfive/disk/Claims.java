package org.raidfive.disk;

import java.util.HashMap;
import java.util.Map;

/**
 * The process-wide table of claimed storage, keyed by what identifies it (the disk object, an NBD
 * URI, a file's device and inode). It is what excludes a second array in the same JVM, where an OS
 * file lock cannot (POSIX record locks belong to the process).
 *
 * <p>One lock for the table: claims are taken and released when arrays open and close, never on
 * the I/O path.
 */
public final class Claims {
    private static final Map<Object, Holders> TABLE = new HashMap<>();

    private Claims() {}

    /** Who holds one piece of storage: one exclusive holder, or any number of shared ones. */
    private static final class Holders {
        String exclusive;
        int shared;
        String sharedHolder;
    }

    /**
     * Claims {@code key} for {@code holder} in this process, or refuses naming who holds it. The
     * returned claim gives it back once. For {@link MemberDisk#claim} implementations whose storage
     * has no OS lock (memory, the network).
     *
     * @param key what identifies the storage (equal keys are the same storage)
     * @param name the member's name, for the message
     * @throws MemberInUseException if another holder has it
     */
    public static DiskClaim inProcess(Object key, String name, ClaimMode mode, String holder)
            throws MemberInUseException {
        synchronized (TABLE) {
            Holders h = TABLE.computeIfAbsent(key, k -> new Holders());
            if (h.exclusive != null || (mode == ClaimMode.EXCLUSIVE && h.shared > 0)) {
                String by = h.exclusive != null ? h.exclusive : h.sharedHolder;
                if (h.exclusive == null && h.shared == 0) {
                    TABLE.remove(key);
                }
                throw new MemberInUseException(
                        name,
                        name + " is in use by " + by + " in this process",
                        ProcessHandle.current().pid());
            }
            if (mode == ClaimMode.EXCLUSIVE) {
                h.exclusive = holder;
            } else {
                h.shared++;
                h.sharedHolder = holder;
            }
        }
        return new DiskClaim() {
            private boolean released;

            @Override
            public void close() {
                synchronized (TABLE) {
                    if (released) {
                        return;
                    }
                    released = true;
                    Holders h = TABLE.get(key);
                    if (h == null) {
                        return;
                    }
                    if (mode == ClaimMode.EXCLUSIVE) {
                        h.exclusive = null;
                    } else {
                        h.shared--;
                    }
                    if (h.exclusive == null && h.shared == 0) {
                        TABLE.remove(key);
                    }
                }
            }
        };
    }
}
