package org.raidfive.array;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * A separate process for {@link MemberOwnershipTest}: assembles the array of the member files given
 * (read-write, or read-only with {@code ro}), prints {@code HOLDING}, and keeps it open until
 * killed or until stdin closes.
 */
public final class ArrayHolder {
    private ArrayHolder() {}

    public static void main(String[] args) throws Exception {
        boolean readOnly = args[0].equals("ro");
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            disks.add(readOnly ? FileDisk.openReadOnly(Path.of(args[i])) : FileDisk.open(Path.of(args[i])));
        }
        AssembleOptions options = AssembleOptions.DEFAULT.withReadOnly(readOnly).withStartSync(false);
        try (Raid5Array array = Raid5Array.assemble(disks, options)) {
            System.out.println("HOLDING " + ProcessHandle.current().pid());
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold until the parent closes our stdin (or kills us)
            }
        }
        System.out.println("CLOSED");
    }
}
