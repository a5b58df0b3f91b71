package org.raidfive.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * raidfive's config file, in mdadm.conf's words: {@code DEVICE} lines name the files (globs,
 * directories, NBD URIs) where members may be; {@code ARRAY} lines name arrays:
 * <pre>
 * DEVICE /srv/raid/*.img
 * ARRAY /dev/md/vol0 metadata=1.2 UUID=3d6b1c2e:... name=host:vol0 devices=/srv/raid/a.img,/srv/raid/b.img
 * </pre>
 * The first word of an ARRAY line is its name (a {@code /dev/md/} path as mdadm writes it counts
 * by its last part); {@code UUID=}, {@code name=} and {@code devices=} are read, mdadm's other
 * keys ({@code metadata=}, {@code level=}, {@code num-devices=}, ...) are accepted and ignored, as
 * are mdadm's other line kinds (MAILADDR, HOMEHOST, ...). Lines that start with white space
 * continue the line before, {@code #} starts a comment. Relative paths are relative to the file's
 * directory. Anything else is refused with its line number.
 */
final class ArrayConfig {
    /** Where the config is looked for when neither --config nor {@code RAID_CONFIG} names one. */
    static final String DEFAULT_PATHS =
            "$XDG_CONFIG_HOME/raidfive/raid.conf (~/.config/raidfive/raid.conf), " + "/etc/raidfive/raid.conf";

    private static final Set<String> MDADM_ONLY = Set.of(
            "MAILADDR",
            "MAILFROM",
            "PROGRAM",
            "CREATE",
            "HOMEHOST",
            "HOMECLUSTER",
            "AUTO",
            "POLICY",
            "PART-POLICY",
            "SYSFS",
            "ENCRYPTION",
            "PROBING");

    /** One ARRAY line. */
    record Entry(String token, String uuid, String name, List<String> devices, int line) {
        /** The name the operator types: the token's last path part. */
        String shortName() {
            return token.substring(token.lastIndexOf('/') + 1);
        }

        boolean matches(String wanted) {
            if (wanted.equals(token) || wanted.equals(shortName())) {
                return true;
            }
            if (name != null && (wanted.equals(name) || wanted.equals(name.substring(name.indexOf(':') + 1)))) {
                return true;
            }
            return uuid != null && normalUuid(wanted).equals(normalUuid(uuid));
        }
    }

    private final Path file;
    private final List<String> devices;
    private final List<Entry> arrays;

    private ArrayConfig(Path file, List<String> devices, List<Entry> arrays) {
        this.file = file;
        this.devices = devices;
        this.arrays = arrays;
    }

    Path file() {
        return file;
    }

    /** DEVICE words, relative paths made absolute. */
    List<String> devices() {
        return devices;
    }

    List<Entry> arrays() {
        return arrays;
    }

    /** The config to use: {@code explicit}, else {@code RAID_CONFIG}, else the first default that exists; null if none. */
    static ArrayConfig find(Path explicit) throws IOException {
        if (explicit != null) {
            if (!Files.isRegularFile(explicit)) {
                throw CliException.usage("--config " + explicit + ": no such file");
            }
            return load(explicit);
        }
        Map<String, String> env = System.getenv();
        String named = env.get("RAID_CONFIG");
        if (named != null && !named.isEmpty()) {
            Path p = Path.of(named);
            if (!Files.isRegularFile(p)) {
                throw CliException.usage("RAID_CONFIG=" + named + ": no such file");
            }
            return load(p);
        }
        for (Path p : defaultPaths(env)) {
            if (Files.isRegularFile(p)) {
                return load(p);
            }
        }
        return null;
    }

    static List<Path> defaultPaths(Map<String, String> env) {
        String xdg = env.get("XDG_CONFIG_HOME");
        Path home = Path.of(System.getProperty("user.home"));
        Path user = (xdg == null || xdg.isEmpty() ? home.resolve(".config") : Path.of(xdg))
                .resolve("raidfive")
                .resolve("raid.conf");
        return List.of(user, Path.of("/etc/raidfive/raid.conf"));
    }

    /** The file's lines; a line that is not UTF-8 is refused in one line naming the file and the line. */
    private static List<String> utf8Lines(Path file) throws IOException {
        byte[] all = Files.readAllBytes(file);
        List<String> lines = new ArrayList<>();
        CharsetDecoder strict = StandardCharsets.UTF_8.newDecoder();
        int start = 0;
        for (int i = 0; i <= all.length; i++) {
            if (i == all.length || all[i] == '\n') {
                if (i == all.length && start == i) {
                    break;
                }
                try {
                    lines.add(strict.decode(ByteBuffer.wrap(all, start, i - start))
                            .toString());
                } catch (CharacterCodingException e) {
                    throw CliException.usage(file + " line " + (lines.size() + 1) + ": not UTF-8 text");
                }
                start = i + 1;
            }
        }
        return lines;
    }

    static ArrayConfig load(Path file) throws IOException {
        Path base = file.toAbsolutePath().getParent();
        List<String> logical = new ArrayList<>();
        List<Integer> lineNumbers = new ArrayList<>();
        int n = 0;
        for (String raw : utf8Lines(file)) {
            n++;
            int hash = raw.indexOf('#');
            String line = hash >= 0 ? raw.substring(0, hash) : raw;
            if (line.isBlank()) {
                continue;
            }
            if (Character.isWhitespace(line.charAt(0)) && !logical.isEmpty()) {
                int last = logical.size() - 1;
                logical.set(last, logical.get(last) + " " + line.strip());
            } else {
                logical.add(line.strip());
                lineNumbers.add(n);
            }
        }
        List<String> devices = new ArrayList<>();
        List<Entry> arrays = new ArrayList<>();
        for (int i = 0; i < logical.size(); i++) {
            String[] words = logical.get(i).split("\\s+");
            String keyword = words[0].toUpperCase(Locale.ROOT);
            int line = lineNumbers.get(i);
            if (keyword.equals("DEVICE") || keyword.equals("DEVICES")) {
                for (int w = 1; w < words.length; w++) {
                    devices.add(absolute(base, words[w]));
                }
            } else if (keyword.equals("ARRAY")) {
                arrays.add(entry(file, base, words, line));
            } else if (!MDADM_ONLY.contains(keyword)) {
                throw CliException.usage(file + " line " + line + ": unknown keyword " + words[0]
                        + " (raidfive reads DEVICE and ARRAY lines)");
            }
        }
        return new ArrayConfig(file, List.copyOf(devices), List.copyOf(arrays));
    }

    private static Entry entry(Path file, Path base, String[] words, int line) {
        String token = null;
        String uuid = null;
        String name = null;
        List<String> devs = new ArrayList<>();
        for (int w = 1; w < words.length; w++) {
            String word = words[w];
            int eq = word.indexOf('=');
            if (eq < 0) {
                if (token != null) {
                    throw CliException.usage(
                            file + " line " + line + ": ARRAY names two arrays (" + token + ", " + word + ")");
                }
                token = word;
                continue;
            }
            String key = word.substring(0, eq).toLowerCase(Locale.ROOT);
            String value = word.substring(eq + 1);
            switch (key) {
                case "uuid" -> {
                    if (normalUuid(value).length() != 32 || !normalUuid(value).matches("[0-9a-f]+")) {
                        throw CliException.usage(file + " line " + line + ": UUID=" + value + " is not a UUID");
                    }
                    uuid = value;
                }
                case "name" -> name = value;
                case "devices" -> {
                    for (String d : value.split(",")) {
                        if (!d.isEmpty()) {
                            devs.add(absolute(base, d));
                        }
                    }
                }
                default -> {
                    // mdadm's other keys (metadata=, level=, num-devices=, spares=, ...) say nothing we use
                }
            }
        }
        if (token == null) {
            token = name != null ? name : uuid;
        }
        if (token == null) {
            throw CliException.usage(file + " line " + line + ": an ARRAY line needs a name or a UUID=");
        }
        if (uuid == null && name == null && devs.isEmpty()) {
            throw CliException.usage(file + " line " + line + ": ARRAY " + token + " says neither UUID=, name= nor "
                    + "devices=: nothing identifies its members");
        }
        return new Entry(token, uuid, name, List.copyOf(devs), line);
    }

    private static String absolute(Path base, String spec) {
        if (Members.isUri(spec) || spec.startsWith("/")) {
            return spec;
        }
        return base.resolve(spec).normalize().toString();
    }

    /** A UUID without separators, lower case: mdadm writes colons, others dashes. */
    static String normalUuid(String uuid) {
        return uuid.replace(":", "").replace("-", "").toLowerCase(Locale.ROOT);
    }

    /** The ARRAY entries {@code wanted} names (by name, short name, name= or UUID). */
    List<Entry> lookup(String wanted) {
        List<Entry> hits = new ArrayList<>();
        for (Entry e : arrays) {
            if (e.matches(wanted)) {
                hits.add(e);
            }
        }
        return hits;
    }
}
