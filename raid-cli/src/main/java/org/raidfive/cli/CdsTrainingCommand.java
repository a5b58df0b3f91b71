package org.raidfive.cli;

import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * A hidden verb the build runs once, under {@code -XX:ArchiveClassesAtExit}, to make the
 * class-data-sharing archive the launcher starts every command with ({@code target/raid.jsa}): it
 * runs the operator's everyday commands in this JVM on small files in DIR, output discarded, so
 * the classes they load (picocli's model of every verb, the superblock code, the engine) are in the
 * archive. Each verb is run as {@link RaidCommand#main} would run it.
 */
@Command(
        name = "cds-training",
        hidden = true,
        mixinStandardHelpOptions = true,
        description = "Run the everyday commands on scratch files in DIR (for the build's class-data archive).")
final class CdsTrainingCommand extends Verb {
    @Parameters(paramLabel = "DIR", description = "Where to make a scratch directory (removed afterwards).")
    Path parent;

    private Path dir;

    @Override
    public Integer call() throws Exception {
        Files.createDirectories(parent);
        dir = Files.createTempDirectory(parent, "run");
        try {
            return train();
        } finally {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private int train() throws Exception {
        String m0 = file("t0");
        String m1 = file("t1");
        String m2 = file("t2");
        String sp = file("t3");
        String b0 = file("u0");
        String b1 = file("u1");
        String b2 = file("u2");
        String in = file("in.bin");
        Files.write(Path.of(in), new byte[256 << 10]);
        List<String[]> steps = List.of(
                new String[] {"--help"},
                new String[] {"--version"},
                new String[] {"create", "--size", "8M", "--chunk", "64K", "--name", "cds:train", m0, m1, m2},
                new String[] {"create", "--size", "8M", "--chunk", "64K", "--bitmap", "internal", b0, b1, b2},
                new String[] {"write", "--offset", "0", "--input", in, m0, m1, m2},
                new String[] {"read", "--offset", "0", "--length", "256K", "--output", file("out.bin"), m0, m1, m2},
                new String[] {"examine", m0},
                new String[] {"examine", "--json", m0, m1},
                new String[] {"examine", "--scan", m0, b0},
                new String[] {"examine-bitmap", b0},
                new String[] {"detail", m0, m1, m2},
                new String[] {"detail", "--json", b0, b1, b2},
                new String[] {"assemble", m0, m1, m2},
                new String[] {"assemble", "--scan", dir.toString()},
                new String[] {"fail", "--member", m1, m0, m1, m2},
                new String[] {"add", "--spare", sp, m0, m2},
                new String[] {"rebuild", m0, m2, sp},
                new String[] {"check", m0, m2, sp},
                new String[] {"grow", "--bitmap", "none", b0, b1, b2},
                new String[] {"stop", m0, m2, sp},
                new String[] {"zero-superblock", b0, b1, b2},
                new String[] {"detail", "--help"});
        PrintWriter nowhere = new PrintWriter(Writer.nullWriter());
        List<String> failed = new ArrayList<>();
        for (String[] args : steps) {
            CommandLine cmd = RaidCommand.newCommandLine();
            cmd.setOut(nowhere);
            cmd.setErr(nowhere);
            int exit = cmd.execute(args);
            if (exit != ExitCode.OK && !args[0].equals("stop")) { // nothing serves: stop refuses, as it should
                failed.add(String.join(" ", args) + " (exit " + exit + ")");
            }
        }
        if (!failed.isEmpty()) {
            say("steps that did not succeed (the archive still holds what they loaded): " + String.join("; ", failed));
            return ExitCode.PROBLEM;
        }
        return ExitCode.OK;
    }

    private String file(String name) {
        return dir.resolve(name).toString();
    }
}
