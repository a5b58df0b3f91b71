package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.raidfive.disk.FileDisk;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid stop}: stops a running {@code raid serve}, as {@code mdadm --stop} stops an array:
 * the server is found by the members it holds (their locks name its pid) or by the Unix socket it
 * listens on (its inode), and verified before it is signalled: its counters file in the run
 * directory names that pid, with the process's start time, the array's UUID and the socket's
 * inode; a command line is never trusted. It is asked to stop (SIGTERM, which it handles as
 * Ctrl-C: clients are told, in-flight requests finish, the array is closed clean), and waited for.
 */
@Command(
        header = "Stop a running raid serve, like mdadm --stop.",
        name = "stop",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Stop the raid serve that holds the array (named by its MEMBER files or --array NAME) or that "
                    + "listens on --socket PATH: it is sent SIGTERM, finishes what is in flight, closes the array clean and "
                    + "exits; this command waits for that (--timeout).",
            "Only a process verified to be a raid serve of that array is signalled: its live counters file (in "
                    + "the run directory, RAID_RUN_DIR) names its pid and start time, the array's UUID and the socket.",
            "Exit 0 stopped (the members are clean), 1 it did not stop in time or left the array dirty, "
                    + "2 nothing to stop (no verified raid serve holds the array or listens there)."
        })
final class StopCommand extends Verb {
    @Option(names = "--socket", paramLabel = "PATH", description = "The Unix socket the server listens on.")
    Path socket;

    @Option(
            names = "--timeout",
            paramLabel = "SECONDS",
            defaultValue = "60",
            description = "How long to wait for the server to exit (default: ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Mixin
    ArraySource source;

    @Override
    public Integer call() throws Exception {
        List<String> members = List.of();
        long pid;
        String what;
        Path dir = LiveArrays.directory();
        if (socket != null) {
            if (source.array != null || !source.given.isEmpty()) {
                throw CliException.usage("give --socket or the array (MEMBER files or --array), not both");
            }
            Path path = socket.toAbsolutePath().normalize();
            what = "the server on " + path;
            long inode;
            try {
                inode = (Long) Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                throw CliException.usage("no socket at " + path + ": nothing to stop");
            }
            pid = LiveArrays.running(dir, null).stream()
                    .filter(s -> s.socketInode() == inode)
                    .mapToLong(LiveArrays.Server::pid)
                    .findFirst()
                    .orElse(-1);
            if (pid < 0) {
                throw CliException.usage("no running raid serve names the socket " + path + " (inode " + inode + ") in "
                        + dir + ": nothing to stop (a server of another run directory, RAID_RUN_DIR?)");
            }
        } else {
            members = source.members();
            Members.checkDistinct(members);
            long holder = -1;
            for (String m : members) {
                if (!Members.isNbd(m)) {
                    holder = FileDisk.holderPid(Members.existingFile(m));
                    if (holder >= 0) {
                        break;
                    }
                }
            }
            what = "the server of " + join(members);
            if (holder < 0) {
                throw CliException.usage(
                        "no process holds " + join(members) + ": the array is not served, nothing to " + "stop");
            }
            Survey survey = LiveArrays.survey(members);
            String uuid = MdUuid.format(survey.top().setUuid());
            long held = holder;
            pid = LiveArrays.running(dir, uuid).stream().anyMatch(s -> s.pid() == held) ? holder : -1;
            if (pid < 0) {
                throw CliException.usage(join(members) + " is held by pid " + holder + ", which is not a raid serve of "
                        + "array " + survey.top().name() + " that this command can verify (no counters file in " + dir
                        + " names it with this array's UUID): not signalled; stop it there");
            }
        }
        ProcessHandle handle = ProcessHandle.of(pid).orElse(null);
        if (handle == null) {
            throw CliException.usage(what + " (pid " + pid + ") has already exited");
        }
        String command = commandLine(handle);
        say("stopping pid " + pid + " (" + command + ")");
        if (!handle.destroy()) {
            throw CliException.usage("cannot signal pid " + pid + " (not ours?)");
        }
        try {
            handle.onExit().get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new CliException(
                    ExitCode.PROBLEM,
                    "pid " + pid + " did not exit within " + timeoutSeconds
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
        say("stopped " + (name != null ? name : what) + " (pid " + pid + " exited"
                + (members.isEmpty() ? ")" : "; the members are clean)"));
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
}
