package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Stream;
import org.raidfive.disk.FileKind;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Which members a command works on: the MEMBER files given, or {@code --array NAME} (or its UUID),
 * looked up in the config file ({@link ArrayConfig}): its {@code devices=} and the config's
 * {@code DEVICE} lines are the candidates, and those whose superblock belongs to the array are the
 * members. Also the scanning {@code assemble --scan} and {@code examine --scan} share: candidates
 * from globs and directories, grouped into arrays by their superblocks.
 */
final class ArraySource {
    @Option(
            names = "--array",
            paramLabel = "NAME|UUID",
            description = "The array named by an ARRAY line of the config file (or its UUID), instead of the "
                    + "member files.")
    String array;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "The config file (mdadm.conf's DEVICE and ARRAY lines; default: $RAID_CONFIG, else "
                    + ArrayConfig.DEFAULT_PATHS + ").")
    Path config;

    @Parameters(
            paramLabel = "MEMBER",
            arity = "0..*",
            description = "Member files or NBD URIs, any order (or --array NAME).")
    List<String> given = new ArrayList<>();

    /** The members named on the command line or by {@code --array}. */
    List<String> members() throws IOException {
        if (array == null) {
            if (given.isEmpty()) {
                throw CliException.usage("give the member files, or --array NAME (an ARRAY line of the config file)");
            }
            if (config != null) {
                throw CliException.usage("--config is read for --array NAME; the member files are given here");
            }
            return given;
        }
        if (!given.isEmpty()) {
            throw CliException.usage("give either --array " + array + " or the member files (" + String.join(" ", given)
                    + "), not both");
        }
        ArrayConfig cfg = ArrayConfig.find(config);
        candidates = new ArrayList<>();
        return resolve(array, cfg, candidates);
    }

    /** Files the config names for --array (null without --array): what a later --array command will look at. */
    private List<String> candidates;

    /**
     * How the operator names these members again in a later command: {@code --array NAME} when the
     * config reaches every one of {@code specs}, else the files themselves.
     */
    String again(List<String> specs) throws IOException {
        if (array == null || !reaches(specs)) {
            return Verb.join(specs);
        }
        return "--array " + Verb.join(List.of(array));
    }

    /** Whether a later --array command finds every one of {@code specs} (true without --array). */
    boolean reaches(List<String> specs) throws IOException {
        if (array == null) {
            return true;
        }
        for (String s : specs) {
            if (Members.indexOf(candidates, s) < 0) {
                return false;
            }
        }
        return true;
    }

    /** A warning for a file that joins the array where the config does not look; null when it does. */
    String unreachedNote(String spec) throws IOException {
        if (reaches(List.of(spec))) {
            return null;
        }
        return "the config does not name " + spec + ": add it to the ARRAY line's devices= (or a DEVICE line) so "
                + "that --array " + array + " finds it";
    }

    /**
     * {@link #members()} without {@code spec} when they come from the config (which may name a file
     * that is joining the array, e.g. through a DEVICE glob): for verbs that take a new member apart.
     */
    List<String> membersWithout(String spec) throws IOException {
        List<String> m = new ArrayList<>(members());
        int i = array == null ? -1 : Members.indexOf(m, spec);
        if (i >= 0) {
            m.remove(i);
        }
        return m;
    }

    /**
     * {@link #members()} with {@code spec} added when they come from the config and it is not among
     * them (a member the config no longer lists): for verbs whose --member must be one of them.
     */
    List<String> membersWith(String spec) throws IOException {
        List<String> m = new ArrayList<>(members());
        if (array != null && Members.indexOf(m, spec) < 0) {
            m.add(spec);
        }
        return m;
    }

    /** The config's members of {@code wanted}, or a one-line refusal saying where it looked. */
    static List<String> resolve(String wanted, ArrayConfig cfg, List<String> candidates) throws IOException {
        if (cfg == null) {
            throw CliException.usage("--array " + wanted + ": no config file (give --config FILE, set RAID_CONFIG, or "
                    + "write " + ArrayConfig.DEFAULT_PATHS.split(" ")[0] + "); raid assemble --scan DIR prints its "
                    + "ARRAY lines");
        }
        List<ArrayConfig.Entry> hits = cfg.lookup(wanted);
        if (hits.size() > 1) {
            List<String> lines = new ArrayList<>();
            hits.forEach(e -> lines.add(Integer.toString(e.line())));
            throw CliException.usage("--array " + wanted + " names " + hits.size() + " arrays in " + cfg.file()
                    + " (lines " + String.join(", ", lines) + "): give the UUID");
        }
        String uuid;
        String name;
        if (hits.size() == 1) {
            ArrayConfig.Entry e = hits.get(0);
            candidates.addAll(e.devices());
            uuid = e.uuid();
            name = e.name();
        } else if (ArrayConfig.normalUuid(wanted).matches("[0-9a-f]{32}")) {
            uuid = wanted;
            name = null;
        } else {
            List<String> known = new ArrayList<>();
            cfg.arrays().forEach(e -> known.add(e.shortName()));
            throw CliException.usage("--array " + wanted + ": " + cfg.file() + " has no such ARRAY"
                    + (known.isEmpty() ? " (it names none)" : " (it names " + String.join(", ", known) + ")"));
        }
        for (String c : expand(cfg.devices())) {
            if (!candidates.contains(c)) {
                candidates.add(c);
            }
        }
        if (candidates.isEmpty()) {
            throw CliException.usage("--array " + wanted + ": " + cfg.file() + " gives it no devices= and "
                    + (cfg.devices().isEmpty()
                            ? "has no DEVICE line"
                            : "its DEVICE lines match no file (" + String.join(" ", cfg.devices()) + ")")
                    + ": nowhere to look for its members");
        }
        List<String> members = new ArrayList<>();
        for (String c : candidates) {
            Superblock sb = superblockOrNull(c);
            if (sb == null) {
                continue;
            }
            boolean ours = uuid != null
                    ? ArrayConfig.normalUuid(MdUuid.format(sb.setUuid())).equals(ArrayConfig.normalUuid(uuid))
                    : sb.name().equals(name);
            if (ours) {
                members.add(c);
            }
        }
        if (members.isEmpty()) {
            throw CliException.usage("--array " + wanted + ": no member found (looked at " + candidates.size() + " file"
                    + (candidates.size() == 1 ? "" : "s") + " the config names for it)");
        }
        return members;
    }

    /** The file's valid superblock, or null: absent, unreadable, unreachable, or no md member. */
    static Superblock superblockOrNull(String spec) {
        try {
            if (!Members.exists(spec)) {
                return null;
            }
            return SuperblockFile.readValid(spec);
        } catch (IOException | SuperblockException | IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Files a list of DEVICE words names: NBD URIs as they are, directories by their regular files,
     * globs by the files they match, plain paths when they exist. Sorted within each word, each file once.
     */
    static List<String> expand(List<String> words) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        for (String w : words) {
            if (Members.isUri(w)) {
                out.add(w);
            } else if (w.matches(".*[*?\\[{].*")) {
                out.addAll(glob(w));
            } else {
                Path p = Path.of(w);
                if (Files.isDirectory(p)) {
                    try (Stream<Path> files = Files.list(p)) {
                        files.filter(Files::isRegularFile)
                                .map(Path::toString)
                                .sorted()
                                .forEach(out::add);
                    }
                } else if (Files.exists(p)) {
                    out.add(w);
                } else if (Files.isSymbolicLink(p)) {
                    refuseLinkLoop(w, p); // a link to nothing is passed over, as a device not there now
                }
            }
        }
        return new ArrayList<>(out);
    }

    /** A DEVICE word that is a loop of symbolic links is a mistake in the config: said in one line. */
    private static void refuseLinkLoop(String word, Path p) {
        try {
            p.toRealPath();
        } catch (FileSystemException e) {
            if (e.getReason() != null && e.getReason().contains("symbolic links")) {
                throw CliException.usage("DEVICE " + word + ": a loop of symbolic links");
            }
        } catch (IOException e) {
            // a dangling link: nothing there now
        }
    }

    /** A regular file or a block device (following links); false for anything else or what cannot be read. */
    private static boolean fileOrBlockDevice(Path p) {
        try {
            return FileKind.of(p).canBeMember();
        } catch (IOException | SecurityException e) {
            return false;
        }
    }

    /**
     * Regular files and block devices matching {@code pattern} (glob syntax in any path component).
     * Directories that cannot be read, entries that vanish meanwhile (/proc) and links that lead
     * nowhere are passed over; pipes, sockets and terminals are never candidates.
     */
    private static List<String> glob(String pattern) throws IOException {
        Path whole = Path.of(pattern);
        Path prefix = whole.isAbsolute() ? whole.getRoot() : Path.of("");
        int first = 0;
        for (; first < whole.getNameCount(); first++) {
            if (whole.getName(first).toString().matches(".*[*?\\[{].*")) {
                break;
            }
            prefix = prefix.resolve(whole.getName(first));
        }
        Path root = prefix;
        int depth = whole.getNameCount() - first;
        PathMatcher matcher;
        try {
            matcher = FileSystems.getDefault().getPathMatcher("glob:" + pattern);
        } catch (PatternSyntaxException e) {
            throw CliException.usage("'" + pattern + "' is not a valid glob: " + e.getDescription());
        }
        List<String> out = new ArrayList<>();
        Path start = root.toString().isEmpty() ? Path.of(".") : root;
        if (!Files.isDirectory(start)) {
            return out;
        }
        // Directories that cannot lead to a match are not entered (/proc/*/fd/* reads no /proc/1/map_files).
        List<PathMatcher> prefixes = new ArrayList<>();
        if (!pattern.contains("**")) {
            for (int k = 1; k < depth; k++) {
                Path prefixPattern = whole.getRoot() == null
                        ? whole.subpath(0, first + k)
                        : whole.getRoot().resolve(whole.subpath(0, first + k));
                prefixes.add(FileSystems.getDefault().getPathMatcher("glob:" + prefixPattern));
            }
        }
        Files.walkFileTree(start, EnumSet.noneOf(FileVisitOption.class), depth, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) {
                Path p = start == root ? d : start.relativize(d);
                int level = d.getNameCount() - start.getNameCount();
                if (d.equals(start) || prefixes.isEmpty() || level < 1 || level > prefixes.size()) {
                    return FileVisitResult.CONTINUE;
                }
                return prefixes.get(level - 1).matches(p) ? FileVisitResult.CONTINUE : FileVisitResult.SKIP_SUBTREE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) {
                return FileVisitResult.CONTINUE; // a directory that could not be read to the end
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes a) {
                Path p = start == root ? file : start.relativize(file);
                if (p.getNameCount() > 0 && matcher.matches(p) && fileOrBlockDevice(file)) {
                    out.add(p.toString());
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                return FileVisitResult.CONTINUE; // unreadable, or gone meanwhile
            }
        });
        out.sort(null);
        return out;
    }

    /** One array found by scanning: its freshest superblock and the files that carry its UUID. */
    record Found(Superblock top, List<String> specs) {}

    /** The arrays the files' superblocks make, in the order first seen; files without one are passed over. */
    static List<Found> scan(List<String> specs) {
        Map<String, List<String>> byUuid = new LinkedHashMap<>();
        Map<String, Superblock> top = new LinkedHashMap<>();
        for (String s : specs) {
            Superblock sb = superblockOrNull(s);
            if (sb == null) {
                continue;
            }
            String u = MdUuid.format(sb.setUuid());
            byUuid.computeIfAbsent(u, k -> new ArrayList<>()).add(s);
            top.merge(u, sb, (a, b) -> Long.compareUnsigned(b.events(), a.events()) > 0 ? b : a);
        }
        List<Found> found = new ArrayList<>();
        byUuid.forEach((u, files) -> found.add(new Found(top.get(u), files)));
        return found;
    }

    /**
     * An ARRAY line as {@code mdadm --examine --scan} and {@code --detail --scan} print it; with
     * {@code devices}, as their {@code --verbose} does (level, member count, and a continuation line
     * {@code devices=}), the paths made absolute when {@code absolute} (for a config file read from
     * anywhere). raidfive's config reads both back.
     */
    static String arrayLine(Superblock sb, List<String> devices, boolean absolute) {
        String name = sb.name();
        // A name from another tool's superblock that an ARRAY line cannot hold (a newline would start
        // a line of its own): left out, the UUID names the array alone.
        boolean nameFits = name.matches("[\\x21-\\x7e]*");
        if (!nameFits) {
            name = "";
        }
        String shortName = name.substring(name.indexOf(':') + 1);
        StringBuilder line = new StringBuilder("ARRAY /dev/md/")
                .append(shortName.isEmpty() ? "0" : shortName)
                .append("  ");
        if (devices != null) {
            line.append("level=raid5 ");
        }
        line.append("metadata=1.2 ");
        if (devices != null) {
            line.append("num-devices=").append(sb.raidDisks()).append(' ');
        }
        line.append("UUID=").append(MdUuid.format(sb.setUuid())).append(nameFits ? " name=" + name : "");
        if (devices != null) {
            List<String> shown = new ArrayList<>();
            for (String d : devices) {
                shown.add(
                        !absolute || Members.isUri(d)
                                ? d
                                : Path.of(d).toAbsolutePath().normalize().toString());
            }
            line.append("\n   devices=").append(String.join(",", shown));
        }
        return line.toString();
    }
}
