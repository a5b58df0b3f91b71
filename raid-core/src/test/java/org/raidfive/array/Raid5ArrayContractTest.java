package org.raidfive.array;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemberDiskContract;
import org.raidfive.disk.MemoryDisk;

/**
 * The {@link MemberDisk} contract over a whole array: an array is a disk (it can be a member, an NBD
 * export, the disk under AsyncIo), so it keeps every promise a member does, EOFException for a range
 * beyond its end included. Five memory members hold four chunks of data per stripe, so the array is
 * exactly the size the contract asks for.
 */
class Raid5ArrayContractTest extends MemberDiskContract {
    private static final int DATA_MEMBERS = 4;

    @Override
    protected MemberDisk create(long size) throws IOException {
        long perMember = size / DATA_MEMBERS;
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i <= DATA_MEMBERS; i++) {
            members.add(new MemoryDisk(perMember + (8L << 20), "contract-member-" + i));
        }
        Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(64 * 1024)
                        .memberDataBytes(perMember)
                        .assumeClean(true)
                        .build(),
                members);
        if (array.size() != size) {
            array.close();
            throw new IllegalStateException("array of " + array.size() + " bytes for a contract size of " + size);
        }
        return array;
    }

    /** Array I/O is in 512-byte sectors, as md's. */
    @Override
    protected int alignment() {
        return 512;
    }
}
