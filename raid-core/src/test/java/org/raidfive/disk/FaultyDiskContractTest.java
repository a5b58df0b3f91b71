package org.raidfive.disk;

/** The member contract over {@link FaultyDisk} with no fault set: a wrapper must be a faithful disk. */
class FaultyDiskContractTest extends MemberDiskContract {
    @Override
    protected MemberDisk create(long size) {
        return new FaultyDisk(new MemoryDisk(size));
    }
}
