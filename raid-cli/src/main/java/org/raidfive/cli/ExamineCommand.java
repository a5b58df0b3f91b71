package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.bench.Json;
import org.raidfive.disk.FileDisk;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid examine}: members' superblocks, read from the files alone (opened read-only), like
 * {@code mdadm --examine}; several files are shown one after another, as mdadm does.
 */
@Command(
        header = "Print members' superblocks, like mdadm --examine.",
        name = "examine",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Print each MEMBER's md v1.2 superblock field by field, as mdadm --examine does. Reads the "
                    + "files only (opened read-only).",
            "Exit 0 when every superblock is sound, 1 when one's checksum is wrong (its fields are shown with the "
                    + "expected checksum), 2 when a file is missing or holds no usable superblock."
        })
final class ExamineCommand extends Verb {
    @Option(names = "--json", description = "Print the fields as JSON (an object; an array of them for several files).")
    boolean json;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Option(
            names = {"--scan", "--brief"},
            description = "Print one ARRAY line per array the files belong to, as mdadm "
                    + "--examine --scan (with devices= under -v); --scan without MEMBER or --array looks at the config's DEVICE "
                    + "and ARRAY lines.")
    boolean scan;

    @Override
    public Integer call() throws Exception {
        if (scan) {
            return scan();
        }
        members = source.members();
        Members.checkDistinct(members);
        List<SuperblockFile.Read> reads = new ArrayList<>();
        for (String m : members) {
            try {
                reads.add(SuperblockFile.read(m));
            } catch (SuperblockException e) {
                throw CliException.usage(e.getMessage());
            }
        }
        if (json) {
            List<Object> list = new ArrayList<>();
            for (int i = 0; i < members.size(); i++) {
                list.add(ExamineReport.json(
                        members.get(i), reads.get(i), reads.get(i).memberBytes()));
            }
            out().print(Json.write(list.size() == 1 ? list.get(0) : list));
        } else {
            for (int i = 0; i < members.size(); i++) {
                out().print(ExamineReport.text(
                        members.get(i), reads.get(i), reads.get(i).memberBytes()));
            }
        }
        out().flush();
        for (String m : members) {
            String holder = Members.isNbd(m) ? null : FileDisk.holderOf(Members.path(m));
            if (holder != null) {
                say(m + " is in use by " + holder + ": the superblock shows what it last recorded, the live state "
                        + "is the holder's");
            }
        }
        int exit = ExitCode.OK;
        for (int i = 0; i < members.size(); i++) {
            SuperblockFile.Read read = reads.get(i);
            if (!read.checksumCorrect()) {
                say(members.get(i) + ": superblock checksum is wrong (" + Integer.toHexString(read.storedChecksum())
                        + ", expected " + Integer.toHexString(read.expectedChecksum()) + ")");
                exit = ExitCode.PROBLEM;
            }
        }
        return exit;
    }

    private int scan() throws Exception {
        List<String> files;
        if (source.array == null && source.given.isEmpty()) {
            ArrayConfig cfg = ArrayConfig.find(source.config);
            if (cfg == null) {
                throw CliException.usage("--scan without MEMBER looks at the config's DEVICE lines, and there is no "
                        + "config file (--config FILE, RAID_CONFIG, " + ArrayConfig.DEFAULT_PATHS + ")");
            }
            List<String> where = new ArrayList<>(cfg.devices());
            cfg.arrays().forEach(e -> where.addAll(e.devices()));
            files = ArraySource.expand(where);
        } else {
            files = source.members();
            Members.checkDistinct(files);
            for (String f : files) {
                if (ArraySource.superblockOrNull(f) == null) {
                    throw CliException.usage(f + " holds no usable md superblock");
                }
            }
        }
        List<ArraySource.Found> found = ArraySource.scan(files);
        if (found.isEmpty()) {
            throw CliException.usage("no md member found");
        }
        for (ArraySource.Found f : found) {
            out().println(ArraySource.arrayLine(f.top(), verbosity.level() > 0 ? f.specs() : null, false));
        }
        out().flush();
        return ExitCode.OK;
    }
}
