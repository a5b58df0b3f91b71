package org.raidfive.cli;

import java.io.IOException;
import java.util.List;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.MemberDisk;

/**
 * One command's array: the member files opened and assembled, closed cleanly at the end (which
 * marks the array clean on disk unless it was opened read-only). Close is idempotent and safe to
 * call from a shutdown hook while the command's thread also closes.
 */
final class ArraySession implements AutoCloseable {
    /** Assembly for commands that only read: nothing is written to any member, no pass starts. */
    static final AssembleOptions READ_ONLY =
            AssembleOptions.DEFAULT.withReadOnly(true).withStartSync(false);
    /** Assembly for commands that change the array; passes start only when a command asks. */
    static final AssembleOptions READ_WRITE = AssembleOptions.DEFAULT.withStartSync(false);

    private final MemberSet members;
    private final Raid5Array array;
    private boolean closed;

    private ArraySession(MemberSet members, Raid5Array array) {
        this.members = members;
        this.array = array;
    }

    static ArraySession readOnly(List<String> specs) throws IOException {
        return assemble(specs, READ_ONLY);
    }

    static ArraySession readWrite(List<String> specs) throws IOException {
        return assemble(specs, READ_WRITE);
    }

    static ArraySession assemble(List<String> specs, AssembleOptions options) throws IOException {
        MemberSet set = Members.openAll(specs, options.readOnly());
        try {
            return new ArraySession(set, Raid5Array.assemble(set.disks(), options));
        } catch (IOException | RuntimeException e) {
            set.close();
            throw e;
        }
    }

    Raid5Array array() {
        return array;
    }

    /** The disk assembled for {@code spec}, as member management needs it. */
    MemberDisk disk(String spec) throws IOException {
        return members.find(spec);
    }

    List<String> specs() {
        return members.specs();
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            array.close();
        } finally {
            members.close();
        }
    }
}
