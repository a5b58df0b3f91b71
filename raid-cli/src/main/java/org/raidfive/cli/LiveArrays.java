package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.raidfive.disk.FileDisk;
import org.raidfive.md.MdUuid;
import org.raidfive.md.SuperblockException;
import org.raidfive.stats.CountersFile;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Which running arrays {@code raid stat} and {@code raid monitor} look at: the one made of the
 * MEMBER files (or {@code --array NAME}), found by its UUID; a counters file given with
 * {@code --file}; or, with none of these, every array that publishes counters in the run directory
 * ({@code $RAID_RUN_DIR}, else /dev/shm/raidfive), as /proc/mdstat lists every md array.
 */
final class LiveArrays {
    @Mixin
    ArraySource source;

    @Option(
            names = "--file",
            paramLabel = "PATH",
            description = "A counters file (raid serve says where it puts its own).")
    Path file;

    /** The counters files to read; empty when none runs. */
    List<Path> files() throws IOException {
        if (file != null) {
            if (source.array != null || !source.given.isEmpty()) {
                throw CliException.usage("give --file, or the members / --array, not both");
            }
            if (!Files.isRegularFile(file)) {
                throw CliException.usage(file + ": no such counters file");
            }
            return List.of(file);
        }
        Path dir = CountersFile.defaultDirectory();
        if (source.array == null && source.given.isEmpty()) {
            List<Path> all = new ArrayList<>();
            if (Files.isDirectory(dir)) {
                try (Stream<Path> s = Files.list(dir)) {
                    s.filter(p -> p.getFileName().toString().endsWith(".counters"))
                            .sorted()
                            .forEach(all::add);
                }
            }
            return all;
        }
        List<String> members = source.members();
        Survey survey = survey(members);
        String uuid = MdUuid.format(survey.top().setUuid());
        List<Path> live = servers(dir, uuid, members).stream().map(Server::file).toList();
        if (live.isEmpty()) {
            throw new CliException(
                    ExitCode.PROBLEM,
                    "array " + survey.top().name() + " (" + uuid
                            + ") is not running with live counters: no " + uuid
                            + ".PID.counters of a running process in "
                            + dir + " (raid serve publishes them)");
        }
        return live;
    }

    /** The members' superblocks read together; one that cannot be read is refused in one line (exit 2). */
    static Survey survey(List<String> members) throws IOException {
        try {
            return Survey.of(members);
        } catch (SuperblockException e) {
            throw new CliException(ExitCode.USAGE, ErrorHandler.message(e), e);
        }
    }

    /** A running raid serve as its counters file names it: verified by pid and process start time. */
    record Server(Path file, long pid, String arrayUuid, long socketInode) {}

    /**
     * The running servers that keep a counters file in {@code dir}, of the array {@code uuid} (of
     * any when null). Damaged, foreign and stale files are passed over: never a server to signal.
     */
    static List<Server> running(Path dir, String uuid) throws IOException {
        List<Server> out = new ArrayList<>();
        for (Path p : CountersFile.find(dir, uuid)) {
            try (CountersFile f = CountersFile.open(p)) {
                if (f.writerAlive() && (uuid == null || uuid.equals(f.arrayUuid()))) {
                    out.add(new Server(p, f.pid(), f.arrayUuid(), f.serverSocketInode()));
                }
            } catch (IllegalArgumentException | IOException | InternalError notOne) {
                // damaged, foreign or gone
            }
        }
        return out;
    }

    /**
     * The running servers of the array {@code uuid} in {@code dir}: the one whose process holds one
     * of {@code members} when there is one (copies of an array served twice each have their own
     * file), else every live one.
     */
    static List<Server> servers(Path dir, String uuid, List<String> members) throws IOException {
        List<Server> live = running(dir, uuid);
        for (String m : members) {
            if (!Members.isNbd(m)) {
                long holder = FileDisk.holderPid(Path.of(m));
                for (Server s : live) {
                    if (holder >= 0 && s.pid() == holder) {
                        return List.of(s);
                    }
                }
            }
        }
        return live;
    }

    /** Opens a counters file for reading; a damaged or foreign one is refused in one line (exit 2). */
    static CountersFile open(Path p) throws CliException {
        try {
            return CountersFile.open(p);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCode.USAGE, e.getMessage());
        } catch (IOException e) {
            throw new CliException(ExitCode.USAGE, p + ": " + ErrorHandler.message(e));
        } catch (InternalError e) {
            throw new CliException(ExitCode.USAGE, p + " was truncated while it was read");
        }
    }

    /** Where running arrays put their counters. */
    static Path directory() {
        return CountersFile.defaultDirectory();
    }
}
