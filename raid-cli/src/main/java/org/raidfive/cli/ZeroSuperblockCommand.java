package org.raidfive.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.disk.ClaimMode;
import org.raidfive.disk.DiskClaim;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code raid zero-superblock}: erases the md v1.2 superblock of each file, as
 * {@code mdadm --zero-superblock} does, so the file is no longer a member of anything. Every file is
 * checked and claimed before the first is written: a file some array holds (a running
 * {@code raid serve}, or any process holding its lock) or one without a superblock refuses the
 * whole command.
 */
@Command(
        header = "Erase members' md superblocks, like mdadm --zero-superblock.",
        name = "zero-superblock",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Overwrite the md v1.2 superblock of each FILE with zeros (the 4 KiB block at 4 KiB), as mdadm "
                    + "--zero-superblock does: the file is no longer a member of any array. Data, bitmap, bad-block and "
                    + "log areas are left as they are (so raid create still asks for --force to reuse the file).",
            "Refused, with nothing written to any file: a file in use by an array (raid serve, or another "
                    + "process holding it), a file that holds no md superblock, a superblock that does not validate "
                    + "(unless --force).",
            "Exit 0 done, 2 refused."
        })
final class ZeroSuperblockCommand extends Verb {
    @Option(
            names = "--force",
            description = "Also erase a superblock that does not validate (a wrong checksum), "
                    + "and pass over files that hold none instead of refusing, as mdadm --force does.")
    boolean force;

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "Member files (or NBD exports).")
    List<String> files;

    @Override
    public Integer call() throws Exception {
        Members.checkDistinct(files);
        List<String> targets = new ArrayList<>();
        List<String> was = new ArrayList<>();
        for (String f : files) {
            Members.checkExists(f);
            String holder = Members.isNbd(f) ? null : FileDisk.holderOf(Members.path(f));
            if (holder != null) {
                throw CliException.usage(f + " is in use by " + holder + ": stop that array first (raid stop)");
            }
            String what = describe(f);
            if (what == null) {
                say(f + " holds no md superblock: left as it is");
                continue;
            }
            targets.add(f);
            was.add(what);
        }
        List<MemberDisk> disks = new ArrayList<>();
        List<DiskClaim> claims = new ArrayList<>();
        try {
            for (String f : targets) {
                MemberDisk d = Members.open(f);
                disks.add(d);
                claims.add(d.claim(ClaimMode.EXCLUSIVE, "raid zero-superblock"));
            }
            ByteBuffer zeros = ByteBuffer.allocate(Superblock.MAX_SUPERBLOCK_BYTES);
            for (int i = 0; i < disks.size(); i++) {
                MemberDisk d = disks.get(i);
                d.write(Superblock.SUPERBLOCK_OFFSET, zeros.clear(), 0, zeros.capacity());
                d.flush();
                say("zeroed the md superblock of " + targets.get(i) + " (it was " + was.get(i) + ")");
            }
        } finally {
            claims.forEach(DiskClaim::close);
            MemberSet.closeQuietly(disks);
        }
        return ExitCode.OK;
    }

    /** What the file's superblock made it, or null (with --force) for a file that holds none. */
    private String describe(String f) throws Exception {
        try {
            Superblock sb = SuperblockFile.readValid(f);
            return ExamineReport.role(sb) + " of " + sb.name() + ", UUID " + MdUuid.format(sb.setUuid());
        } catch (SuperblockException e) {
            if (!hasMagic(f)) {
                if (force) {
                    return null;
                }
                throw CliException.usage(f + " holds no md superblock: nothing to zero (--force passes over it)");
            }
            if (!force) {
                throw CliException.usage(
                        f + ": its md superblock does not validate (" + e.getMessage() + "); --force erases it anyway");
            }
            return "a superblock that did not validate";
        }
    }

    /** md's magic at the v1.2 superblock's place: something md-like is there, even if it does not validate. */
    private static boolean hasMagic(String f) throws IOException {
        try (MemberDisk d = Members.open(f, true)) {
            if (d.size() < Superblock.SUPERBLOCK_OFFSET + 4) {
                return false;
            }
            ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            d.read(Superblock.SUPERBLOCK_OFFSET, b, 0, 4);
            return b.getInt(0) == Superblock.MD_SB_MAGIC;
        }
    }
}
