package org.raidfive.cli;

import picocli.AutoComplete;
import picocli.CommandLine.Command;

/** {@code raid completion}: a bash completion script for every verb and option. */
@Command(header = "Print a bash completion script.", name = "completion", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        description = {"Print a bash completion script for raid. Use: source <(raid completion)"})
final class CompletionCommand extends Verb {
    @Override
    public Integer call() {
        out().print(AutoComplete.bash("raid", spec.root().commandLine()));
        out().flush();
        return ExitCode.OK;
    }
}
