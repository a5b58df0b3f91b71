package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.raidfive.array.RoomyArrays.CHUNK;
import static org.raidfive.array.RoomyArrays.MEMBER;
import static org.raidfive.array.RoomyArrays.added;
import static org.raidfive.array.RoomyArrays.make;
import static org.raidfive.array.RoomyArrays.start;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
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
import org.raidfive.disk.MemberDisk;
import org.raidfive.md.Superblock;

/**
 * Writes to an array while {@link OfflineReshape#run} moves its stripes on another thread (what
 * {@code raid serve} serves mid-reshape): a flat reference image takes every write; each write reads
 * back at once, the whole array reads as the image at the end, the finished array assembles and
 * holds it, and its parity, recomputed from scratch, is consistent. A reshape stopped with writes and
 * not marked clean (a crash) is continued dirty and resynced after, as md does.
 */
@Timeout(120)
class ReshapeWritesWhileRunningTest {
    /**
     * One writer (random ranges of 1 to 300 sectors, some across chunks and stripes) during the whole
     * reshape; or two, each in its own chunks (even or odd), so that they meet in stripes: their
     * read-modify-writes of one stripe's parity must not interleave.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grow", "shrink", "chunk change", "degraded grow", "grow, 2 writers"})
    void writesDuringTheReshapeLandInTheRightGeometry(String what) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeWritesWhileRunningTest seed " + seed + " " + what);
        Made m = make(what.equals("shrink") ? 4 : 3, seed);
        List<MemberDisk> given = new ArrayList<>(m.members());
        List<MemberDisk> added = added(what);
        int writers = what.contains("2 writers") ? 2 : 1;
        FaultyDisk faulty = null;
        if (what.startsWith("degraded")) {
            long middle = (1L << 20) + (2L << 20);
            faulty = new FaultyDisk(m.members().get(1)).failWrites(middle - (512L << 10), middle);
            given.set(1, faulty);
        }
        byte[] image;
        AtomicLong writes = new AtomicLong();
        AtomicLong midway = new AtomicLong();
        try (OfflineReshape r = start(what, given, added)) {
            // 512 KiB per member per batch, about 2 s in all: most writes meet it mid-way
            r.setSyncLimits(new SyncLimits(1 << 20, 2 << 20));
            int size = (int) r.reshapingArrayBytes();
            image = Arrays.copyOf(m.image(), size);
            long start = r.position();
            long end = r.endPosition();
            AtomicBoolean done = new AtomicBoolean();
            List<CompletableFuture<Void>> writing = new ArrayList<>();
            for (int t = 0; t < writers; t++) {
                SplittableRandom random = new SplittableRandom(seed + t);
                int parity = t;
                writing.add(CompletableFuture.runAsync(() -> {
                    byte[] got = new byte[300 * 512];
                    while (!done.get()) {
                        int len = random.nextInt(1, 301) * 512;
                        int offset = random.nextInt((size - len) / 512 + 1) * 512;
                        if (writers > 1) { // within one chunk of this writer's parity (64 KiB chunks, both geometries)
                            int chunk = random.nextInt(size / CHUNK / 2) * 2 + parity;
                            int within = random.nextInt(CHUNK / 512) * 512;
                            offset = chunk * CHUNK + within;
                            len = Math.min(len, CHUNK - within);
                        }
                        byte[] bytes = new byte[len];
                        random.nextBytes(bytes);
                        long before = r.position();
                        try {
                            r.write(offset, ByteBuffer.wrap(bytes), 0, len);
                            System.arraycopy(bytes, 0, image, offset, len);
                            r.read(offset, ByteBuffer.wrap(got), 0, len);
                        } catch (IOException e) {
                            throw new AssertionError(e);
                        }
                        int mismatch = Arrays.mismatch(bytes, 0, len, got, 0, len);
                        if (mismatch >= 0) {
                            throw new AssertionError(what + ": byte " + (offset + mismatch) + " written at position "
                                    + before + " reads back otherwise (seed " + seed + ")");
                        }
                        writes.incrementAndGet();
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
            for (CompletableFuture<Void> w : writing) {
                w.get(60, TimeUnit.SECONDS);
            }
            byte[] whole = new byte[size];
            r.read(0, ByteBuffer.wrap(whole), 0, size);
            assertEquals(-1, Arrays.mismatch(image, whole), what + ": the whole array after the reshape");
            if (faulty != null) {
                assertEquals(faulty.name(), r.missingMember(), "the reshape went on without the failed member");
            }
            r.markClean();
        }
        System.out.println(what + ": " + writes + " writes, " + midway + " of them mid-way");
        assertTrue(midway.get() > 10, what + ": only " + midway + " writes met the reshape mid-way");
        List<MemberDisk> all = new ArrayList<>(m.members());
        all.addAll(added);
        if (faulty != null) {
            all.remove(faulty.inner());
        }
        assertFinished(all, image, faulty == null);
    }

    /**
     * md holds only the writes to the window being reshaped: while a batch moves its stripes (held
     * by the test at its {@code BATCH_READ} point, its old data read, nothing written), a write far
     * from it completes, and a write into it waits for the batch's end. Both land where the mapping
     * says: the array reads the image, and the finished array holds it with its parity consistent.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grow", "shrink"})
    void aBatchHoldsOnlyTheWritesToItsWindow(String what) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeWritesWhileRunningTest seed " + seed + " window " + what);
        Made m = make(what.equals("shrink") ? 4 : 3, seed);
        List<MemberDisk> added = added(what);
        SplittableRandom random = new SplittableRandom(seed);
        byte[] image;
        try (OfflineReshape r = start(what, m.members(), added)) {
            r.setBatchMemberBytes(CHUNK); // one row a batch: the window is a small part of the array
            int size = (int) r.reshapingArrayBytes();
            image = Arrays.copyOf(m.image(), size);
            java.util.concurrent.CountDownLatch inBatch = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            // the run's first write marks the members dirty, with the turn alone: before the reshape runs
            byte[] first = new byte[4096];
            random.nextBytes(first);
            write(r, size / 2, first);
            System.arraycopy(first, 0, image, size / 2, first.length);
            AtomicBoolean held = new AtomicBoolean();
            r.hook((point, at) -> {
                if (point == OfflineReshape.Point.BATCH_READ && held.compareAndSet(false, true)) {
                    inBatch.countDown();
                    try {
                        release.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new java.io.InterruptedIOException();
                    }
                }
            });
            CompletableFuture<Boolean> mover = CompletableFuture.supplyAsync(() -> {
                try {
                    return r.run(() -> false, p -> {});
                } catch (IOException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            try {
                assertTrue(inBatch.await(30, TimeUnit.SECONDS), "the first batch began");
                // forwards the first batch is at the array's start, backwards at its end
                int intoWindow = r.backwards() ? (int) (r.position() * 512) - 4096 : 0;
                int farAway = r.backwards() ? 0 : size - 4096;
                byte[] far = new byte[4096];
                byte[] near = new byte[4096];
                random.nextBytes(far);
                random.nextBytes(near);
                CompletableFuture<Void> beside = CompletableFuture.runAsync(() -> write(r, farAway, far));
                beside.get(20, TimeUnit.SECONDS); // before: every write waited for the whole batch
                CompletableFuture<Void> inside = CompletableFuture.runAsync(() -> write(r, intoWindow, near));
                Thread.sleep(300);
                assertFalse(inside.isDone(), "a write into the batch's window waits for the batch");
                release.countDown();
                inside.get(20, TimeUnit.SECONDS);
                System.arraycopy(far, 0, image, farAway, far.length);
                System.arraycopy(near, 0, image, intoWindow, near.length);
            } finally {
                release.countDown();
            }
            assertTrue(mover.get(60, TimeUnit.SECONDS));
            byte[] whole = new byte[size];
            r.read(0, ByteBuffer.wrap(whole), 0, size);
            assertEquals(-1, Arrays.mismatch(image, whole), what + ": the whole array after the reshape");
            r.markClean();
        }
        List<MemberDisk> all = new ArrayList<>(m.members());
        all.addAll(added);
        assertFinished(all, image, true);
    }

    /**
     * A member dies while a batch is moving its stripes and a write beside the batch needs it too:
     * the write meets it first and leaves it out (md's md_error), the batch then meets it and finds
     * it already out. The reshape goes on degraded, once, as md's does: it ends, the array reads the
     * image, and the three members left assemble and hold it.
     */
    @Test
    void aMemberDyingUnderABatchAndAWriteBesideItIsLeftOutOnce() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeWritesWhileRunningTest seed " + seed + " member dies under a batch and a write");
        Made m = make(3, seed);
        List<MemberDisk> given = new ArrayList<>(m.members());
        FaultyDisk faulty = new FaultyDisk(m.members().get(1));
        given.set(1, faulty);
        List<MemberDisk> added = added("grow");
        SplittableRandom random = new SplittableRandom(seed);
        byte[] image;
        try (OfflineReshape r = OfflineReshape.grow(given, added)) {
            r.setBatchMemberBytes(CHUNK);
            int size = (int) r.reshapingArrayBytes();
            image = Arrays.copyOf(m.image(), size);
            byte[] first = new byte[4096];
            random.nextBytes(first);
            write(r, size / 2, first); // the dirty mark, before the reshape runs
            System.arraycopy(first, 0, image, size / 2, first.length);
            java.util.concurrent.CountDownLatch inBatch = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            AtomicBoolean held = new AtomicBoolean();
            r.hook((point, at) -> {
                if (point == OfflineReshape.Point.BATCH_READ && held.compareAndSet(false, true)) {
                    inBatch.countDown();
                    try {
                        release.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new java.io.InterruptedIOException();
                    }
                }
            });
            CompletableFuture<Boolean> mover = CompletableFuture.supplyAsync(() -> {
                try {
                    return r.run(() -> false, p -> {});
                } catch (IOException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            try {
                assertTrue(inBatch.await(30, TimeUnit.SECONDS), "the first batch began");
                faulty.disappear();
                // a whole old stripe at the array's end, far from the first batch: its write reads
                // every member, the dead one too
                int stripe = 2 * CHUNK;
                byte[] whole = new byte[stripe];
                random.nextBytes(whole);
                int at = size - stripe;
                CompletableFuture<Void> beside = CompletableFuture.runAsync(() -> write(r, at, whole));
                Thread.sleep(300); // it has met the dead member, and waits to leave it out
                assertFalse(beside.isDone(), "the write waits for the batch to leave the member out");
                release.countDown();
                beside.get(20, TimeUnit.SECONDS);
                System.arraycopy(whole, 0, image, at, stripe);
            } finally {
                release.countDown();
            }
            assertTrue(mover.get(60, TimeUnit.SECONDS), "the reshape ended, degraded");
            assertEquals(faulty.name(), r.missingMember());
            byte[] all = new byte[size];
            r.read(0, ByteBuffer.wrap(all), 0, size);
            assertEquals(-1, Arrays.mismatch(image, all), "the whole array after the reshape");
            r.markClean();
        }
        List<MemberDisk> left = new ArrayList<>(m.members());
        left.remove(1);
        left.addAll(added);
        assertFinished(left, image, false);
    }

    private static void write(OfflineReshape r, int offset, byte[] bytes) {
        try {
            r.write(offset, ByteBuffer.wrap(bytes), 0, bytes.length);
        } catch (IOException e) {
            throw new java.util.concurrent.CompletionException(e);
        }
    }

    /**
     * The members' reshape is over and they are clean; the active ones assemble and hold {@code image}
     * (zeros after it), and, when {@code whole}, their parity XORs to zero over the data areas.
     */
    private static void assertFinished(List<MemberDisk> all, byte[] image, boolean whole) throws Exception {
        List<MemberDisk> active = new ArrayList<>();
        Superblock any = null;
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), d.name() + " still reshaping");
            assertTrue(sb.isClean(), d.name() + " marked clean after the last write");
            if (sb.role() < sb.raidDisks()) {
                active.add(d);
                any = sb;
            }
        }
        if (whole) {
            ArrayOracle.assertParityConsistent(active, any.dataOffset() * 512, any.size() * 512);
        }
        try (Raid5Array array = Raid5Array.assemble(active)) {
            assertEquals(!whole, array.status().degraded());
            ArrayOracle.assertArrayHolds(array, Arrays.copyOf(image, (int) array.size()));
        }
    }

    /**
     * Writes mid-reshape, then the reshape stops and the process "crashes" (nothing marks the members
     * clean): they record the reshape dirty. It is continued (md continues a dirty reshape: it
     * recomputes the parity of every stripe it moves) and ends dirty; the assembled array reads the
     * image, has its resync pending, and after it the parity is consistent.
     */
    @Test
    void aReshapeStoppedDirtyIsContinuedAndResyncedAfter() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeWritesWhileRunningTest seed " + seed + " dirty stop");
        Made m = make(3, seed);
        List<MemberDisk> all = new ArrayList<>(m.members());
        all.add(new Kept(MEMBER, "new0"));
        byte[] image = m.image().clone();
        SplittableRandom random = new SplittableRandom(seed);
        try (OfflineReshape r = OfflineReshape.grow(m.members(), all.subList(3, 4))) {
            int[] batches = {0};
            assertFalse(r.run(() -> batches[0]++ == 3, p -> {}));
            assertTrue(r.position() > 0 && r.position() < r.endPosition(), "stopped mid-way at " + r.position());
            for (int i = 0; i < 40; i++) {
                int len = random.nextInt(1, 65) * 512;
                int offset = random.nextInt((image.length - len) / 512 + 1) * 512;
                byte[] bytes = new byte[len];
                random.nextBytes(bytes);
                r.write(offset, ByteBuffer.wrap(bytes), 0, len);
                System.arraycopy(bytes, 0, image, offset, len);
            }
        } // no markClean: as a crash leaves them
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            assertFalse(sb.isClean(), d.name() + " records the writes (dirty)");
            assertTrue(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE));
        }
        try (OfflineReshape r = OfflineReshape.resume(all)) {
            assertTrue(r.run(() -> false, p -> {}));
            r.markClean(); // this run wrote nothing: the members stay dirty
        }
        for (MemberDisk d : all) {
            assertFalse(SuperblockIo.read(d).isClean(), d.name() + " still dirty: the resync is due");
        }
        assertHoldsThenResyncs(all, image);
    }

    /**
     * {@code active} assemble dirty (their resync pending, as md leaves a reshape written to before a
     * crash), read {@code image} (zeros after it), and after the resync their parity is consistent.
     */
    private static void assertHoldsThenResyncs(List<MemberDisk> active, byte[] image) throws Exception {
        try (Raid5Array array = Raid5Array.assemble(active)) {
            assertTrue(array.status().resyncPending(), "the resync md runs after a dirty reshape");
            ArrayOracle.assertArrayHolds(array, Arrays.copyOf(image, (int) array.size()));
            array.startSync();
            assertEquals(
                    SyncOutcome.Result.DONE,
                    array.awaitSync(Duration.ofSeconds(60)).result());
        }
        Superblock sb = SuperblockIo.read(active.get(0));
        ArrayOracle.assertParityConsistent(active, sb.dataOffset() * 512, sb.size() * 512);
    }

    /**
     * A crash (the reshape stopped where it stands, nothing checkpointed or marked clean) while a
     * writer keeps writing just behind the position, where the stripes moved since the last
     * checkpoint are: a resume moves those again from the old data, so a write there must be
     * recorded first (md holds it until {@code reshape_safe} catches up). After the resume, its end
     * and the resync, every acknowledged write is there and the parity is consistent.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grow", "shrink"})
    void aCrashWithWritesBehindThePositionLosesNoWrite(String what) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeWritesWhileRunningTest seed " + seed + " crash behind the position, " + what);
        Made m = make(what.equals("shrink") ? 4 : 3, seed);
        List<MemberDisk> added = added(what);
        byte[] image;
        AtomicLong behind = new AtomicLong();
        try (OfflineReshape r = start(what, m.members(), added)) {
            r.setSyncLimits(new SyncLimits(1 << 20, 2 << 20));
            int[] batches = {0};
            r.hook((point, at) -> {
                // a crash when stripes moved since the last checkpoint are at stake (the writes behind
                // the position may keep them recorded: then in batch 10)
                if (point == OfflineReshape.Point.BATCH_READ
                        && ++batches[0] > 3
                        && (r.recordedPosition() != r.position() || batches[0] == 10)) {
                    throw new ReshapeTestDisks.InjectedCrash("crash in batch " + batches[0]);
                }
            });
            int size = (int) r.reshapingArrayBytes();
            image = Arrays.copyOf(m.image(), size);
            AtomicBoolean done = new AtomicBoolean();
            SplittableRandom random = new SplittableRandom(seed);
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                while (!done.get()) {
                    int len = random.nextInt(1, 65) * 512;
                    long moved = r.position() * 512; // forwards the array below it, backwards from it up
                    long near = r.backwards() ? moved + random.nextInt(1 << 20) : moved - random.nextInt(1 << 20);
                    int offset = (int) Math.max(0, Math.min(size - len, near / 512 * 512));
                    byte[] bytes = new byte[len];
                    random.nextBytes(bytes);
                    try {
                        r.write(offset, ByteBuffer.wrap(bytes), 0, len);
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                    System.arraycopy(bytes, 0, image, offset, len);
                    behind.incrementAndGet();
                }
            });
            try {
                assertThrows(ReshapeTestDisks.InjectedCrash.class, () -> r.run(() -> false, p -> {}));
            } finally {
                done.set(true);
            }
            writer.get(60, TimeUnit.SECONDS);
        }
        System.out.println(what + ": " + behind + " writes near the position before the crash");
        List<MemberDisk> all = new ArrayList<>(m.members());
        all.addAll(added);
        try (OfflineReshape r = OfflineReshape.resume(all)) {
            assertTrue(r.resyncDue(), "the members record the writes");
            assertTrue(r.run(() -> false, p -> {}));
        }
        List<MemberDisk> active = new ArrayList<>();
        for (MemberDisk d : all) {
            Superblock sb = SuperblockIo.read(d);
            if (sb.role() < sb.raidDisks()) {
                active.add(d);
            }
        }
        assertHoldsThenResyncs(active, image);
    }

    /**
     * A member fails mid-reshape (recorded faulty, the reshape goes on degraded), the reshape stops,
     * writes follow and nothing marks the members clean: continuing is refused, as md refuses to
     * start a dirty degraded array (a stripe written at the crash may rebuild wrong), and writes
     * nothing.
     */
    @Test
    void aReshapeStoppedDirtyAndDegradedIsRefused() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ReshapeWritesWhileRunningTest seed " + seed + " dirty and degraded");
        Made m = make(3, seed);
        FaultyDisk faulty = new FaultyDisk(m.members().get(1));
        List<MemberDisk> given = new ArrayList<>(m.members());
        given.set(1, faulty);
        MemberDisk added = new Kept(MEMBER, "new0");
        try (OfflineReshape r = OfflineReshape.grow(given, List.of(added))) {
            faulty.failWrites(0, MEMBER);
            int[] batches = {0};
            assertFalse(r.run(() -> batches[0]++ == 3, p -> {}));
            assertEquals(faulty.name(), r.missingMember());
            r.write(0, ByteBuffer.wrap(new byte[4096]), 0, 4096);
        }
        List<MemberDisk> survivors = List.of(m.members().get(0), m.members().get(2), added);
        byte[][] before = ReshapeTestDisks.snapshot(survivors);
        ArrayConfigException e = assertThrows(ArrayConfigException.class, () -> OfflineReshape.resume(survivors));
        assertTrue(e.getMessage().contains("write hole"), e.getMessage());
        byte[][] after = ReshapeTestDisks.snapshot(survivors);
        for (int i = 0; i < survivors.size(); i++) {
            assertEquals(
                    -1, Arrays.mismatch(before[i], after[i]), survivors.get(i).name() + " unchanged");
        }
    }
}
