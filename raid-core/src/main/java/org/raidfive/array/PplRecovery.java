package org.raidfive.array;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.raidfive.disk.AlignedBuffers;
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
 * never applied; so is one md would misread: partial parity that runs past its member's PPL area
 * (with every entry after it, whose partial parity follows it), sizes that are not whole sectors,
 * or stripes outside the array, all judged in unsigned 64-bit arithmetic that cannot wrap. A stripe
 * whose modified data sits on a missing member is left as it is (md does the same: that data was
 * never acknowledged). Each member's log is read from its own area ({@link Member#pplOffset}).
 *
 * <p>Runs at assembly, before any I/O, with the members' blocking calls.
 */
final class PplRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(PplRecovery.class);

    /** What a start found: entries whose stripes were made consistent, and entries skipped as corrupt. */
    record Outcome(int recoveredEntries, int corruptEntries) {}

    private final ArrayCore core;
    private final PartialParityLog log;
    private final Raid5Layout layout;
    private final CRC32C crc = new CRC32C();
    private final ByteBuffer header = AlignedBuffers.allocate(PplHeader.SIZE);
    private final ByteBuffer block = AlignedBuffers.allocate(4096);
    private final ByteBuffer sum = AlignedBuffers.allocate(4096);

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
            long areaEnd = PartialParityLog.areaStart(m) + PartialParityLog.areaBytes(m);
            int entries = PplHeader.entries(header);
            for (int i = 0; i < entries; i++) {
                long ppSize = Integer.toUnsignedLong(PplHeader.ppSize(header, i));
                if (ppSize > areaEnd - pp) {
                    int skipped = entries - i;
                    corrupt += skipped;
                    LOG.warn(
                            "{}: partial parity log entry {} on {} has {} bytes of partial parity, past the end of "
                                    + "its PPL area: skipped, with the {} entries after it",
                            core.name,
                            i,
                            m.name(),
                            ppSize,
                            skipped - 1);
                    break;
                }
                String outside = outsideTheArray(i);
                if (outside != null) {
                    corrupt++;
                    LOG.warn("{}: partial parity log entry {} on {} {}: skipped", core.name, i, m.name(), outside);
                } else if (checksumOf(m, pp, (int) ppSize) != PplHeader.entryChecksum(header, i)) {
                    corrupt++;
                    LOG.warn(
                            "{}: partial parity log entry {} on {} fails its checksum: skipped",
                            core.name,
                            i,
                            m.name());
                } else if (recoverEntry(m, slot, i, pp)) {
                    recovered++;
                }
                pp += ppSize;
            }
            m.disk.flush();
        }
        if (dirty && !readOnly && (recovered > 0 || corrupt > 0)) {
            LOG.info(
                    "{}: partial parity log recovery: {} entries applied, {} skipped as corrupt",
                    core.name,
                    recovered,
                    corrupt);
        }
        if (!readOnly) {
            log.writeEmptyHeaders();
        }
        return new Outcome(recovered, corrupt);
    }

    /** Where the newest valid header of {@code m}'s area starts (bytes from the member's start), or -1. */
    private long newestHeader(Member m) throws IOException {
        long start = PartialParityLog.areaStart(m);
        long end = start + PartialParityLog.areaBytes(m);
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
            if (!PartialParityLog.multiple(m.pplSize)) {
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
     * Why entry {@code i} of the header cannot name stripes of this array, or null when it can: sizes
     * in whole sectors, and the first and last sector of the modified data inside the array (md
     * trusts the CRC here; a field with a valid CRC over garbage must not turn into a write).
     */
    private String outsideTheArray(int i) {
        long ppSize = Integer.toUnsignedLong(PplHeader.ppSize(header, i));
        long dataSize = Integer.toUnsignedLong(PplHeader.dataSize(header, i));
        long first = PplHeader.dataSector(header, i);
        long arraySectors = layout.arrayBytes() / 512;
        if (ppSize % 512 != 0 || dataSize % 512 != 0) {
            return "has pp_size " + ppSize + " and data_size " + dataSize + ", not whole sectors";
        }
        if (Long.compareUnsigned(first, arraySectors) >= 0) {
            return "names data_sector " + Long.toUnsignedString(first) + ", past the array's " + arraySectors
                    + " sectors";
        }
        if (dataSize == 0 || (ppSize > 0 && dataSize / ppSize > layout.dataDisks())) {
            return "has data_size " + dataSize + " for pp_size " + ppSize + ", which no stripe of " + layout.dataDisks()
                    + " data members holds";
        }
        return null;
    }

    /**
     * md's {@code ppl_recover_entry}: for each block of the strip the entry covers, XOR the modified
     * data (read from the members) and the partial parity, and write it as the stripe's parity.
     */
    private boolean recoverEntry(Member logMember, int logSlot, int i, long ppAt) throws IOException {
        long first = PplHeader.dataSector(header, i); // inside the array: outsideTheArray said so
        long ppSize = Integer.toUnsignedLong(PplHeader.ppSize(header, i));
        long dataSize = Integer.toUnsignedLong(PplHeader.dataSize(header, i));
        long chunkSectors = layout.chunkSize() / 512;
        int dataDisks;
        long stripSectors;
        long last;
        if ((ppSize >>> 9) < chunkSectors) {
            if (ppSize > 0) {
                dataDisks = (int) (dataSize / ppSize); // at most dataDisks(): outsideTheArray said so
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
        if (dataDisks < 1 || dataDisks > layout.dataDisks() || last > layout.arrayBytes() / 512) {
            LOG.warn(
                    "{}: partial parity log entry {} on {} names stripes outside the array: skipped",
                    core.name,
                    i,
                    logMember.name());
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
                if (m == null || !m.readable(memberOffset)) {
                    update = false; // modified data on a missing member: md leaves the stripe alone
                    break;
                }
                // As md (ppl_recover_entry): sectors the member lists as bad are read as they are, so
                // that parity matches what the members hold and the others stay reconstructable.
                m.readData(memberOffset, block, 0, blockBytes);
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
                LOG.warn(
                        "{}: partial parity log entry {} on {} names parity disk {}, but stripe {} keeps parity on "
                                + "slot {}: skipped",
                        core.name,
                        i,
                        logMember.name(),
                        PplHeader.parityDisk(header, i),
                        stripe,
                        layout.paritySlot(stripe));
                return applied;
            }
            long parityAt = layout.memberOffset(stripe) + (offset & (layout.chunkSize() - 1));
            logMember.writeData(parityAt, sum, 0, blockBytes);
            applied = true;
        }
        return applied;
    }
}
