package org.raidfive.bench;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.raidfive.disk.MemberDisk;

/**
 * The {@code raw-members} reference: RAID-0 over the members (chunk {@code c}, no parity, no
 * locks, no counters), so one job's I/O lands on all of them as the array's would. What it reaches
 * is the aggregate bandwidth of the members themselves.
 */
final class StripedDisks implements MemberDisk {
    private final MemberDisk[] disks;
    private final int chunkShift;
    private final long chunkMask;
    private final long size;

    StripedDisks(List<? extends MemberDisk> members, int chunk) {
        this.disks = members.toArray(new MemberDisk[0]);
        this.chunkShift = Integer.numberOfTrailingZeros(chunk);
        this.chunkMask = chunk - 1;
        long smallest = Long.MAX_VALUE;
        for (MemberDisk d : disks) {
            smallest = Math.min(smallest, d.size());
        }
        this.size = (smallest >>> chunkShift << chunkShift) * disks.length;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
        transfer(position, dst, dstOffset, length, false);
    }

    @Override
    public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
        transfer(position, src, srcOffset, length, true);
    }

    private void transfer(long position, ByteBuffer buf, int offset, int length, boolean write) throws IOException {
        if (position < 0 || length < 0 || position > size - length) {
            throw new EOFException("striped I/O at " + position + " length " + length + " outside " + size);
        }
        while (length > 0) {
            long chunk = position >>> chunkShift;
            int inChunk = (int) (position & chunkMask);
            int n = (int) Math.min(length, chunkMask + 1 - inChunk);
            MemberDisk d = disks[(int) (chunk % disks.length)];
            long at = (chunk / disks.length << chunkShift) + inChunk;
            if (write) {
                d.write(at, buf, offset, n);
            } else {
                d.read(at, buf, offset, n);
            }
            position += n;
            offset += n;
            length -= n;
        }
    }

    @Override
    public void flush() throws IOException {
        for (MemberDisk d : disks) {
            d.flush();
        }
    }

    @Override
    public String name() {
        return "raid0 of " + disks.length;
    }

    @Override
    public void close() throws IOException {
        for (MemberDisk d : disks) {
            d.close();
        }
    }
}
