package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code raid examine}: members' superblocks, read from the files alone (opened read-only), like
 * {@code mdadm --examine}; several files are shown one after another, as mdadm does.
 */
@Command(header = "Print members' superblocks, like mdadm --examine.", name = "examine",
        mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        description = {"Print each MEMBER's md v1.2 superblock field by field, as mdadm --examine does. Reads the "
                + "files only (opened read-only).",
                "Exit 0 when every superblock is sound, 1 when one's checksum is wrong (its fields are shown with the "
                + "expected checksum), 2 when a file is missing or holds no usable superblock."})
final class ExamineCommand extends Verb {
    @Option(names = "--json", description = "Print the fields as JSON (an object; an array of them for several files).")
    boolean json;

    @Parameters(paramLabel = "MEMBER", arity = "1..*", description = "Member files.")
    List<String> members;

    @Override
    public Integer call() throws Exception {
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
                list.add(ExamineReport.json(members.get(i), reads.get(i), reads.get(i).memberBytes()));
            }
            out().print(Json.write(list.size() == 1 ? list.get(0) : list));
        } else {
            for (int i = 0; i < members.size(); i++) {
                out().print(ExamineReport.text(members.get(i), reads.get(i), reads.get(i).memberBytes()));
            }
        }
        out().flush();
        for (String m : members) {
            String holder = Members.isNbd(m) ? null : org.raidfive.disk.FileDisk.holderOf(Members.path(m));
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
}
