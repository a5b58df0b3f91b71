package org.raidfive.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.disk.MemberDisk;

/**
 * The member disks one command opened, by the spec the operator typed. {@code Raid5Array}'s
 * member management takes the very {@link MemberDisk} object that was assembled, so commands
 * find it here by spec.
 */
final class MemberSet implements AutoCloseable {
    private final List<String> specs;
    private final List<MemberDisk> disks;

    MemberSet(List<String> specs, List<MemberDisk> disks) {
        this.specs = List.copyOf(specs);
        this.disks = new ArrayList<>(disks);
    }

    List<MemberDisk> disks() {
        return List.copyOf(disks);
    }

    List<String> specs() {
        return specs;
    }

    /** The disk opened for {@code spec} (any spelling of the same file), or a usage error. */
    MemberDisk find(String spec) throws IOException {
        int i = Members.indexOf(specs, spec);
        if (i < 0) {
            throw CliException.usage(spec + " is not one of the members given (" + String.join(", ", specs) + ")");
        }
        return disks.get(i);
    }

    @Override
    public void close() {
        closeQuietly(disks);
    }

    static void closeQuietly(List<MemberDisk> disks) {
        for (MemberDisk d : disks) {
            if (d == null) {
                continue; // create's missing slot
            }
            try {
                d.close();
            } catch (IOException e) {
                // closing a file we only read or already flushed: nothing to report
            }
        }
    }
}
