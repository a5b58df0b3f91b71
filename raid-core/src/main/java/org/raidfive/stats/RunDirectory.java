package org.raidfive.stats;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The directory a running array publishes its counters in, checked as a daemon's run directory
 * must be (systemd's {@code RuntimeDirectory}, OpenSSH's {@code StrictModes}): made 0755 by this
 * user when absent; else it must be a real directory (not a symbolic link), owned by this user and
 * writable by no one else, or another user could put links or files in it that this process would
 * then write through.
 */
final class RunDirectory {
    private RunDirectory() {}

    /** Makes {@code dir} if absent; refuses it, with the reason, if another user could change what is in it. */
    static void check(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Path parent = dir.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try {
                Files.createDirectory(
                        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
            } catch (FileAlreadyExistsException raced) {
                // made by someone else meanwhile: checked below like any other
            }
        }
        PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (a.isSymbolicLink() || !a.isDirectory()) {
            throw new IOException(dir + " is " + (a.isSymbolicLink() ? "a symbolic link" : "not a directory")
                    + ": refusing it as the run directory (RAID_RUN_DIR names another)");
        }
        int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int self = currentUid();
        if (owner != self) {
            throw new IOException(dir + " is owned by uid " + owner + ", not by this user (uid " + self
                    + "): another user controls what is in it; refusing it as the run directory (remove it, or "
                    + "name another with RAID_RUN_DIR)");
        }
        Set<PosixFilePermission> p = a.permissions();
        if (p.contains(PosixFilePermission.GROUP_WRITE) || p.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IOException(
                    dir + " is writable by " + (p.contains(PosixFilePermission.OTHERS_WRITE) ? "others" : "its group")
                            + " (mode " + PosixFilePermissions.toString(p) + "): refusing it as the run "
                            + "directory (chmod go-w it, or name another with RAID_RUN_DIR)");
        }
    }

    /** This process's effective uid: the owner of what it creates. */
    static int currentUid() throws IOException {
        // /proc/self belongs to the process's effective uid.
        Path self = Path.of("/proc/self");
        if (Files.exists(self)) {
            return (Integer) Files.getAttribute(self, "unix:uid");
        }
        Path probe = Files.createTempFile("raidfive-uid", null);
        try {
            return (Integer) Files.getAttribute(probe, "unix:uid");
        } finally {
            Files.deleteIfExists(probe);
        }
    }
}
