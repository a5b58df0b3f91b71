package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.PplHeader;
import org.raidfive.parity.Xor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * md's partial parity log, the start side ({@code ppl_load_distributed}, {@code ppl_recover}): on
 * every slot's member, find the newest valid io_unit header in its PPL area (headers follow one
 * another while checksum, signature and a rising generation hold); when the array is dirty, make
 * the parity of every stripe its entries name match the data on disk again ({@code ppl_recover_entry}:
 * parity = partial parity XOR the modified data, or the XOR of all data for a full stripe); then
 * the areas are emptied. An entry whose partial parity fails its checksum is counted and skipped,
 * never applied; a stripe whose modified data sits on a missing member is left as it is (md does
 * the same: that data was never acknowledged).
 *
 * <p>Runs at assembly, before any I/O, with the members' blocking calls.
 */
final class PplRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(PplRecovery.class);

    /** What a start found: entries whose stripes were made consistent, and entries skipped as corrupt. */
    record Outcome(int recoveredEntries, int corruptEntries) {
    }

    private final ArrayCore core;
    private final PartialParityLog log;
    private final Raid5Layout layout;
    private final CRC32C crc = new CRC32C();
    private final ByteBuffer header = StripeOp.aligned(PplHeader.SIZE);
    private final ByteBuffer block = StripeOp.aligned(4096);
    private final ByteBuffer sum = StripeOp.aligned(4096);

    PplRecovery(ArrayCore core, PartialParityLog log) {
        this.core = core;
        this.log = log;
        this.layout = core.layout;
    }

    /** Recovers every slot's log when {@code dirty}; empties the areas unless {@code readOnly}. */
    Outcome run(boolean dirty, boolean readOnly) throws IOException {
        int recovered = 0;
        int corrupt = 0;
        Member[] s = core.table.slots;
        for (int slot = 0; slot < s.length; slot++) {
            Member m = s[slot];
            if (m == null || m.state == MemberState.FAULTY) {
                continue;
            }
            long at = newestHeader(m);
            if (at < 0) {
                corrupt++; // md counts a log with no valid header as a mismatch
                LOG.warn("{}: no valid partial parity log header on {}", core.name, m.name());
                continue;
            }
            if (!dirty || readOnly) {
                continue;
            }
            readHeader(m, at);
            long pp = at + PplHeader.SIZE;
            int entries = PplHeader.entries(header);
            for (int i = 0; i < entries; i++) {
                int ppSize = PplHeader.ppSize(header, i);
                if (checksumOf(m, pp, ppSize) != PplHeader.entryChecksum(header, i)) {
                    corrupt++;
                    LOG.warn("{}: partial parity log entry {} on {} fails its checksum: skipped", core.name, i,
                            m.name());
                } else if (recoverEntry(m, slot, i, pp)) {
                    recovered++;
                }
                pp += Integer.toUnsignedLong(ppSize);
            }
            m.disk.flush();
        }
        if (dirty && !readOnly && (recovered > 0 || corrupt > 0)) {
            LOG.info("{}: partial parity log recovery: {} entries applied, {} skipped as corrupt", core.name,
                    recovered, corrupt);
        }
        if (!readOnly) {
            log.writeEmptyHeaders();
        }
        return new Outcome(recovered, corrupt);
    }

    /** Where the newest valid header of {@code m}'s area starts (bytes from the member's start), or -1. */
    private long newestHeader(Member m) throws IOException {
        long start = log.areaStart();
        long end = start + log.areaBytes();
        long at = start;
        long newest = -1;
        long newestGeneration = 0;
        while (at + PplHeader.SIZE <= end) {
            readHeader(m, at);
            if (!PplHeader.valid(header) || PplHeader.signatureOf(header) != log.signature()) {
                break;
            }
            long generation = PplHeader.generation(header);
            if (newest >= 0 && Long.compareUnsigned(newestGeneration, generation) > 0) {
                break; // the one before was the newest
            }
            newest = at;
            newestGeneration = generation;
            if (!log.multiple()) {
                break;
            }
            at += PplHeader.SIZE + PplHeader.ppBytes(header);
        }
        return newest;
    }

    private void readHeader(Member m, long at) throws IOException {
        m.disk.read(at, header, 0, PplHeader.SIZE);
    }

    private int checksumOf(Member m, long at, int ppSize) throws IOException {
        crc.reset();
        for (int done = 0; done < ppSize; done += 4096) {
            int n = Math.min(4096, ppSize - done);
            m.disk.read(at + done, block, 0, n);
            crc.update(block.duplicate().limit(n).position(0));
        }
        return (int) crc.getValue();
    }

    /**
     * md's {@code ppl_recover_entry}: for each block of the strip the entry covers, XOR the modified
     * data (read from the members) and the partial parity, and write it as the stripe's parity.
     */
    private boolean recoverEntry(Member logMember, int logSlot, int i, long ppAt) throws IOException {
        long first = PplHeader.dataSector(header, i);
        int ppSize = PplHeader.ppSize(header, i);
        long dataSize = Integer.toUnsignedLong(PplHeader.dataSize(header, i));
        long chunkSectors = layout.chunkSize() / 512;
        int dataDisks;
        long stripSectors;
        long last;
        if ((ppSize >>> 9) < chunkSectors) {
            if (ppSize > 0) {
                dataDisks = (int) (dataSize / ppSize);
                stripSectors = ppSize >>> 9;
            } else {
                dataDisks = layout.dataDisks();
                stripSectors = (dataSize >>> 9) / dataDisks;
            }
            last = first + (dataDisks - 1) * chunkSectors + stripSectors;
        } else {
            dataDisks = layout.dataDisks();
            stripSectors = chunkSectors;
            last = first + (dataSize >>> 9);
        }
        if (dataDisks < 1 || dataDisks > layout.dataDisks() || last * 512 > layout.arrayBytes()) {
            LOG.warn("{}: partial parity log entry {} on {} names stripes outside the array: skipped", core.name,
                    i, logMember.name());
            return false;
        }
        int blockSectors = (first % 8 == 0 && last % 8 == 0) ? 8 : 1;
        int blockBytes = blockSectors * 512;
        boolean applied = false;
        for (long s = 0; s < stripSectors; s += blockSectors) {
            for (int b = 0; b < blockBytes; b += 8) {
                sum.putLong(b, 0);
            }
            boolean update = false;
            for (int disk = 0; disk < dataDisks; disk++) {
                long r = first + s + disk * chunkSectors;
                if (r >= last) {
                    continue;
                }
                update = true;
                long offset = r * 512;
                long chunk = offset >>> layout.chunkShift();
                long stripe = layout.stripeOfChunk(chunk);
                int slot = layout.dataSlot(stripe, layout.dataIndexOfChunk(chunk));
                long memberOffset = layout.memberOffset(stripe) + (offset & (layout.chunkSize() - 1));
                Member m = core.table.slots[slot];
                if (m == null || m.state == MemberState.FAULTY || !m.readable(memberOffset)) {
                    update = false; // modified data on a missing member: md leaves the stripe alone
                    break;
                }
                m.disk.read(m.dataOffsetBytes + memberOffset, block, 0, blockBytes);
                Xor.xorInto(sum, 0, block, 0, blockBytes);
            }
            if (!update) {
                continue;
            }
            if (ppSize > 0) {
                logMember.disk.read(ppAt + s * 512, block, 0, blockBytes);
                Xor.xorInto(sum, 0, block, 0, blockBytes);
            }
            long offset = (first + s) * 512;
            long chunk = offset >>> layout.chunkShift();
            long stripe = layout.stripeOfChunk(chunk);
            if (layout.paritySlot(stripe) != logSlot || layout.paritySlot(stripe) != PplHeader.parityDisk(header, i)) {
                LOG.warn("{}: partial parity log entry {} on {} names parity disk {}, but stripe {} keeps parity on "
                        + "slot {}: skipped", core.name, i, logMember.name(), PplHeader.parityDisk(header, i), stripe,
                        layout.paritySlot(stripe));
                return applied;
            }
            long parityAt = layout.memberOffset(stripe) + (offset & (layout.chunkSize() - 1));
            logMember.disk.write(logMember.dataOffsetBytes + parityAt, sum, 0, blockBytes);
            applied = true;
        }
        return applied;
    }
}
