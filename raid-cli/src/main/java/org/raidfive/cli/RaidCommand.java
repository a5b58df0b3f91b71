package org.raidfive.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code raid}: drives RAID-5 arrays of member files from a shell, in mdadm's spirit. There is no
 * daemon: each command assembles the array from the member files it is given (in any order), does
 * its work and closes the array cleanly, so the files are the whole state.
 *
 * <p>Every verb is listed once, in {@code subcommands} below; a new one is added there. Member
 * specs (paths and NBD URIs) become disks in one place, {@link Members}.
 */
@Command(
        name = "raid",
        mixinStandardHelpOptions = true,
        versionProvider = ManifestVersion.class,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Create, inspect, degrade, rebuild and scrub RAID-5 arrays of member files (Linux md v1.2 "
                    + "format), and move data in and out of them.",
            "",
            "Each command assembles the array from the MEMBER files given (any order), does its work and closes "
                    + "it cleanly: the files are the whole state. A MEMBER may also be an NBD export "
                    + "(nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH); raid serve exports an array over NBD."
        },
        subcommands = {
            CreateCommand.class,
            AssembleCommand.class,
            DetailCommand.class,
            ExamineCommand.class,
            WriteCommand.class,
            ReadCommand.class,
            FailCommand.class,
            GrowCommand.class,
            ReAddCommand.class,
            ZeroSuperblockCommand.class,
            ExamineBitmapCommand.class,
            RemoveCommand.class,
            AddCommand.class,
            ReplaceCommand.class,
            RebuildCommand.class,
            CheckCommand.class,
            RepairCommand.class,
            DemoCommand.class,
            BenchCommand.class,
            ServeCommand.class,
            StopCommand.class,
            StatCommand.class,
            MonitorCommand.class,
            CompletionCommand.class,
            CdsTrainingCommand.class,
            CommandLine.HelpCommand.class,
        },
        footer = {
            "",
            "Exit codes: 0 ok; 1 degraded, failed, or parity mismatches found; 2 bad input or a refused "
                    + "operation (nothing was written); detail: 0 healthy, 1 degraded, 2 failed, 4 cannot read; "
                    + "130 interrupted.",
            "Sizes take K, M, G suffixes (powers of 1024)."
        })
public final class RaidCommand implements Callable<Integer> {
    @Mixin
    Verbosity verbosity;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine()
                .getErr()
                .println("raid: a command is needed, e.g. raid detail MEMBER... (see 'raid --help')");
        return ExitCode.USAGE;
    }

    /** The whole command line, with raidfive's error handling and logging; tests use this too. */
    public static CommandLine newCommandLine() {
        RaidCommand root = new RaidCommand();
        CommandLine cmd = new CommandLine(root);
        ErrorHandler errors = new ErrorHandler();
        cmd.setParameterExceptionHandler(errors);
        cmd.setExecutionExceptionHandler(errors);
        cmd.setCaseInsensitiveEnumValuesAllowed(true);
        // Every verb answers --version from the jar manifest, as the top-level command does.
        ManifestVersion version = new ManifestVersion();
        for (CommandLine sub : cmd.getSubcommands().values()) {
            sub.getCommandSpec().versionProvider(version);
        }
        cmd.setExecutionStrategy(parseResult -> {
            Verbosity.apply(root.verbosity.level());
            return new CommandLine.RunLast().execute(parseResult);
        });
        return cmd;
    }

    public static void main(String[] args) {
        int code = newCommandLine().execute(args);
        System.out.flush();
        System.exit(code);
    }
}
