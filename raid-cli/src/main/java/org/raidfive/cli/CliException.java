package org.raidfive.cli;

/**
 * A refusal or failure the CLI itself detects, with the exit code to leave with. The message is
 * printed as one line, {@code raid <verb>: <message>}, without a stack trace.
 */
final class CliException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int exitCode;

    CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /** Bad input: exit code 2. */
    static CliException usage(String message) {
        return new CliException(ExitCode.USAGE, message);
    }

    int exitCode() {
        return exitCode;
    }
}
