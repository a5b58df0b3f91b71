package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.raidfive.md.MdUuid;
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

    @Option(names = "--file", paramLabel = "PATH", description = "A counters file (raid serve says where it puts its own).")
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
                    s.filter(p -> p.getFileName().toString().endsWith(".counters")).sorted().forEach(all::add);
                }
            }
            return all;
        }
        List<String> members = source.members();
        Survey survey;
        try {
            survey = Survey.of(members);
        } catch (org.raidfive.md.SuperblockException e) {
            throw new CliException(ExitCode.USAGE, ErrorHandler.message(e), e);
        }
        String uuid = MdUuid.format(survey.top().setUuid());
        Path p = CountersFile.pathFor(dir, uuid);
        if (!Files.isRegularFile(p)) {
            throw new CliException(ExitCode.PROBLEM, "array " + survey.top().name() + " (" + uuid
                    + ") is not running with live counters: no " + p + " (raid serve publishes them)");
        }
        return List.of(p);
    }

    /** Where running arrays put their counters. */
    static Path directory() {
        return CountersFile.defaultDirectory();
    }
}
