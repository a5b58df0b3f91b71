package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.raidfive.counter.CounterMode;
import org.raidfive.counter.PercpuRef;
import org.raidfive.disk.DirectAccessDisk;
import org.raidfive.disk.MemberDisk;

/**
 * One member disk of an array: its storage, role, state and in-flight counter ({@code nr_pending}).
 *
 * <p>Offsets given to {@link #readData}/{@link #writeData} are relative to the data area
 * (md's data_offset is added here). {@code state} and {@code recoveryOffset} are volatile: the I/O
 * path reads them without a lock; they change under the array's metadata lock (state) or the
 * stripe lock of the stripe being rebuilt (recovery offset), and the recovery offset only grows
 * while the member keeps its role.
 */
final class Member {
    final MemberDisk disk;
    final long dataOffsetBytes;
    final PercpuRef nrPending;
    final AtomicInteger correctedReadErrors = new AtomicInteger();

    volatile int devNumber;
    volatile byte[] deviceUuid;
    volatile int slot;
    volatile MemberState state;
    volatile long recoveryOffset;

    Member(MemberDisk disk, long dataOffsetBytes, int devNumber, byte[] deviceUuid, int slot,
           MemberState state, long recoveryOffset, CounterMode counterMode) {
        this.disk = disk;
        this.dataOffsetBytes = dataOffsetBytes;
        this.devNumber = devNumber;
        this.deviceUuid = deviceUuid;
        this.slot = slot;
        this.state = state;
        this.recoveryOffset = recoveryOffset;
        this.nrPending = PercpuRef.inflightCounter(counterMode);
    }

    /** True when the bytes of the stripe at {@code memberOffset} on this member can be trusted. */
    boolean readable(long memberOffset) {
        MemberState s = state;
        return s == MemberState.IN_SYNC || (s == MemberState.REBUILDING && memberOffset < recoveryOffset);
    }

    /**
     * True when writes to the stripe at {@code memberOffset} must reach this member: in sync, or
     * rebuilding and already past that stripe (above the line the rebuild writes it later).
     */
    boolean writable(long memberOffset) {
        return readable(memberOffset);
    }

    void readData(long memberOffset, ByteBuffer dst, int dstOffset, int length) throws IOException {
        nrPending.get();
        try {
            disk.read(dataOffsetBytes + memberOffset, dst, dstOffset, length);
        } finally {
            nrPending.put();
        }
    }

    void writeData(long memberOffset, ByteBuffer src, int srcOffset, int length) throws IOException {
        nrPending.get();
        try {
            disk.write(dataOffsetBytes + memberOffset, src, srcOffset, length);
        } finally {
            nrPending.put();
        }
    }

    /**
     * This member's bytes at {@code memberOffset} in place, when its disk offers direct access and
     * the range is contiguous; else null and the caller copies. The caller brackets its use with
     * {@code nrPending.get()}/{@code put()} like any other I/O on the member.
     */
    ByteBuffer direct(long memberOffset, int length) throws IOException {
        return disk instanceof DirectAccessDisk
                ? ((DirectAccessDisk) disk).directBuffer(dataOffsetBytes + memberOffset, length) : null;
    }

    /** Index in {@link #direct}'s buffer of the byte at {@code memberOffset}. */
    int directIndex(long memberOffset) {
        return ((DirectAccessDisk) disk).directIndex(dataOffsetBytes + memberOffset);
    }

    String name() {
        return disk.name();
    }

    @Override
    public String toString() {
        return name() + " [slot " + slot + ", " + state + "]";
    }
}
