package org.raidfive.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import org.raidfive.array.ArrayConfigException;
import org.raidfive.array.ArrayFailedException;
import org.raidfive.array.ArrayStateException;
import org.raidfive.disk.MemberInUseException;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * Turns every failure into one line on stderr, {@code raid <verb>: <message>}, and an exit code:
 * 2 for bad input (usage, a member list the engine refuses, a refused operation), 1 for an array
 * that failed or an I/O error on the way. A stack trace only with {@code -v}.
 */
final class ErrorHandler implements IParameterExceptionHandler, IExecutionExceptionHandler {

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        err.println(name + ": " + ex.getMessage() + " (see '" + name + " --help')");
        if (verbosity(cmd) > 0) {
            ex.printStackTrace(err);
        }
        err.flush();
        return ExitCode.USAGE;
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parseResult) {
        PrintWriter err = cmd.getErr();
        Throwable t = ex instanceof UncheckedIOException u && u.getCause() != null ? u.getCause() : ex;
        err.println(cmd.getCommandSpec().qualifiedName() + ": " + message(t));
        if (verbosity(cmd) > 0) {
            t.printStackTrace(err);
        }
        err.flush();
        return exitCode(t);
    }

    static int exitCode(Throwable t) {
        if (t instanceof CliException c) {
            return c.exitCode();
        }
        if (t instanceof ArrayFailedException) {
            return ExitCode.PROBLEM;
        }
        if (t instanceof ArrayConfigException
                || t instanceof ArrayStateException
                || t instanceof FileSystemException
                || t instanceof SuperblockException
                || t instanceof MemberUnreachableException
                || t instanceof MemberInUseException
                || t instanceof IllegalArgumentException
                || t instanceof IllegalStateException) {
            return ExitCode.USAGE;
        }
        return ExitCode.PROBLEM;
    }

    static String message(Throwable t) {
        if (t instanceof NoSuchFileException e) {
            return e.getReason() == null ? e.getFile() + ": no such file" : e.getMessage();
        }
        if (t instanceof AccessDeniedException e) {
            return e.getFile() + ": permission denied";
        }
        if (t instanceof FileSystemException e) {
            return e.getMessage();
        }
        String m = t.getMessage();
        if (t instanceof CliException
                || t instanceof IOException
                || t instanceof SuperblockException
                || t instanceof IllegalArgumentException
                || t instanceof IllegalStateException) {
            return m == null ? t.toString() : m;
        }
        return "internal error: " + t + " (run with -v for the stack trace)";
    }

    private static int verbosity(CommandLine cmd) {
        Object root = cmd.getCommandSpec().root().userObject();
        return root instanceof RaidCommand r ? r.verbosity.level() : 0;
    }
}
