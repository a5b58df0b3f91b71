package org.raidfive.disk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * What a path is, by the type bits of its Unix mode ({@code stat}'s {@code S_IFMT}), links followed
 * unless asked not to: only a regular file or a block device can be a member; opening or reading a
 * FIFO can block forever, so callers look before they open.
 */
public enum FileKind {
    /** A regular file: may be a member. */
    REGULAR_FILE("a regular file"),
    /** A block device: may be a member. */
    BLOCK_DEVICE("a block device"),
    /** A directory. */
    DIRECTORY("a directory"),
    /** A FIFO: opening or reading one can block forever. */
    FIFO("a FIFO (named pipe)"),
    /** A Unix socket. */
    SOCKET("a socket"),
    /** A character device (a terminal, /dev/zero). */
    CHARACTER_DEVICE("a character device"),
    /** A symbolic link, seen only when links are not followed. */
    SYMBOLIC_LINK("a symbolic link"),
    /** A symbolic link to nothing, or a type this system does not name. */
    OTHER("not a regular file"),
    /** The system offers no Unix view of the file: it cannot tell more. */
    UNKNOWN("of unknown type");

    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;
    private static final int S_IFLNK = 0120000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFIFO = 0010000;

    private final String description;

    FileKind(String description) {
        this.description = description;
    }

    /**
     * The kind of {@code path} ({@link LinkOption#NOFOLLOW_LINKS}: of a link itself); throws what
     * the file system says when it cannot be looked at.
     */
    public static FileKind of(Path path, LinkOption... options) throws IOException {
        int mode;
        try {
            mode = ((Number) Files.getAttribute(path, "unix:mode", options)).intValue();
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return Files.isSymbolicLink(path) && options.length > 0
                    ? SYMBOLIC_LINK
                    : Files.isRegularFile(path, options)
                            ? REGULAR_FILE
                            : Files.isDirectory(path, options) ? DIRECTORY : UNKNOWN;
        }
        return switch (mode & S_IFMT) {
            case S_IFREG -> REGULAR_FILE;
            case S_IFBLK -> BLOCK_DEVICE;
            case S_IFDIR -> DIRECTORY;
            case S_IFIFO -> FIFO;
            case S_IFSOCK -> SOCKET;
            case S_IFCHR -> CHARACTER_DEVICE;
            case S_IFLNK -> SYMBOLIC_LINK;
            default -> OTHER;
        };
    }

    /** True for what may be a member: a regular file or a block device. */
    public boolean canBeMember() {
        return this == REGULAR_FILE || this == BLOCK_DEVICE;
    }

    /** As a phrase: "a FIFO (named pipe)", "a directory". */
    public String description() {
        return description;
    }
}
