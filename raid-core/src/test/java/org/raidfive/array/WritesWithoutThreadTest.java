package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.raidfive.disk.CompletionThread;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.ForwardingAsyncDisk;
import org.raidfive.disk.IoBackend;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.nbd.NbdDisk;
import org.raidfive.nbd.NbdServer;
import org.raidfive.nbd.NbdServerConfig;

/**
 * Completion-based writes on members that take their I/O on the io_uring run as continuations:
 * no thread waits for their member I/O, and the callback runs on the thread that completed the
 * last member write. Chains of writes (each callback starts the next, as a queue depth does) from
 * many writers at once, over stripes they share, must leave the array holding a flat reference
 * image and every stripe's parity equal to the XOR of its data, recomputed from the members.
 *
 * <p>The ring is real file members where io_uring runs; members that say they batch on the ring
 * but complete on a thread of the test's own ({@link FakeRing}) make the same path run everywhere
 * and let a member fail in the middle of a batch.
 */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WritesWithoutThreadTest {
    private static final int CHUNK = 64 * 1024;
    private static final int BLOCK = 4096;
    private static final long MEMBER = 8L << 20;
    /** What one chain owns at a time: four blocks, never across a chunk. */
    private static final int QUAD = 4 * BLOCK;

    @TempDir
    Path dir;

    /** O_DIRECT members under every policy: the bitmap's and the log's writes are whole 4 KiB blocks too. */
    @ParameterizedTest
    @EnumSource(value = ConsistencyPolicy.class)
    void chainedWritesOnFileMembersMatchAFlatImageAndParity(ConsistencyPolicy policy) throws Exception {
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            disks.add(FileDisk.createOrExtend(dir.resolve("m" + i + ".img"), MEMBER, true));
        }
        Run run = runChains(disks, policy, 32, 200, null, () -> {});
        if (IoBackend.active() == IoBackend.IO_URING) {
            assertTrue(
                    run.threads.keySet().stream().anyMatch(t -> t.startsWith("member-io-uring")),
                    "write callbacks ran on " + run.threads.keySet());
        }
        for (MemberDisk d : disks) {
            d.close();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP", "PPL"})
    void writesOnRingMembersRunWithoutAThreadAndMatchAFlatImage(ConsistencyPolicy policy) throws Exception {
        try (FakeRing ring = new FakeRing()) {
            List<MemberDisk> disks = ring.members(4);
            Run run = runChains(disks, policy, 32, 200, null, () -> {});
            assertTrue(
                    run.threads.containsKey(FakeRing.THREAD),
                    "no write completed on the ring's thread: callbacks ran on " + run.threads.keySet());
        }
    }

    /**
     * A member whose write fails in the middle of the chains: only that I/O fails, the member is
     * failed (md's md_error), every write is acknowledged without an error and the degraded array
     * still holds the image.
     */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP", "PPL"})
    void aMemberWhoseWritesFailMidBatchIsFailedAndNoWriteIsLost(ConsistencyPolicy policy) throws Exception {
        try (FakeRing ring = new FakeRing()) {
            List<MemberDisk> disks = ring.members(4);
            Run run = runChains(disks, policy, 16, 150, 2, () -> ring.failWritesOf(2, 300));
            assertTrue(run.threads.containsKey(FakeRing.THREAD), "callbacks ran on " + run.threads.keySet());
        }
    }

    /** The same with a member's read: the write that needed it is planned again, degraded. */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP", "PPL"})
    void aMemberWhoseReadsFailMidBatchIsFailedAndNoWriteIsLost(ConsistencyPolicy policy) throws Exception {
        try (FakeRing ring = new FakeRing()) {
            List<MemberDisk> disks = ring.members(4);
            Run run = runChains(disks, policy, 16, 150, 1, () -> ring.failReadsOf(1, 200));
            assertTrue(run.threads.containsKey(FakeRing.THREAD), "callbacks ran on " + run.threads.keySet());
        }
    }

    /**
     * Real NBD members (raidfive's server over memory, on Unix sockets): the writes run without a
     * thread, their next steps on the continuation pool, and the array matches the image and parity.
     */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP", "PPL"})
    void chainedWritesOnNbdMembersMatchAFlatImageAndParity(ConsistencyPolicy policy) throws Exception {
        List<NbdServer> servers = new ArrayList<>();
        List<MemberDisk> disks = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                NbdServer server = NbdServer.start(
                        new MemoryDisk(MEMBER),
                        NbdServerConfig.builder()
                                .unixSocket(dir.resolve("m" + i + ".sock"))
                                .build());
                servers.add(server);
                disks.add(NbdDisk.open(server.uri()));
            }
            Run run = runChains(disks, policy, 32, 200, null, () -> {});
            assertTrue(
                    run.threads.keySet().stream().anyMatch(t -> t.startsWith("member-continuation")),
                    "no write ended on the continuation pool: callbacks ran on " + run.threads.keySet());
        } finally {
            for (MemberDisk d : disks) {
                d.close();
            }
            for (NbdServer s : servers) {
                s.close();
                s.disk().close();
            }
        }
    }

    /**
     * Members on a connection (as NBD's): their callbacks run on a reader thread that must never
     * submit (it alone would free the slots a submission waits for), so the next step of a write
     * runs on the continuation pool, and still no thread waits for member I/O.
     */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP", "PPL"})
    void writesOnConnectionMembersRunWithoutAThreadAndNeverSubmitFromTheReader(ConsistencyPolicy policy)
            throws Exception {
        try (FakeRing connection = FakeRing.connection()) {
            List<MemberDisk> disks = connection.members(4);
            Run run = runChains(disks, policy, 32, 200, null, () -> {});
            assertTrue(
                    run.threads.keySet().stream().anyMatch(t -> t.startsWith("member-continuation")),
                    "no write ended on the continuation pool: callbacks ran on " + run.threads.keySet());
            assertFalse(run.threads.containsKey(FakeRing.READER), "a callback ran on the reader");
            assertEquals(0, connection.submittedOnTheLoop.get(), "member I/O submitted on the reader thread");
        }
    }

    /** {@link #aMemberWhoseWritesFailMidBatchIsFailedAndNoWriteIsLost} on members on a connection. */
    @ParameterizedTest
    @EnumSource(
            value = ConsistencyPolicy.class,
            names = {"RESYNC", "BITMAP", "PPL"})
    void aConnectionMemberWhoseWritesOrReadsFailMidBatchIsFailedAndNoWriteIsLost(ConsistencyPolicy policy)
            throws Exception {
        for (boolean writes : new boolean[] {true, false}) {
            try (FakeRing connection = FakeRing.connection()) {
                int slot = writes ? 2 : 1;
                Runnable fail =
                        writes ? () -> connection.failWritesOf(slot, 300) : () -> connection.failReadsOf(slot, 200);
                runChains(connection.members(4), policy, 16, 150, slot, fail);
                assertEquals(0, connection.submittedOnTheLoop.get(), "member I/O submitted on the reader thread");
            }
        }
    }

    /**
     * md's rule for the partial parity log, on writes without a thread: a stripe's data and parity
     * reach no member before the io_unit holding its partial parity is written. The members stop at
     * a random member I/O (a power cut: from there nothing lands and every I/O fails), the members
     * as they are then are assembled again, and the log's recovery must leave every stripe's parity
     * the XOR of its data, every write that was acknowledged in place, and each write still in
     * flight wholly old or wholly new. Running the writes' continuation before their unit is
     * durable fails it.
     */
    @Test
    void aPowerCutAtAnyMemberIoLeavesLogsThatRepairEveryStripe() throws Exception {
        long seed = System.nanoTime();
        System.out.println("aPowerCutAtAnyMemberIoLeavesLogsThatRepairEveryStripe seed " + seed);
        Random random = new Random(seed);
        int chains = 12;
        int writes = 40;
        for (int round = 0; round < 12; round++) {
            long cutAfter = 1 + random.nextInt(chains * writes * 4);
            try (FakeRing ring = new FakeRing()) {
                List<MemberDisk> disks = ring.members(4);
                byte[] image;
                List<WriteChain> started;
                try (Raid5Array array = create(disks, ConsistencyPolicy.PPL)) {
                    image = LoadGenerator.fillRandom(array, seed + round);
                    ring.cutPowerAfter(cutAfter);
                    Chains running = startChains(array, image, chains, writes, seed * 31 + round * 97);
                    started = running.chains();
                    assertTrue(
                            running.done().await(60, TimeUnit.SECONDS),
                            "every write chain ended (round " + round + ")");
                    Crash.of(array); // nothing more is written
                }
                List<MemoryDisk> after = ring.snapshot();
                try (Raid5Array again = Raid5Array.assemble(new ArrayList<>(after))) {
                    ArrayOracle.assertParityConsistent(
                            new ArrayList<>(after),
                            again.core.table.slots[0].dataOffsetBytes,
                            again.layout().memberBytesUsed());
                    byte[] read = new byte[image.length];
                    again.read(0, ByteBuffer.wrap(read), 0, read.length);
                    for (WriteChain chain : started) {
                        if (chain.unfinished) {
                            byte[] now = java.util.Arrays.copyOfRange(read, chain.at, chain.at + chain.length);
                            byte[] newer = java.util.Arrays.copyOfRange(image, chain.at, chain.at + chain.length);
                            if (java.util.Arrays.equals(now, chain.before)) {
                                System.arraycopy(chain.before, 0, image, chain.at, chain.length);
                            } else {
                                assertArrayEquals(
                                        newer,
                                        now,
                                        "round " + round + " (cut after " + cutAfter + "): a write in flight at "
                                                + chain.at + " is neither old nor new");
                            }
                        }
                    }
                    assertArrayEquals(image, read, "round " + round + " (cut after " + cutAfter + "): the data");
                }
            }
        }
    }

    /** A member's blocking call, run on the fake ring's thread. */
    private interface Transfer {
        void run() throws IOException;
    }

    /** A 4-member array of 64 KiB chunks under {@code policy}, created clean over {@code disks}. */
    private static Raid5Array create(List<MemberDisk> disks, ConsistencyPolicy policy) throws IOException {
        return Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .assumeClean(true)
                        .consistencyPolicy(policy)
                        .build(),
                disks);
    }

    /** Chains of writes started at once on {@code array}, and what they report when they end. */
    private record Chains(
            List<WriteChain> chains,
            ConcurrentHashMap<String, Boolean> threads,
            ConcurrentLinkedQueue<Throwable> errors,
            CountDownLatch done) {}

    /** Starts {@code chains} chains of {@code writes} writes each, chain {@code c} drawing from {@code seed + c}. */
    private static Chains startChains(Raid5Array array, byte[] image, int chains, int writes, long seed) {
        Chains started = new Chains(
                new ArrayList<>(),
                new ConcurrentHashMap<>(),
                new ConcurrentLinkedQueue<>(),
                new CountDownLatch(chains));
        for (int c = 0; c < chains; c++) {
            WriteChain chain = new WriteChain(
                    array,
                    image,
                    c,
                    chains,
                    new Random(seed + c),
                    writes,
                    started.threads(),
                    started.errors(),
                    started.done());
            started.chains().add(chain);
            chain.next();
        }
        return started;
    }

    /** What a run of chains saw. */
    private record Run(ConcurrentHashMap<String, Boolean> threads) {}

    /**
     * Fills the array, runs {@code afterFill}, then {@code chains} chains of {@code writes} random writes each, then checks
     * the array against the image and (when no member is expected to fail) parity from scratch.
     */
    private static Run runChains(
            List<MemberDisk> disks,
            ConsistencyPolicy policy,
            int chains,
            int writes,
            Integer failingSlot,
            Runnable afterFill)
            throws Exception {
        try (Raid5Array array = create(disks, policy)) {
            long seed = System.nanoTime();
            System.out.println("WritesWithoutThreadTest seed " + seed);
            byte[] image = LoadGenerator.fillRandom(array, seed); // also marks the array dirty
            afterFill.run();
            Chains started = startChains(array, image, chains, writes, seed);
            assertTrue(started.done().await(120, TimeUnit.SECONDS), "every write chain finished");
            assertTrue(started.errors().isEmpty(), "errors: " + started.errors());
            if (failingSlot == null) {
                assertFalse(array.isDegraded(), "no member failed");
            } else {
                assertEquals(
                        MemberState.FAULTY,
                        array.core.table.slots[failingSlot].state,
                        "the member whose I/O failed is failed");
            }
            ArrayOracle.assertArrayHolds(array, image);
            WriteIntentBitmap bitmap = WriteIntentBitmap.in(array.core);
            if (bitmap != null) {
                // Every write's bracket was closed: an idle array clears every bit it may clear. A
                // degraded write keeps its bits for the member's return.
                bitmap.clearIdleBits();
                if (failingSlot == null) {
                    assertEquals(0, bitmap.dirtyChunks(), "bits left set after every write ended");
                } else {
                    assertTrue(bitmap.dirtyChunks() > 0, "the degraded writes kept their bits");
                }
            }
            if (failingSlot == null) {
                ArrayOracle.assertParityConsistent(
                        disks,
                        array.core.table.slots[0].dataOffsetBytes,
                        array.layout().memberBytesUsed());
            }
            return new Run(started.threads());
        }
    }

    /**
     * Writes of 4 to 16 KiB, one after another, each started by the last one's callback. Chain
     * {@code id} owns the 16 KiB pieces {@code q} with {@code q % chains == id}, so chains write
     * different bytes of the same stripes at once and often contend for a stripe's lock (the
     * loser takes the blocking path).
     */
    private static final class WriteChain implements IoCallback {
        final Raid5Array array;
        final byte[] image;
        final int id;
        final int chains;
        final Random random;
        final ConcurrentHashMap<String, Boolean> threads;
        final ConcurrentLinkedQueue<Throwable> errors;
        final CountDownLatch done;
        final ByteBuffer buffer = ByteBuffer.allocateDirect(5 * BLOCK).alignedSlice(BLOCK);
        int left;
        int at;
        int length;
        /** The bytes the write in hand replaces, and whether it has not ended well (yet). */
        byte[] before;

        volatile boolean unfinished;

        WriteChain(
                Raid5Array array,
                byte[] image,
                int id,
                int chains,
                Random random,
                int writes,
                ConcurrentHashMap<String, Boolean> threads,
                ConcurrentLinkedQueue<Throwable> errors,
                CountDownLatch done) {
            this.array = array;
            this.image = image;
            this.id = id;
            this.chains = chains;
            this.random = random;
            this.left = writes;
            this.threads = threads;
            this.errors = errors;
            this.done = done;
        }

        void next() {
            if (left-- == 0) {
                done.countDown();
                return;
            }
            int quads = image.length / QUAD;
            int quad = random.nextInt(quads / chains) * chains + id;
            int first = random.nextInt(4);
            at = quad * QUAD + first * BLOCK;
            length = (1 + random.nextInt(4 - first)) * BLOCK;
            byte[] data = new byte[length];
            random.nextBytes(data);
            buffer.clear();
            buffer.put(data).flip();
            before = java.util.Arrays.copyOfRange(image, at, at + length);
            System.arraycopy(data, 0, image, at, length); // this chain alone writes these bytes
            unfinished = true;
            array.writeAsync(at, buffer, 0, length, this, 0);
        }

        @Override
        public void ioDone(int tag, IOException error) {
            threads.put(Thread.currentThread().getName().replaceAll("-\\d+$", ""), true);
            if (error != null) {
                errors.add(error);
                done.countDown();
                return;
            }
            unfinished = false;
            try {
                next();
            } catch (RuntimeException e) {
                errors.add(e);
                done.countDown();
            }
        }
    }

    /**
     * Members that claim the io_uring ({@link #batchesOnRing}) and complete every I/O on one thread
     * of their own, named {@link #THREAD}, as the ring's loop does; a member may be told to fail one
     * write or read, the n-th a write without a thread issues to it. Nothing else fails, so only the
     * write that saw the error can fail the member: one that acknowledged without failing it would
     * leave it in sync with stale bytes (or in sync after a read error, as md never does).
     */
    private static final class FakeRing implements AutoCloseable {
        static final String THREAD = "fake-ring";
        static final String READER = "fake-reader";
        /** Pipelined on a connection ({@link MemberDisk} says so), its loop a reader: else the ring. */
        final boolean onConnection;

        final ExecutorService loop;
        final List<RingMember> members = new ArrayList<>();
        /** Member I/O submitted while on the loop's own thread. */
        final AtomicInteger submittedOnTheLoop = new AtomicInteger();

        FakeRing() {
            this(false);
        }

        private FakeRing(boolean onConnection) {
            this.onConnection = onConnection;
            this.loop = Executors.newSingleThreadExecutor(
                    r -> onConnection ? new CompletionThread(r, READER) : daemon(new Thread(r, THREAD)));
        }

        static FakeRing connection() {
            return new FakeRing(true);
        }

        private static Thread daemon(Thread t) {
            t.setDaemon(true);
            return t;
        }

        List<MemberDisk> members(int n) {
            List<MemberDisk> disks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                RingMember m = new RingMember(new MemoryDisk(MEMBER, "ring" + i));
                members.add(m);
                disks.add(m);
            }
            return disks;
        }

        /** Member I/Os left to land before the power is cut (every member's, in the order they run). */
        final AtomicLong powerLeft = new AtomicLong(Long.MAX_VALUE);

        void cutPowerAfter(long ios) {
            powerLeft.set(ios);
        }

        /** Whether the I/O about to run finds the power cut (it then neither lands nor succeeds). */
        boolean powerCut() {
            return powerLeft.getAndDecrement() <= 0;
        }

        /** Copies of the members' bytes as they are now. */
        List<MemoryDisk> snapshot() throws IOException {
            List<MemoryDisk> copies = new ArrayList<>();
            ByteBuffer buf = ByteBuffer.allocate(1 << 20);
            for (RingMember m : members) {
                MemoryDisk copy = new MemoryDisk(MEMBER, m.name() + "-after");
                for (long at = 0; at < MEMBER; at += buf.capacity()) {
                    m.inner.read(at, buf, 0, buf.capacity());
                    copy.write(at, buf, 0, buf.capacity());
                }
                copies.add(copy);
            }
            return copies;
        }

        void failWritesOf(int i, int after) {
            members.get(i).failWritesAfter.set(after);
        }

        void failReadsOf(int i, int after) {
            members.get(i).failReadsAfter.set(after);
        }

        @Override
        public void close() {
            loop.shutdownNow();
        }

        private final class RingMember extends ForwardingAsyncDisk {
            final AtomicInteger failWritesAfter = new AtomicInteger(Integer.MAX_VALUE);
            final AtomicInteger failReadsAfter = new AtomicInteger(Integer.MAX_VALUE);
            final MemberDisk inner;

            RingMember(MemberDisk inner) {
                super(inner);
                this.inner = inner;
            }

            @Override
            public void readAsync(
                    long position, ByteBuffer dst, int dstOffset, int length, IoCallback callback, int tag) {
                onLoop(failReadsAfter, "read", () -> inner.read(position, dst, dstOffset, length), callback, tag);
            }

            @Override
            public void writeAsync(
                    long position, ByteBuffer src, int srcOffset, int length, IoCallback callback, int tag) {
                onLoop(failWritesAfter, "write", () -> inner.write(position, src, srcOffset, length), callback, tag);
            }

            @Override
            public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
                if (powerCut()) {
                    throw new IOException(name() + ": power cut");
                }
                inner.read(position, dst, dstOffset, length);
            }

            @Override
            public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
                if (powerCut()) {
                    throw new IOException(name() + ": power cut");
                }
                inner.write(position, src, srcOffset, length);
            }

            @Override
            public void flush() throws IOException {
                if (powerCut()) {
                    throw new IOException(name() + ": power cut");
                }
                inner.flush();
            }

            /** Runs {@code transfer} on the ring's thread, or fails it there if it is the one to fail. */
            private void onLoop(AtomicInteger countdown, String what, Transfer transfer, IoCallback callback, int tag) {
                String current = Thread.currentThread().getName();
                if (current.equals(THREAD) || current.equals(READER)) {
                    submittedOnTheLoop.incrementAndGet();
                }
                boolean fail = failsNow(countdown);
                loop.execute(() -> {
                    IOException error = null;
                    try {
                        if (fail) {
                            throw new IOException(name() + ": injected " + what + " error");
                        }
                        if (powerCut()) {
                            throw new IOException(name() + ": power cut");
                        }
                        transfer.run();
                    } catch (IOException e) {
                        error = e;
                    }
                    callback.ioDone(tag, error);
                });
            }

            /**
             * Exactly the n-th I/O issued off the shared I/O threads fails: one issued by a write
             * without a thread (from a chain's callback or the ring's thread), never the blocking path's.
             */
            private boolean failsNow(AtomicInteger countdown) {
                return !Thread.currentThread().getName().startsWith("member-io") && countdown.getAndDecrement() == 0;
            }

            @Override
            public void flushAsync(IoCallback callback, int tag) {
                onLoop(new AtomicInteger(Integer.MAX_VALUE), "flush", inner::flush, callback, tag);
            }

            @Override
            public boolean completesInline() {
                return false;
            }

            @Override
            public boolean handsOffLocalIo() {
                return true;
            }

            @Override
            public boolean batchesOnRing() {
                return !onConnection;
            }

            @Override
            public boolean pipelinesOnConnection() {
                return onConnection;
            }
        }
    }
}
