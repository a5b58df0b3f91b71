package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.PplHeader;
import org.raidfive.md.Superblock;

/**
 * md's partial parity log, in process. The oracle is independent of the engine: stripes are
 * located with {@link ArrayOracle#linuxSlots} (a transcription of Linux's raid5_compute_sector), the
 * partial parity an entry must carry is the XOR of the untouched data taken from the reference
 * image, and checksums are recomputed with the JDK's CRC-32C over the header bytes as md lays them.
 * A torn stripe is made by putting back the old parity after a write (the parity write "never
 * landed") and dropping the array as a crash does.
 */
@Timeout(120)
class PartialParityLogTest {
    private static final int CHUNK = 64 * 1024;
    private static final long MEMBER = 6L << 20;
    private static final int DISKS = 4;
    private static final int ALGORITHM = 2; // left-symmetric
    private static final int PAGE = 4096;

    private static List<MemoryDisk> disks() {
        List<MemoryDisk> d = new ArrayList<>();
        for (int i = 0; i < DISKS; i++) {
            d.add(new MemoryDisk(MEMBER));
        }
        return d;
    }

    private static ArraySpec spec(ConsistencyPolicy policy) {
        return ArraySpec.builder()
                .chunkSize(CHUNK)
                .assumeClean(true)
                .consistencyPolicy(policy)
                .build();
    }

    /** Byte offset in the array of column {@code column} of the data chunk in {@code slot} of {@code stripe}. */
    private static long arrayOffset(long stripe, int slot, int column) {
        for (int i = 0; i < DISKS - 1; i++) {
            long chunk = stripe * (DISKS - 1) + i;
            if (ArrayOracle.linuxSlots(ALGORITHM, DISKS, chunk)[1] == slot) {
                return chunk * CHUNK + column;
            }
        }
        throw new AssertionError("slot " + slot + " holds parity in stripe " + stripe);
    }

    private static int paritySlot(long stripe) {
        return ArrayOracle.linuxSlots(ALGORITHM, DISKS, stripe * (DISKS - 1))[0];
    }

    private static byte[] readMember(MemberDisk d, long at, int len) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(len);
        d.read(at, b, 0, len);
        return b.array();
    }

    private static byte[] read(Raid5Array a, long at, int len) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(len);
        a.read(at, b, 0, len);
        return b.array();
    }

    /**
     * The write hole itself, and the log closing it: a degraded array (slot 3 gone), a 4 KiB write to
     * another data chunk of a stripe whose slot 3 held data, its parity write torn, a crash. With the
     * log, the restart recomputes that stripe's parity from the partial parity and slot 3's data reads
     * back as it was; without it (forced start), slot 3's data comes back wrong.
     */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "PPL"})
    void aTornParityWriteOnADegradedArrayLosesTheMissingMembersDataOnlyWithoutTheLog(ConsistencyPolicy policy)
            throws Exception {
        List<MemoryDisk> d = disks();
        long stripe = 5;
        int parity = paritySlot(stripe);
        int missing = 3;
        assertNotEquals(missing, parity, "the missing member must hold data in this stripe");
        int written = 0;
        while (written == missing || written == parity) {
            written++;
        }
        byte[] image;
        long dataOffset;
        byte[] oldParity;
        byte[] missingBefore;
        Raid5Array array = Raid5Array.create(spec(policy), d);
        try {
            image = LoadGenerator.fillRandom(array, 11);
            dataOffset = array.core.table.slots[0].dataOffsetBytes;
            missingBefore = read(array, arrayOffset(stripe, missing, 0), PAGE);
            array.fail(d.get(missing));
            long parityAt = dataOffset + stripe * CHUNK;
            oldParity = readMember(d.get(parity), parityAt, PAGE);
            byte[] data = new byte[PAGE];
            new Random(12).nextBytes(data);
            long at = arrayOffset(stripe, written, 0);
            array.write(at, ByteBuffer.wrap(data), 0, PAGE);
            System.arraycopy(data, 0, image, (int) at, PAGE);
            // The parity write of that stripe never landed:
            d.get(parity).write(parityAt, ByteBuffer.wrap(oldParity), 0, PAGE);
            Crash.of(array);
        } catch (Throwable t) {
            array.close();
            throw t;
        }
        List<MemberDisk> survivors = new ArrayList<>(d);
        survivors.remove(missing);
        try (Raid5Array again = Raid5Array.assemble(survivors, AssembleOptions.DEFAULT.withForce(true))) {
            byte[] missingAfter = read(again, arrayOffset(stripe, missing, 0), PAGE);
            if (policy == ConsistencyPolicy.PPL) {
                assertArrayEquals(
                        missingBefore,
                        missingAfter,
                        "the log recomputed the torn stripe's parity: the "
                                + "missing member's data, which no write touched, is intact");
                assertEquals(Long.MAX_VALUE, again.meta.recoveryCp(), "a dirty start recovered from the log is clean");
                assertArrayEquals(image, read(again, 0, image.length), "every byte written reads back");
            } else {
                assertFalse(
                        Arrays.equals(missingBefore, missingAfter),
                        "without a log the torn stripe corrupts data " + "no write touched (the RAID-5 write hole)");
            }
        }
    }

    /**
     * What a logged write leaves on the parity member is md's format: a valid header (its checksum,
     * the array's signature, a generation), one entry naming the write's array sector and sizes and
     * the parity slot, and after it the partial parity, which is the XOR of the data the write left
     * alone, with its CRC-32C in the entry.
     */
    @Test
    void aLoggedWriteLeavesMdsHeaderEntryAndPartialParityOnTheParityMember() throws Exception {
        List<MemoryDisk> d = disks();
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.PPL), d)) {
            byte[] image = LoadGenerator.fillRandom(array, 21);
            long stripe = 9;
            int parity = paritySlot(stripe);
            int written = parity == 0 ? 1 : 0;
            int column = 2 * PAGE;
            byte[] data = new byte[PAGE];
            new Random(22).nextBytes(data);
            long at = arrayOffset(stripe, written, column);
            array.write(at, ByteBuffer.wrap(data), 0, PAGE);
            System.arraycopy(data, 0, image, (int) at, PAGE);

            ByteBuffer area = ByteBuffer.allocate(PAGE * 2).order(ByteOrder.LITTLE_ENDIAN);
            long areaStart = (Superblock.SUPERBLOCK_OFFSET_SECTORS + PplHeader.AREA_OFFSET) * 512;
            // MULTIPLE_PPLS: io_units follow one another; the newest is the last valid one in the chain.
            ByteBuffer newest = null;
            long pos = areaStart;
            long generation = -1;
            while (true) {
                d.get(parity).read(pos, area, 0, PAGE * 2);
                ByteBuffer h = area.slice(0, PAGE).order(ByteOrder.LITTLE_ENDIAN);
                if (!crcHolds(h) || PplHeader.generation(h) <= generation) {
                    break;
                }
                generation = PplHeader.generation(h);
                newest = ByteBuffer.allocate(PAGE * 2)
                        .order(ByteOrder.LITTLE_ENDIAN)
                        .put(area.duplicate().clear());
                pos += PAGE + PplHeader.ppBytes(h);
            }
            assertTrue(newest != null, "a valid header on the parity member");
            ByteBuffer h = newest.slice(0, PAGE).order(ByteOrder.LITTLE_ENDIAN);
            CRC32C uuidCrc = new CRC32C();
            uuidCrc.update(array.meta.uuid);
            assertEquals((int) uuidCrc.getValue(), h.getInt(512), "signature: CRC-32C of the array UUID");
            for (int i = 0; i < 512; i++) {
                assertEquals((byte) 0xff, h.get(i), "reserved bytes are 0xff");
            }
            assertEquals(1, h.getInt(528), "one entry");
            assertEquals(at / 512, h.getLong(536), "data_sector: the array sector of the write");
            assertEquals(PAGE, h.getInt(544), "pp_size: one page");
            assertEquals(PAGE, h.getInt(548), "data_size: one page of one member");
            assertEquals(parity, h.getInt(552), "parity_disk");
            byte[] pp = new byte[PAGE];
            for (int slot = 0; slot < DISKS; slot++) {
                if (slot != parity && slot != written) {
                    long other = arrayOffset(stripe, slot, column);
                    for (int i = 0; i < PAGE; i++) {
                        pp[i] ^= image[(int) other + i];
                    }
                }
            }
            byte[] logged = new byte[PAGE];
            newest.get(PAGE, logged);
            assertArrayEquals(pp, logged, "partial parity: the XOR of the data the write left alone");
            CRC32C ppCrc = new CRC32C();
            ppCrc.update(pp);
            assertEquals(
                    (int) ppCrc.getValue(), h.getInt(556), "the entry's checksum is CRC-32C of its partial parity");
        }
    }

    /** What one of {@link #onThreads}' threads runs, given its number. */
    private interface ThreadBody {
        void run(int me) throws Exception;
    }

    /** Runs {@code body} on {@code threads} threads at once and waits for all, rethrowing a failure. */
    private static void onThreads(int threads, ThreadBody body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                done.add(pool.submit(() -> {
                    body.run(me);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    private static boolean crcHolds(ByteBuffer h) {
        ByteBuffer copy = ByteBuffer.allocate(PAGE).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(h.duplicate().clear());
        int stored = copy.getInt(532);
        copy.putInt(532, 0);
        CRC32C crc = new CRC32C();
        crc.update(copy.array());
        return stored == (int) crc.getValue() && stored != 0;
    }

    /** A full-stripe write logs no partial parity: md's entry has pp_size 0 and the size of all the data. */
    @Test
    void aFullStripeWriteIsLoggedWithoutPartialParity() throws Exception {
        List<MemoryDisk> d = disks();
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.PPL), d)) {
            long stripe = 3;
            int parity = paritySlot(stripe);
            byte[] data = new byte[CHUNK * (DISKS - 1)];
            new Random(31).nextBytes(data);
            long at = stripe * CHUNK * (DISKS - 1);
            array.write(at, ByteBuffer.wrap(data), 0, data.length);
            ByteBuffer h = newestHeader(d.get(parity));
            int entries = h.getInt(528);
            assertTrue(entries >= 1);
            int last = entries - 1;
            assertEquals(0, h.getInt(536 + last * 24 + 8), "pp_size 0 for a full stripe");
            long sectors = 0;
            for (int i = 0; i < entries; i++) {
                assertEquals(0, h.getInt(536 + i * 24 + 8));
                sectors += h.getInt(536 + i * 24 + 12) / 512;
                assertEquals(parity, h.getInt(536 + i * 24 + 16));
            }
            assertTrue(sectors > 0 && sectors <= data.length / 512);
            assertArrayEquals(data, read(array, at, data.length));
        }
    }

    private static ByteBuffer newestHeader(MemberDisk d) throws Exception {
        long pos = (Superblock.SUPERBLOCK_OFFSET_SECTORS + PplHeader.AREA_OFFSET) * 512;
        ByteBuffer newest = null;
        long generation = -1;
        while (true) {
            ByteBuffer h = ByteBuffer.allocate(PAGE).order(ByteOrder.LITTLE_ENDIAN);
            d.read(pos, h, 0, PAGE);
            if (!crcHolds(h) || h.getLong(520) <= generation) {
                return newest;
            }
            generation = h.getLong(520);
            newest = h;
            pos += PAGE + PplHeader.ppBytes(h);
        }
    }

    /**
     * Writers on every stripe at once (group commit on each member's log): every byte reads back,
     * parity holds everywhere, and a crash right after leaves logs whose recovery changes nothing.
     */
    @Test
    void concurrentWritersKeepDataAndParityExactAndTheLogsRecoverToTheSame() throws Exception {
        List<MemoryDisk> d = disks();
        long seed = System.nanoTime();
        System.out.println("concurrentWritersKeepDataAndParityExact seed " + seed);
        Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.PPL), d);
        byte[] image;
        try {
            image = LoadGenerator.fillRandom(array, 41);
            int threads = 4;
            int blocks = image.length / PAGE;
            onThreads(threads, me -> {
                Random r = new Random(seed + me);
                byte[] data = new byte[3 * PAGE];
                for (int i = 0; i < 400; i++) {
                    // Each thread writes only in its own quarter: interleaved blocks let a 2-3 page
                    // write overlap a neighbour's, and then the image's order need not be the array's.
                    int block = me * (blocks / threads) + r.nextInt(blocks / threads - 3);
                    int len = PAGE * (1 + r.nextInt(3));
                    if ((block + len / PAGE) * (long) PAGE > image.length) {
                        continue;
                    }
                    r.nextBytes(data);
                    array.write((long) block * PAGE, ByteBuffer.wrap(data), 0, len);
                    synchronized (image) {
                        System.arraycopy(data, 0, image, block * PAGE, len);
                    }
                }
            });
            ArrayOracle.assertArrayHolds(array, image);
            Crash.of(array);
        } catch (Throwable t) {
            array.close();
            throw t;
        }
        try (Raid5Array again = Raid5Array.assemble(new ArrayList<>(d))) {
            ArrayOracle.assertArrayHolds(again, image);
            ArrayOracle.assertParityConsistent(
                    d, again.core.table.slots[0].dataOffsetBytes, again.layout().memberBytesUsed());
        }
    }

    /**
     * io_units are reused: after writers on every log at once (units of several entries), one more
     * write on each parity member must find its own unit, of one entry, as the newest valid header
     * there: a reused header that kept an earlier use's entries fails its checksum, and the chain
     * of valid headers ends before it.
     */
    @Test
    void aReusedUnitAfterManyEntriesIsAValidHeaderOfItsOwnEntries() throws Exception {
        List<MemoryDisk> d = disks();
        long seed = System.nanoTime();
        System.out.println("aReusedUnitAfterManyEntries seed " + seed);
        try (Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.PPL), d)) {
            long blocks = array.size() / PAGE;
            onThreads(4, me -> {
                Random r = new Random(seed + me);
                byte[] data = new byte[PAGE];
                for (int i = 0; i < 3000; i++) {
                    r.nextBytes(data);
                    array.write((r.nextLong() & Long.MAX_VALUE) % blocks * PAGE, ByteBuffer.wrap(data), 0, PAGE);
                }
            });
            byte[] data = new byte[PAGE];
            for (long stripe = 0; stripe < DISKS; stripe++) {
                int parity = paritySlot(stripe);
                long at = arrayOffset(stripe, parity == 0 ? 1 : 0, 0);
                array.write(at, ByteBuffer.wrap(data), 0, PAGE);
                ByteBuffer h = newestHeader(d.get(parity));
                assertTrue(h != null, "a valid header on member " + parity + " (seed " + seed + ")");
                assertEquals(
                        1, h.getInt(528), "the last unit on member " + parity + " has one entry (seed " + seed + ")");
                assertEquals(at / 512, h.getLong(536), "and it is the last write (seed " + seed + ")");
            }
        }
    }

    /** An entry whose partial parity fails its checksum is skipped and counted, never applied; the array stays dirty. */
    @Test
    void aCorruptEntryIsSkippedAndTheArrayResyncs() throws Exception {
        List<MemoryDisk> d = disks();
        long stripe = 7;
        int parity = paritySlot(stripe);
        Raid5Array array = Raid5Array.create(spec(ConsistencyPolicy.PPL), d);
        byte[] image;
        long ppAt;
        try {
            image = LoadGenerator.fillRandom(array, 51);
            int written = parity == 0 ? 1 : 0;
            byte[] data = new byte[PAGE];
            new Random(52).nextBytes(data);
            long at = arrayOffset(stripe, written, 0);
            array.write(at, ByteBuffer.wrap(data), 0, PAGE);
            System.arraycopy(data, 0, image, (int) at, PAGE);
            // Find the newest header and flip a byte of its partial parity.
            long pos = (Superblock.SUPERBLOCK_OFFSET_SECTORS + PplHeader.AREA_OFFSET) * 512;
            long found = -1;
            long generation = -1;
            while (true) {
                ByteBuffer h = ByteBuffer.allocate(PAGE).order(ByteOrder.LITTLE_ENDIAN);
                d.get(parity).read(pos, h, 0, PAGE);
                if (!crcHolds(h) || h.getLong(520) <= generation) {
                    break;
                }
                generation = h.getLong(520);
                found = pos;
                pos += PAGE + PplHeader.ppBytes(h);
            }
            ppAt = found + PAGE;
            byte[] b = readMember(d.get(parity), ppAt, 512);
            b[0] ^= 1;
            d.get(parity).write(ppAt, ByteBuffer.wrap(b), 0, 512);
            Crash.of(array);
        } catch (Throwable t) {
            array.close();
            throw t;
        }
        try (Raid5Array again = Raid5Array.assemble(new ArrayList<>(d), AssembleOptions.DEFAULT.withStartSync(false))) {
            assertNotEquals(Long.MAX_VALUE, again.meta.recoveryCp(), "a skipped entry leaves the array to be resynced");
            ArrayOracle.assertArrayHolds(again, image);
        }
    }
}
