package org.raidfive.disk;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every file or block device a {@link FileDisk} of this process has open, one entry per file
 * (device and inode), holding its channels and the OS lock that claims it.
 *
 * <p>Why channels are shared and closed late: Linux drops all of a process's POSIX record locks on
 * a file (what {@link FileChannel#tryLock} takes) when the process closes <em>any</em> descriptor of
 * that file. So a channel of a file is closed only when the last {@link FileDisk} (and claim) of
 * that file in this process is gone; until then a second open of the same file reuses the
 * entry's channel for its mode. Code outside raidfive that opens and closes a claimed member file
 * in the same JVM still drops the lock: that is the documented limit of the OS lock.
 *
 * <p>A block device is one entry whatever node names it (keyed by its device number, not the
 * node's inode), and an exclusive claim of one also takes the kernel's exclusive claim
 * ({@link BlockDevices}: {@code O_EXCL}, as md and mkfs do), which no other node, process or
 * exclusive opener gets past.
 *
 * <p>Locking: the table's monitor guards the map and every entry's fields; it is taken when disks
 * open, close, claim and release, never on the I/O path.
 */
final class OpenFiles {
    private static final Map<Object, Entry> TABLE = new HashMap<>();

    private OpenFiles() {}

    /** One file of this process: its channels by mode, users, claims and OS lock. */
    static final class Entry {
        private final Object key;
        private final Path path;
        /** The device number of a block device, -1 for a file. */
        private final long rdev;
        /** The kernel's exclusive claim of a block device while an exclusive holder has it. */
        private DiskClaim kernelClaim;

        private final Map<String, FileChannel> channels = new HashMap<>();
        /**
         * Plain descriptors by mode for io_uring ({@link RingIo}), opened on first use and closed
         * with the channels. They live exactly as long as the channels because the OS lock of a
         * claim is a POSIX record lock, which closing any descriptor of the file in this process
         * drops: one closed early would silently give the member away.
         */
        private final Map<String, Integer> descriptors = new HashMap<>();

        private int users;
        private String exclusiveHolder;
        private int sharedHolders;
        private String sharedHolder;
        private FileLock osLock;

        private Entry(Object key, Path path, long rdev) {
            this.key = key;
            this.path = path;
            this.rdev = rdev;
        }

        /**
         * Claims the file: in this process first (the table), then against other processes with an
         * OS lock on {@code channel} (exclusive needs a writable one).
         */
        DiskClaim claim(FileChannel channel, String name, ClaimMode mode, String holder, boolean writable)
                throws IOException {
            synchronized (TABLE) {
                if (exclusiveHolder != null || (mode == ClaimMode.EXCLUSIVE && sharedHolders > 0)) {
                    String by = exclusiveHolder != null ? exclusiveHolder : sharedHolder;
                    throw new MemberInUseException(
                            name,
                            name + " is in use by " + by + " in this process",
                            ProcessHandle.current().pid());
                }
                if (mode == ClaimMode.EXCLUSIVE && !writable) {
                    throw new IllegalStateException(name + " was opened read-only: it can only be claimed shared");
                }
                if (osLock == null) {
                    FileLock lock;
                    try {
                        lock = channel.tryLock(0, Long.MAX_VALUE, mode == ClaimMode.SHARED);
                    } catch (OverlappingFileLockException e) {
                        // Another part of this JVM holds a lock on this file outside raidfive.
                        throw new MemberInUseException(
                                name,
                                name + " is locked by other code in this process",
                                ProcessHandle.current().pid());
                    }
                    if (lock == null) {
                        LockHolders.Holder other = LockHolders.find(path);
                        throw new MemberInUseException(
                                name,
                                name + " is in use by another process" + (other == null ? "" : " (" + other + ")"),
                                other == null ? -1 : other.pid());
                    }
                    osLock = lock;
                }
                if (mode == ClaimMode.EXCLUSIVE && rdev >= 0) {
                    try {
                        kernelClaim = BlockDevices.claimExclusive(path, name, rdev);
                    } catch (IOException e) {
                        if (sharedHolders == 0) {
                            releaseOsLockLocked();
                        }
                        throw e;
                    }
                }
                if (mode == ClaimMode.EXCLUSIVE) {
                    exclusiveHolder = holder;
                } else {
                    sharedHolders++;
                    sharedHolder = holder;
                }
                users++; // the claim keeps the channels (and with them the lock) open
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
                        if (mode == ClaimMode.EXCLUSIVE) {
                            exclusiveHolder = null;
                            if (kernelClaim != null) {
                                kernelClaim.close();
                                kernelClaim = null;
                            }
                        } else {
                            sharedHolders--;
                        }
                        if (exclusiveHolder == null && sharedHolders == 0) {
                            releaseOsLockLocked();
                        }
                        releaseLocked();
                    }
                }
            };
        }

        private void releaseOsLockLocked() {
            if (osLock != null) {
                try {
                    osLock.release();
                } catch (IOException e) {
                    // the channel is closed: the lock went with it
                }
                osLock = null;
            }
        }

        /** One user fewer; the last one closes every channel of the file. Caller holds the table. */
        private void releaseLocked() {
            if (--users > 0) {
                return;
            }
            TABLE.remove(key);
            for (FileChannel c : channels.values()) {
                try {
                    c.close();
                } catch (IOException e) {
                    // nothing was written through a channel that fails to close here
                }
            }
            channels.clear();
            for (int fd : descriptors.values()) {
                BlockDevices.closeDescriptor(fd);
            }
            descriptors.clear();
        }

        /**
         * This process's plain descriptor of the file for {@code mode} (opened with {@code flags}
         * the first time), or -1 when it cannot be had; closed when the last user releases the file.
         */
        int descriptor(String mode, int flags) {
            synchronized (TABLE) {
                Integer fd = descriptors.get(mode);
                if (fd == null) {
                    fd = BlockDevices.openDescriptor(path, flags);
                    if (fd >= 0 && !sameStorage(fd)) {
                        BlockDevices.closeDescriptor(fd); // the path names another file now
                        fd = -1;
                    }
                    if (fd >= 0) {
                        descriptors.put(mode, fd);
                    }
                }
                return fd;
            }
        }

        /** True when descriptor {@code fd} is this entry's file (by what the kernel opened, not by path). */
        private boolean sameStorage(int fd) {
            Path opened = Path.of("/proc/self/fd/" + fd);
            try {
                return keyOf(opened, BlockDevices.deviceNumber(opened)).equals(key);
            } catch (IOException | RuntimeException e) {
                return false;
            }
        }

        void release() {
            synchronized (TABLE) {
                releaseLocked();
            }
        }
    }

    /** A channel of the file at {@code path} in the given mode, and the entry it belongs to. */
    record Opened(Entry entry, FileChannel channel) {}

    /**
     * Opens {@code path} (or reuses this process's channel of the same file in the same mode) and
     * counts one user of the entry; the caller gives it back with {@link Entry#release()}.
     */
    static Opened open(Path path, String mode, OpenOption... options) throws IOException {
        long rdev = BlockDevices.deviceNumber(path);
        Object key = keyOf(path, rdev);
        synchronized (TABLE) {
            Entry e = TABLE.get(key);
            FileChannel c = e == null ? null : e.channels.get(mode);
            if (c == null) {
                c = FileChannel.open(path, options);
                if (!keyOf(path, BlockDevices.deviceNumber(path)).equals(key)) {
                    c.close();
                    throw new IOException(path + " was replaced while being opened");
                }
                if (e == null) {
                    e = new Entry(key, path, rdev);
                    TABLE.put(key, e);
                }
                e.channels.put(mode, c);
            }
            e.users++;
            return new Opened(e, c);
        }
    }

    /** What identifies the storage at {@code path}: a block device's number, else the file's device and inode. */
    private static Object keyOf(Path path, long rdev) throws IOException {
        if (rdev >= 0) {
            return "block device " + rdev;
        }
        Object key = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        return key == null ? path.toRealPath() : key;
    }

    /** Who in this process holds the file at {@code key}, or null. */
    static String holderInProcess(Path path) throws IOException {
        Object key = keyOf(path, BlockDevices.deviceNumber(path));
        synchronized (TABLE) {
            Entry e = TABLE.get(key);
            if (e == null) {
                return null;
            }
            return e.exclusiveHolder != null ? e.exclusiveHolder : e.sharedHolders > 0 ? e.sharedHolder : null;
        }
    }

    /** Test and diagnostics view: the open entries' paths. */
    static List<Path> openPaths() {
        synchronized (TABLE) {
            List<Path> out = new ArrayList<>();
            for (Entry e : TABLE.values()) {
                out.add(e.path);
            }
            return out;
        }
    }
}
