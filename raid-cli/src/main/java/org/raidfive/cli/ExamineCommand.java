package org.raidfive.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code raid examine}: one member's superblock, read from the file alone, like {@code mdadm --examine}. */
@Command(header = "Print one member's superblock, like mdadm --examine.", name = "examine", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        description = {"Print one member's md v1.2 superblock field by field, as mdadm --examine does. Reads the "
                + "file only (opened read-only).",
                "Exit 0 when the superblock is sound, 1 when only its checksum is wrong (the fields are shown with "
                + "the expected checksum), 2 when the file is missing or holds no usable superblock."})
final class ExamineCommand extends Verb {
    @Option(names = "--json", description = "Print the fields as JSON.")
    boolean json;

    @Parameters(paramLabel = "MEMBER", arity = "1", description = "A member file.")
    String member;

    @Override
    public Integer call() throws Exception {
        SuperblockFile.Read read = SuperblockFile.read(Members.existingFile(member), member);
        out().print(json ? Json.write(ExamineReport.json(member, read)) : ExamineReport.text(member, read));
        out().flush();
        if (!read.checksumCorrect()) {
            say(member + ": superblock checksum is wrong (" + Integer.toHexString(read.storedChecksum())
                    + ", expected " + Integer.toHexString(read.expectedChecksum()) + ")");
            return ExitCode.PROBLEM;
        }
        return ExitCode.OK;
    }
}
