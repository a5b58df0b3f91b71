package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.raidfive.array.RoomyArrays.MEMBER;
import static org.raidfive.array.RoomyArrays.added;
import static org.raidfive.array.RoomyArrays.make;
import static org.raidfive.array.RoomyArrays.start;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.raidfive.array.ReshapeTestDisks.Kept;
import org.raidfive.array.RoomyArrays.Made;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.ForwardingDisk;
import org.raidfive.disk.MemberDisk;

/**
 * Reads of an array while {@link OfflineReshape#run} moves its stripes on another thread (what
 * {@code raid serve} does mid-reshape): every byte read equals the flat reference image, whatever
 * the position was when the read was mapped, forwards and backwards, and with a member failing
 * mid-way.
 */
@Timeout(120)
class ReshapeReadsWhileRunningTest {
    /**
     * Two threads read random ranges (1 to 96 sectors, so that some cross the position) while the
     * reshape runs, slowed at every batch so that most reads meet it mid-way; each read is compared
     * with the reference image at once.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grow", "shrink", "chunk change", "degraded grow"})
    void readsDuringTheReshapeReadTheImage(String what) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeReadsWhileRunningTest seed " + seed + " " + what);
        Made m = make(what.equals("shrink") ? 4 : 3, seed);
        List<MemberDisk> given = new ArrayList<>(m.members());
        FaultyDisk faulty = null;
        if (what.startsWith("degraded")) {
            // the reshape's writes fail there: the member is left out, and reads rebuild its chunks after
            long middle = (1L << 20) + (2L << 20);
            faulty = new FaultyDisk(m.members().get(1)).failWrites(middle - (512L << 10), middle);
            given.set(1, faulty);
        }
        AtomicLong reads = new AtomicLong();
        AtomicLong midway = new AtomicLong();
        try (OfflineReshape r = start(what, given, added(what))) {
            r.hook((point, at) -> {
                if (point == OfflineReshape.Point.BATCH_READ) {
                    pause(3);
                }
            });
            int size = (int) r.reshapingArrayBytes();
            byte[] expected = Arrays.copyOf(m.image(), size);
            long start = r.position();
            long end = r.endPosition();
            AtomicBoolean done = new AtomicBoolean();
            List<CompletableFuture<Void>> readers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                SplittableRandom random = new SplittableRandom(seed + t);
                readers.add(CompletableFuture.runAsync(() -> {
                    byte[] got = new byte[96 * 512];
                    while (!done.get()) {
                        int len = random.nextInt(1, 97) * 512;
                        int offset = random.nextInt((size - len) / 512 + 1) * 512;
                        long before = r.position();
                        try {
                            r.read(offset, ByteBuffer.wrap(got), 0, len);
                        } catch (IOException e) {
                            throw new AssertionError(e);
                        }
                        int mismatch = Arrays.mismatch(expected, offset, offset + len, got, 0, len);
                        if (mismatch >= 0) {
                            throw new AssertionError(what + ": byte " + (offset + mismatch) + " read at position "
                                    + before + " differs from the image (seed " + seed + ")");
                        }
                        reads.incrementAndGet();
                        if (before != start && before != end) {
                            midway.incrementAndGet();
                        }
                    }
                }));
            }
            try {
                assertTrue(r.run(() -> false, p -> {}));
            } finally {
                done.set(true);
            }
            for (CompletableFuture<Void> f : readers) {
                f.get(60, TimeUnit.SECONDS);
            }
            if (faulty != null) {
                assertEquals(faulty.name(), r.missingMember(), "the reshape went on without the failed member");
            }
        }
        System.out.println(what + ": " + reads + " reads, " + midway + " of them mid-way");
        assertTrue(midway.get() > 10, what + ": only " + midway + " reads met the reshape mid-way");
    }

    /**
     * The race the reshape's lock closes: a read maps its range to the old geometry (the position is
     * below it) and is held just before it reads the member, while the reshape runs on. The reshape
     * must not move its recorded position past the range (after which it may write over that old
     * data) until the read is done: the held read waits up to two seconds for the reshape to end,
     * then reads, and must read the image. Without the lock the reshape ends within that time, its
     * new stripes over the old ones, and the read returns other data.
     */
    @Test
    void aReadMappedBeforeTheReshapeMovesOnReadsWhatItMapped() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeReadsWhileRunningTest seed " + seed + " held read");
        Made m = make(3, seed);
        CountDownLatch mapped = new CountDownLatch(1);
        CountDownLatch reshaped = new CountDownLatch(1);
        Thread[] reader = new Thread[1];
        List<MemberDisk> given = new ArrayList<>();
        for (MemberDisk d : m.members()) {
            given.add(new ForwardingDisk(d) {
                @Override
                public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
                    if (Thread.currentThread() == reader[0] && mapped.getCount() > 0) {
                        mapped.countDown();
                        try {
                            reshaped.await(2, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    super.read(position, dst, dstOffset, length);
                }
            });
        }
        int offset = 256 << 10; // old stripe 2: new stripes of the grow cover its old place soon after
        int len = 64 << 10;
        byte[] got = new byte[len];
        try (OfflineReshape r = OfflineReshape.grow(given, List.of(new Kept(MEMBER, "new0")))) {
            CompletableFuture<Void> read = CompletableFuture.runAsync(() -> {
                reader[0] = Thread.currentThread();
                try {
                    r.read(offset, ByteBuffer.wrap(got), 0, len);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            assertTrue(mapped.await(30, TimeUnit.SECONDS), "the read reached a member");
            assertTrue(r.run(() -> false, p -> {}));
            reshaped.countDown();
            read.get(30, TimeUnit.SECONDS);
        }
        int mismatch = Arrays.mismatch(m.image(), offset, offset + len, got, 0, len);
        assertEquals(-1, mismatch, "the held read returned other data than the image at byte " + (offset + mismatch));
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
