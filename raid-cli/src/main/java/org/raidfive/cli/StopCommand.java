package org.raidfive.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.raidfive.disk.FileDisk;
import org.raidfive.md.Superblock;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid stop}: stops a running {@code raid serve}, as {@code mdadm --stop} stops an array:
 * the server is found by the members it holds (their locks name its pid) or by the Unix socket it
 * listens on, asked to stop (SIGTERM, which it handles as Ctrl-C: clients are told, in-flight
 * requests finish, the array is closed clean), and waited for.
 */
@Command(header = "Stop a running raid serve, like mdadm --stop.", name = "stop", mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {"Stop the raid serve that holds the array (named by its MEMBER files or --array NAME) or that "
                + "listens on --socket PATH: it is sent SIGTERM, finishes what is in flight, closes the array clean and "
                + "exits; this command waits for that (--timeout).",
                "Exit 0 stopped (the members are clean), 1 it did not stop in time or left the array dirty, "
                + "2 nothing to stop (no raid serve holds the array or listens there)."})
final class StopCommand extends Verb {
    @Option(names = "--socket", paramLabel = "PATH", description = "The Unix socket the server listens on.")
    Path socket;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "60",
            description = "How long to wait for the server to exit (default: ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Mixin
    ArraySource source;

    @Override
    public Integer call() throws Exception {
        List<String> members = List.of();
        long pid;
        String what;
        if (socket != null) {
            if (source.array != null || !source.given.isEmpty()) {
                throw CliException.usage("give --socket or the array (MEMBER files or --array), not both");
            }
            pid = listenerOf(socket);
            what = "the server on " + socket;
            if (pid < 0) {
                throw CliException.usage("no process listens on " + socket + ": nothing to stop");
            }
        } else {
            members = source.members();
            Members.checkDistinct(members);
            pid = -1;
            for (String m : members) {
                if (!Members.isNbd(m)) {
                    pid = FileDisk.holderPid(Members.existingFile(m));
                    if (pid >= 0) {
                        break;
                    }
                }
            }
            what = "the server of " + join(members);
            if (pid < 0) {
                throw CliException.usage("no process holds " + join(members) + ": the array is not served, nothing to "
                        + "stop");
            }
        }
        ProcessHandle handle = ProcessHandle.of(pid).orElse(null);
        if (handle == null) {
            throw CliException.usage(what + " (pid " + pid + ") has already exited");
        }
        String command = commandLine(handle);
        if (!command.matches("(^|.*\\s)raid(\\.jar)? serve(\\s.*|$)")) {
            throw CliException.usage(what + " is pid " + pid + " (" + command + "), not a raid serve: stop it there");
        }
        say("stopping pid " + pid + " (" + command + ")");
        if (!handle.destroy()) {
            throw CliException.usage("cannot signal pid " + pid + " (not ours?)");
        }
        try {
            handle.onExit().get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new CliException(ExitCode.PROBLEM, "pid " + pid + " did not exit within " + timeoutSeconds
                    + " s; it is still stopping (in-flight requests, a member that does not answer)");
        }
        int dirty = 0;
        String name = null;
        for (String m : members) {
            Superblock sb = ArraySource.superblockOrNull(m);
            if (sb != null) {
                name = sb.name();
                dirty += sb.isClean() ? 0 : 1;
            }
        }
        if (dirty > 0) {
            say("pid " + pid + " exited, but " + dirty + " member" + (dirty == 1 ? " says" : "s say") + " the array is "
                    + "dirty: run raid assemble " + source.again(members));
            return ExitCode.PROBLEM;
        }
        say("stopped " + (name != null ? name : what) + " (pid " + pid + " exited" + (members.isEmpty() ? ")"
                : "; the members are clean)"));
        return ExitCode.OK;
    }

    /** The command line as {@code raid ...} when it is the raid jar's; else as the system shows it. */
    private static String commandLine(ProcessHandle h) {
        Optional<String[]> args = h.info().arguments();
        String cmd = h.info().command().orElse("?");
        if (args.isEmpty()) {
            return cmd;
        }
        List<String> a = List.of(args.get());
        int jar = a.indexOf("-jar");
        if (jar >= 0 && jar + 1 < a.size() && a.get(jar + 1).endsWith("raid.jar")) {
            return "raid " + String.join(" ", a.subList(jar + 2, a.size()));
        }
        return cmd + " " + String.join(" ", a);
    }

    /**
     * The pid of the process listening on the Unix socket {@code path}: its inode from
     * {@code /proc/net/unix}, then the process with a descriptor on that inode; -1 if none.
     */
    static long listenerOf(Path path) throws IOException {
        String want = path.toAbsolutePath().normalize().toString();
        List<String> inodes = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/net/unix"), StandardCharsets.UTF_8)) {
            String[] f = line.trim().split("\\s+");
            // "Num RefCount Protocol Flags Type St Inode Path"; a listening socket has __SO_ACCEPTCON (0x10000).
            if (f.length >= 8 && f[7].equals(want) && (Long.parseLong(f[3], 16) & 0x10000) != 0) {
                inodes.add("socket:[" + f[6] + "]");
            }
        }
        if (inodes.isEmpty()) {
            return -1;
        }
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : (Iterable<Path>) procs.filter(p -> p.getFileName().toString().matches("\\d+"))::iterator) {
                try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
                    for (Path fd : (Iterable<Path>) fds::iterator) {
                        try {
                            if (inodes.contains(Files.readSymbolicLink(fd).toString())) {
                                return Long.parseLong(proc.getFileName().toString());
                            }
                        } catch (IOException gone) {
                            // the descriptor closed while we looked
                        }
                    }
                } catch (IOException notOurs) {
                    // another user's process, or it exited
                }
            }
        }
        return -1;
    }
}
