package org.raidfive.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import org.raidfive.nbd.NbdClientConfig;
import org.raidfive.nbd.NbdDisk;
import org.raidfive.nbd.NbdUri;

/**
 * The one place where a member spec from the command line becomes a {@link MemberDisk}: a file or
 * block device path ({@link FileDisk}), or an NBD URI ({@code nbd://host[:port]/export},
 * {@code nbd+unix:///export?socket=PATH}: an {@link NbdDisk}, one connection per open).
 *
 * <p>An NBD export always "exists" (it cannot be created or extended: its size is the server's);
 * one that cannot be reached is a {@link MemberUnreachableException}. Two specs name the same
 * storage when their files are the same (device and inode) or their URIs are the same once
 * normalised ({@link NbdUri#toString()}, with a Unix socket path made absolute).
 */
final class Members {
    /** Bytes at the start of a file that must be zero for it to count as blank: covers the v1.2 superblock. */
    static final int BLANK_CHECK_BYTES = 64 * 1024;

    private static final Pattern URI = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*://.*");
    /**
     * NBD members: the client's defaults (connect and handshake within 10 s; a request without a
     * reply for 30 s fails the member, never resent).
     */
    static final NbdClientConfig NBD_CLIENT = NbdClientConfig.defaults();

    private Members() {}

    /** True for a spec that names a network member rather than a path. */
    static boolean isUri(String spec) {
        return URI.matcher(spec).matches();
    }

    /** True for an {@code nbd://} or {@code nbd+unix://} spec (also the TLS schemes, which {@link #nbdUri} refuses). */
    static boolean isNbd(String spec) {
        return isUri(spec) && NbdUri.isNbdUri(spec);
    }

    /** The parsed NBD URI, or an {@link IllegalArgumentException} saying what is wrong with it. */
    static NbdUri nbdUri(String spec) {
        return NbdUri.parse(spec);
    }

    /** Opens an existing member for reading and writing. */
    static MemberDisk open(String spec) throws IOException {
        return open(spec, false);
    }

    /**
     * Opens an existing member; {@code readOnly} opens a file without write access (so commands that
     * only look work on files the user cannot write, and cannot change them by mistake). An NBD
     * export is opened as it is: read-only assembly writes nothing to any member.
     */
    static MemberDisk open(String spec, boolean readOnly) throws IOException {
        if (isNbd(spec)) {
            return openNbd(spec);
        }
        Path file = existingFile(spec);
        return readOnly ? FileDisk.openReadOnly(file) : FileDisk.open(file);
    }

    /** Connects to an NBD member; an unreachable server or unknown export is a {@link MemberUnreachableException}. */
    static NbdDisk openNbd(String spec) throws IOException {
        NbdUri uri = nbdUri(spec);
        try {
            return NbdDisk.open(uri, NBD_CLIENT);
        } catch (IOException e) {
            throw new MemberUnreachableException(spec, e);
        }
    }

    /**
     * Opens {@code spec}, creating it as a sparse file of {@code size} bytes when absent (or extending
     * a smaller file sparsely). An NBD export is opened as it is: the array checks that it is large enough.
     */
    static MemberDisk createOrExtend(String spec, long size) throws IOException {
        if (isNbd(spec)) {
            return openNbd(spec);
        }
        return FileDisk.createOrExtend(path(spec), size, false);
    }

    /** The path a file spec names; URIs are refused with what to give instead. */
    static Path path(String spec) {
        if (isNbd(spec)) {
            throw new IllegalArgumentException(spec + " is an NBD URI, not a file");
        }
        if (isUri(spec)) {
            throw new IllegalArgumentException(spec + ": network members (" + spec.substring(0, spec.indexOf(':'))
                    + "://) are not supported; give a file or block device path, or an nbd:// or nbd+unix:// URI");
        }
        if (spec.isEmpty()) {
            throw new IllegalArgumentException("an empty member path was given");
        }
        return Path.of(spec);
    }

    /** An NBD export always exists (reaching it is checked when it is opened); a file when it is there. */
    static boolean exists(String spec) {
        return isNbd(spec) || Files.exists(path(spec));
    }

    /** Size in bytes: the file's or block device's, or the NBD export's (which means connecting to it). */
    static long size(String spec) throws IOException {
        if (isNbd(spec)) {
            try (MemberDisk d = openNbd(spec)) {
                return d.size();
            }
        }
        try (FileDisk file = FileDisk.openReadOnly(existingFile(spec))) {
            return file.size(); // a block device's too, which the file system reports as 0
        }
    }

    /** Refuses a file spec that names no file or a directory; checks an NBD URI's syntax only. */
    static void checkExists(String spec) throws IOException {
        if (isNbd(spec)) {
            nbdUri(spec);
        } else {
            existingFile(spec);
        }
    }

    /** The path of an existing regular file or block device, or a clear error. */
    static Path existingFile(String spec) throws IOException {
        Path p = path(spec);
        if (!Files.exists(p)) {
            throw new NoSuchFileException(spec, null, "no such file");
        }
        if (Files.isDirectory(p)) {
            throw new IllegalArgumentException(spec + " is a directory, not a file");
        }
        return p;
    }

    /**
     * What identifies a member's storage, so the same file given twice (under two spellings, or
     * through a link) is caught: the file key (device and inode) when the file exists, else its
     * normalised absolute path; for an NBD URI its normalised text (a Unix socket path made absolute).
     */
    static Object identity(String spec) throws IOException {
        if (isNbd(spec)) {
            NbdUri uri = nbdUri(spec);
            if (uri.transport() == NbdUri.Transport.UNIX) {
                uri = NbdUri.unix(
                        uri.exportName(), uri.socket().toAbsolutePath().normalize());
            }
            return uri.toString();
        }
        Path p = path(spec);
        if (Files.exists(p)) {
            Object key = Files.readAttributes(p, BasicFileAttributes.class).fileKey();
            return key != null ? key : p.toRealPath();
        }
        return p.toAbsolutePath().normalize();
    }

    /** Refuses a list that names the same storage twice; names both spellings. */
    static void checkDistinct(List<String> specs) throws IOException {
        List<Object> seen = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            Object id = identity(specs.get(i));
            int j = seen.indexOf(id);
            if (j >= 0) {
                String first = specs.get(j);
                throw CliException.usage(
                        first.equals(specs.get(i))
                                ? first + " is given twice"
                                : specs.get(i) + " is given twice (it is the same " + (isNbd(first) ? "export" : "file")
                                        + " as " + first + ")");
            }
            seen.add(id);
        }
    }

    /** Index of the spec in {@code specs} naming the same storage as {@code spec}, or -1. */
    static int indexOf(List<String> specs, String spec) throws IOException {
        Object id = identity(spec);
        for (int i = 0; i < specs.size(); i++) {
            if (identity(specs.get(i)).equals(id)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Opens every spec (after checking they are distinct), files without write access when
     * {@code readOnly}; closes what it opened if one fails.
     */
    static MemberSet openAll(List<String> specs, boolean readOnly) throws IOException {
        checkDistinct(specs);
        for (String s : specs) {
            checkExists(s);
        }
        List<MemberDisk> disks = new ArrayList<>(specs.size());
        try {
            for (String s : specs) {
                disks.add(open(s, readOnly));
            }
        } catch (IOException | RuntimeException e) {
            MemberSet.closeQuietly(disks);
            throw e;
        }
        return new MemberSet(specs, disks);
    }

    /**
     * Why an existing file (or NBD export) may not be overwritten: it holds an md superblock or
     * non-zero bytes in its first 64 KiB; null when it looks blank (or does not exist).
     */
    static String dataFound(String spec) throws IOException {
        if (isNbd(spec)) {
            try (MemberDisk d = openNbd(spec)) {
                return dataFound(spec, d);
            }
        }
        Path p = path(spec);
        if (!Files.exists(p)) {
            return null;
        }
        // Through FileDisk, which shares this process's descriptor of the file: a separate open and
        // close would drop an OS lock this process holds on it.
        try (FileDisk disk = FileDisk.openReadOnly(p)) {
            return dataFound(spec, disk);
        }
    }

    private static String dataFound(String spec, MemberDisk disk) throws IOException {
        try {
            SuperblockFile.Read r = SuperblockFile.read(disk, spec);
            return spec + " already holds an md superblock (array " + MdUuid.format(r.sb().setUuid()) + ", name '"
                    + r.sb().name() + "')";
        } catch (SuperblockException e) {
            // no usable superblock: look at the bytes
        }
        int n = (int) Math.min(BLANK_CHECK_BYTES, disk.size());
        ByteBuffer buf = ByteBuffer.allocate(n);
        disk.read(0, buf, 0, n);
        for (int i = 0; i < n; i++) {
            if (buf.get(i) != 0) {
                return spec + " already holds data (a non-zero byte at offset " + i + ")";
            }
        }
        return null;
    }

    /** Whether a member's superblock records a reshape under way (md's MD_FEATURE_RESHAPE_ACTIVE). */
    static boolean reshaping(List<String> members) {
        for (String m : members) {
            try {
                if (SuperblockFile.read(m).sb().hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE)) {
                    return true;
                }
            } catch (IOException | SuperblockException e) {
                // the assembly below names what is wrong with it
            }
        }
        return false;
    }
}
