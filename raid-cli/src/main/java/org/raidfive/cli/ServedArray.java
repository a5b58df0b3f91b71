package org.raidfive.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.Raid5Array;
import org.raidfive.bench.Sizes;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.DataOffset;

/**
 * The array {@code raid serve} exports: assembled from member specs (closed clean at the end, like
 * any command's {@link ArraySession}), or a fresh one on in-memory members ({@code --backend
 * memory}: zeros, so no initial resync; gone when closed).
 */
final class ServedArray implements AutoCloseable {
    /** Shape of an in-memory array: members, at least {@code size} bytes of array, chunk, md layout name. */
    record MemoryOptions(int disks, long size, long chunk, String layout) {}

    private final Raid5Array array;
    private final AutoCloseable owner;
    private final boolean memory;

    private ServedArray(Raid5Array array, AutoCloseable owner, boolean memory) {
        this.array = array;
        this.owner = owner;
        this.memory = memory;
    }

    static ServedArray assemble(List<String> specs, boolean readOnly, boolean force, CounterMode counters)
            throws IOException {
        AssembleOptions options = (readOnly ? ArraySession.READ_ONLY : ArraySession.READ_WRITE)
                .withForce(force)
                .withCounterMode(counters);
        ArraySession session = ArraySession.assemble(specs, options);
        return new ServedArray(session.array(), session, false);
    }

    static ServedArray memory(MemoryOptions o, CounterMode counters) throws IOException {
        if (o.disks() < Raid5Layout.MIN_DISKS || o.disks() > 64) {
            throw CliException.usage("--disks must be " + Raid5Layout.MIN_DISKS + " to 64, got " + o.disks());
        }
        if (o.size() <= 0) {
            throw CliException.usage("--size must be positive, got " + o.size());
        }
        ArraySpec.Builder spec = ArraySpec.builder()
                .algorithm(Raid5Algorithm.parse(o.layout()))
                .chunkSize(o.chunk())
                .counterMode(counters)
                .assumeClean(true)
                .name("raidfive:memory");
        long chunk = o.chunk();
        long perMember = (o.size() + o.disks() - 2) / (o.disks() - 1);
        long dataBytes = (perMember + chunk - 1) / chunk * chunk;
        long memberBytes = memberBytes(dataBytes, (int) (chunk / 512));
        ArraySpec built = spec.memberDataBytes(dataBytes).build();
        List<MemberDisk> disks = new ArrayList<>();
        try {
            for (int i = 0; i < o.disks(); i++) {
                disks.add(new MemoryDisk(memberBytes, "memory#" + i));
            }
            return new ServedArray(Raid5Array.create(built, disks), null, true);
        } catch (OutOfMemoryError e) {
            MemberSet.closeQuietly(disks);
            throw CliException.usage("not enough memory for " + o.disks() + " in-memory members of "
                    + Sizes.human(memberBytes) + " (" + e.getMessage() + "); a smaller --size, or more direct memory "
                    + "(RAID_DIRECT_MEMORY for ./raid)");
        } catch (IOException | RuntimeException e) {
            MemberSet.closeQuietly(disks);
            throw e;
        }
    }

    /** Member size whose data area, after md's data offset for a member that size, holds {@code dataBytes}. */
    private static long memberBytes(long dataBytes, int chunkSectors) {
        long member = dataBytes + (1 << 20);
        while (true) {
            long offset = DataOffset.forNewMember(member / 512, chunkSectors) * 512;
            if (member - offset >= dataBytes) {
                return member;
            }
            member = dataBytes + offset;
        }
    }

    Raid5Array array() {
        return array;
    }

    boolean memory() {
        return memory;
    }

    /** Closes the array (clean on disk unless read-only) and its members. */
    @Override
    public void close() throws IOException {
        if (owner == null) {
            array.close();
            return;
        }
        try {
            owner.close();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
