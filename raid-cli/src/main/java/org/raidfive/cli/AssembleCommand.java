package org.raidfive.cli;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArrayStatus;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid assemble}: what {@code mdadm --assemble} reports, for the members given: which slot
 * each one is, which are left out as non-fresh, and, with {@code --force}, which members that failed
 * together are taken back (their events forced up, the array marked dirty for a resync). There is
 * no daemon: the array is assembled, its superblocks written, and closed clean again.
 */
@Command(
        header = "Assemble an array from its members, like mdadm --assemble.",
        name = "assemble",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Assemble the array the MEMBER files make up and report what was found, like mdadm --assemble: "
                    + "each member's slot, members left out because they failed earlier or lag the others.",
            "--force brings back an array that failed because members failed together (a full file system, a "
                    + "passing fault): the most recently failed members are taken back (md's rule), their events "
                    + "brought up to the array's, and the array is marked dirty so that raid rebuild resyncs its parity. "
                    + "An array that is dirty and degraded is marked clean, as mdadm --assemble --force does: forced once.",
            "raidfive keeps no array running: the array is closed again at once, clean, and any raid command can "
                    + "then use the members.",
            "Exit 0 whole, 1 degraded, 2 refused (nothing written)."
        })
final class AssembleCommand extends Verb {
    @Option(
            names = "--force",
            description = "Take back members that failed together, as mdadm --assemble --force; "
                    + "also start an array that is dirty and degraded (the RAID-5 write hole) and mark it clean.")
    boolean force;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Option(
            names = "--scan",
            description = "Find arrays by their members' superblocks: in the MEMBER words taken as "
                    + "files, directories or globs (quote them), or without any in the config's DEVICE and ARRAY lines; "
                    + "assemble each and print its ARRAY line (with devices=) on stdout, for the config file.")
    boolean scan;

    @Override
    public Integer call() throws Exception {
        if (scan) {
            return scan();
        }
        members = source.members();
        return assemble(members);
    }

    private int scan() throws Exception {
        if (source.array != null) {
            throw CliException.usage("--scan finds every array; --array names one: give one or the other");
        }
        List<String> where = new ArrayList<>(source.given);
        String looked = String.join(" ", where);
        if (where.isEmpty()) {
            ArrayConfig cfg = ArrayConfig.find(source.config);
            if (cfg == null) {
                throw CliException.usage("--scan with nothing to scan: give directories, globs or files, or a config "
                        + "file with DEVICE lines (--config FILE, RAID_CONFIG, " + ArrayConfig.DEFAULT_PATHS + ")");
            }
            where.addAll(cfg.devices());
            cfg.arrays().forEach(e -> where.addAll(e.devices()));
            looked = "the DEVICE and ARRAY lines of " + cfg.file();
        }
        List<ArraySource.Found> found = ArraySource.scan(ArraySource.expand(where));
        if (found.isEmpty()) {
            throw CliException.usage("no md member found in " + looked);
        }
        int exit = ExitCode.OK;
        for (ArraySource.Found f : found) {
            int code;
            try {
                code = assemble(f.specs());
            } catch (Exception e) {
                say(ErrorHandler.message(e));
                code = ErrorHandler.exitCode(e);
            }
            out().println(ArraySource.arrayLine(f.top(), f.specs(), true));
            out().flush();
            exit = Math.max(exit, code);
        }
        return exit;
    }

    private int assemble(List<String> members) throws Exception {
        Members.checkDistinct(members);
        Survey survey;
        try {
            survey = Survey.of(members);
        } catch (SuperblockException e) {
            throw CliException.usage(e.getMessage());
        }
        Superblock top = survey.top();
        for (Survey.Entry e : survey.entries()) {
            int role = e.sb().role();
            String what = e.verdict() == Survey.Verdict.FOREIGN
                    ? "is not a member of " + top.name() + ": " + e.why()
                    : "is identified as a member of " + top.name() + ", "
                            + (role < Superblock.ROLE_MAX ? "slot " + role : Superblock.describeRole(role))
                            + (e.verdict() == Survey.Verdict.STALE ? " (" + e.why() + ")" : "");
            say(e.spec() + " " + what + ".");
        }
        ArrayStatus s;
        boolean pending;
        try (ArraySession session = session(members, ArraySession.READ_WRITE.withForce(force))) {
            s = session.array().status();
            pending = s.resyncOffset() != Long.MAX_VALUE;
        }
        List<String> kept = new ArrayList<>(members);
        say(s.name() + " has been started with " + s.activeMembers() + " drive" + (s.activeMembers() == 1 ? "" : "s")
                + " (out of " + s.raidDisks() + ")"
                + (s.spareMembers() > 0 ? " and " + s.spareMembers() + " spare" : "")
                + "; closed again " + (s.failed() ? "(FAILED)" : "clean") + ": raidfive keeps no array running");
        if (pending) {
            say("parity needs a resync: raid rebuild " + source.again(kept));
        }
        return s.failed() ? ExitCode.USAGE : s.degraded() ? ExitCode.PROBLEM : ExitCode.OK;
    }
}
