package org.raidfive.disk;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel's exclusive claim on a block device, as md and mkfs take it: {@code open(2)} with
 * {@code O_EXCL} and without {@code O_CREAT} ({@code BLK_OPEN_EXCL}). While one descriptor opened so
 * is held, every other exclusive open of the same device fails with {@code EBUSY}, through whatever
 * device node it is named (a {@code mknod} alias included): the claim belongs to the device, not to
 * a path. Plain opens still succeed, as they do beside md. Java cannot pass {@code O_EXCL} without
 * {@code O_CREAT}, so the call goes through JNA.
 *
 * <p>Block devices are identified by their device number ({@code st_rdev}), never by the node's
 * inode; the holder of a refused claim is looked up in {@code /proc} (a process with the device
 * open, or a mount of it), best effort.
 */
final class BlockDevices {
    private static final Logger LOG = LoggerFactory.getLogger(BlockDevices.class);
    // include/uapi/asm-generic/fcntl.h, the same on x86_64 and aarch64
    private static final int O_RDONLY = 0;
    private static final int O_EXCL = 0200;
    private static final int O_CLOEXEC = 02000000;
    private static final int EBUSY = 16;
    private static final int S_IFMT = 0170000;
    private static final int S_IFBLK = 0060000;

    /** The C library's open and close; null when JNA cannot bind them (then no exclusive claim is taken). */
    private static final LibC LIBC = bind();

    interface LibC extends Library {
        int open(String path, int flags) throws LastErrorException;

        int close(int fd) throws LastErrorException;
    }

    private BlockDevices() {}

    private static LibC bind() {
        try {
            return Native.load("c", LibC.class);
        } catch (LinkageError | RuntimeException e) {
            LOG.warn(
                    "block devices: cannot bind open(2) through JNA ({}): members that are block devices are "
                            + "claimed by a file lock only, which another device node of the same device does not see",
                    e.toString());
            return null;
        }
    }

    /**
     * A plain descriptor of {@code path} with the given {@code open(2)} flags (never {@code O_CREAT}
     * or {@code O_TRUNC}: a member is opened as it is), for I/O the kernel does by descriptor
     * ({@link RingIo}); -1 when JNA is not there or the open fails.
     */
    static int openDescriptor(Path path, int flags) {
        if (LIBC == null) {
            return -1;
        }
        try {
            return LIBC.open(path.toString(), flags | O_CLOEXEC);
        } catch (LastErrorException e) {
            LOG.debug("{}: open(2) for io_uring failed, errno {}", path, e.getErrorCode());
            return -1;
        }
    }

    /** Closes a descriptor from {@link #openDescriptor}. */
    static void closeDescriptor(int fd) {
        try {
            LIBC.close(fd);
        } catch (LastErrorException e) {
            // the descriptor is gone either way
        }
    }

    /** The device number of {@code path} when it is a block device, else -1. */
    static long deviceNumber(Path path) {
        try {
            int mode = (Integer) Files.getAttribute(path, "unix:mode");
            if ((mode & S_IFMT) != S_IFBLK) {
                return -1;
            }
            return ((Number) Files.getAttribute(path, "unix:rdev")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1; // no unix attribute view: not a device this process can tell apart
        }
    }

    /** glibc's {@code gnu_dev_major}/{@code gnu_dev_minor}, as {@code major:minor}. */
    static String majorMinor(long rdev) {
        long major = ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
        long minor = (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
        return major + ":" + minor;
    }

    /**
     * Claims the block device at {@code path} exclusively in the kernel; the returned claim gives it
     * back once. Null when JNA is not there (logged once at start).
     *
     * @throws MemberInUseException when another exclusive holder has it, naming that holder where /proc tells
     */
    static DiskClaim claimExclusive(Path path, String name, long rdev) throws IOException {
        if (LIBC == null) {
            return null;
        }
        int fd;
        try {
            fd = LIBC.open(path.toString(), O_RDONLY | O_EXCL | O_CLOEXEC);
        } catch (LastErrorException e) {
            if (e.getErrorCode() == EBUSY) {
                Holder holder = holder(rdev);
                throw new MemberInUseException(
                        name,
                        name + " (block device " + majorMinor(rdev) + ") is in use: "
                                + (holder == null
                                        ? "another exclusive holder has it (md, a mounted file system, mkfs or "
                                                + "another raid)"
                                        : holder.text()),
                        holder == null ? -1 : holder.pid());
            }
            throw new IOException(
                    name + ": cannot claim the block device exclusively (errno " + e.getErrorCode() + ")", e);
        }
        return new DiskClaim() {
            private boolean released;

            @Override
            public synchronized void close() {
                if (!released) {
                    released = true;
                    try {
                        LIBC.close(fd);
                    } catch (LastErrorException e) {
                        // the descriptor is gone either way; the claim went with it
                    }
                }
            }
        };
    }

    /** Who holds a device: a pid and what it is, or where it is mounted. */
    record Holder(long pid, String text) {}

    /** The first process of another pid with the device open, else a mount of it; null if neither shows. */
    static Holder holder(long rdev) {
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path proc : procs) {
                long pid = Long.parseLong(proc.getFileName().toString());
                if (pid == self) {
                    continue;
                }
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
                    for (Path fd : fds) {
                        if (deviceNumber(fd) == rdev) {
                            String command = LockHolders.command(pid);
                            return new Holder(pid, "held by pid " + pid + (command.isEmpty() ? "" : ": " + command));
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // gone, or not ours to read
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc
        }
        String id = majorMinor(rdev);
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
                String[] f = line.split(" ");
                if (f.length > 4 && f[2].equals(id)) {
                    return new Holder(-1, "mounted at " + f[4]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // no mountinfo
        }
        return null;
    }
}
