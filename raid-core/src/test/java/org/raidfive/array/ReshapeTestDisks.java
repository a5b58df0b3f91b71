package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/** What the reshape tests share: members that outlive their arrays, an injected crash, whole-member copies. */
final class ReshapeTestDisks {
    private ReshapeTestDisks() {}

    /** A crash injected at a reshape's test hook: the reshape stops there, as a killed process would. */
    static final class InjectedCrash extends IOException {
        private static final long serialVersionUID = 1L;

        InjectedCrash(String what) {
            super(what);
        }
    }

    /** A memory member that outlives the arrays opened on it (closing an array closes its members). */
    static final class Kept extends ForwardingDisk {
        Kept(long size, String name) {
            super(new MemoryDisk(size, name));
        }

        @Override
        public void close() {}
    }

    /** Every byte of each disk, to show a refusal wrote nothing. */
    static byte[][] snapshot(List<MemberDisk> disks) throws IOException {
        byte[][] out = new byte[disks.size()][];
        for (int i = 0; i < out.length; i++) {
            MemberDisk d = disks.get(i);
            ByteBuffer b = ByteBuffer.allocate((int) d.size());
            d.read(0, b, 0, (int) d.size());
            out[i] = b.array();
        }
        return out;
    }
}
