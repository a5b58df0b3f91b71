package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.disk.AsyncIo;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/** AsyncIo's futures: bytes against a flat image, flush, errors, backpressure and drain. */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AsyncIoFuturesTest {
    private static final int BLOCK = 4096;

    @Test
    void futuresOverAnArrayWithLatencyMatchAFlatImage() throws Exception {
        long seed = System.nanoTime();
        System.out.println("AsyncIoFuturesTest seed " + seed);
        Random random = new Random(seed);
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            members.add(new FaultyDisk(new MemoryDisk(2L << 20, "slow" + i)).latency(200, TimeUnit.MICROSECONDS));
        }
        try (Raid5Array array = Raid5Array.create(
                        ArraySpec.builder()
                                .chunkSize(16 * 1024)
                                .assumeClean(true)
                                .build(),
                        members);
                AsyncIo io = new AsyncIo(array, 2, 32)) {
            int blocks = (int) (array.size() / BLOCK);
            byte[] image = new byte[blocks * BLOCK];
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int b = 0; b < blocks; b++) {
                byte[] data = new byte[BLOCK];
                random.nextBytes(data);
                System.arraycopy(data, 0, image, b * BLOCK, BLOCK);
                writes.add(io.write((long) b * BLOCK, ByteBuffer.wrap(data), 0, BLOCK));
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            io.flush().get(60, TimeUnit.SECONDS);
            ByteBuffer back = ByteBuffer.allocateDirect(image.length);
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (int b = 0; b < blocks; b++) {
                reads.add(io.read((long) b * BLOCK, back, b * BLOCK, BLOCK));
            }
            CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            byte[] got = new byte[image.length];
            back.get(0, got);
            assertArrayEquals(image, got, "seed " + seed);

            ExecutionException beyond = assertThrows(
                    ExecutionException.class,
                    () -> io.read(array.size(), ByteBuffer.allocate(BLOCK), 0, BLOCK)
                            .get(10, TimeUnit.SECONDS));
            assertInstanceOf(EOFException.class, beyond.getCause());
            assertTrue(io.awaitDrained(Duration.ofSeconds(10)));
            assertEquals(0, io.inFlight());
        }
    }

    @Test
    void aFullAsyncIoHoldsTheNextCallBackAndDrainWaitsForEveryOne() throws Exception {
        FaultyDisk disk = new FaultyDisk(new MemoryDisk(1 << 20, "gate")).hang();
        AsyncIo io = new AsyncIo(disk, 2, 4);
        try {
            List<CompletableFuture<Void>> first = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                first.add(io.read((long) i * BLOCK, ByteBuffer.allocate(BLOCK), 0, BLOCK));
            }
            AtomicReference<CompletableFuture<Void>> fifth = new AtomicReference<>();
            Thread caller = new Thread(
                    () -> {
                        try {
                            fifth.set(io.write(0, ByteBuffer.allocate(BLOCK), 0, BLOCK));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "fifth-caller");
            caller.start();
            caller.join(300);
            assertTrue(caller.isAlive(), "a fifth call went through with capacity 4 in flight");
            assertFalse(io.awaitDrained(Duration.ofMillis(100)), "drained while every request hangs");
            for (CompletableFuture<Void> f : first) {
                assertFalse(f.isDone());
            }
            disk.heal();
            caller.join(10_000);
            assertFalse(caller.isAlive());
            assertTrue(io.awaitDrained(Duration.ofSeconds(10)));
            for (CompletableFuture<Void> f : first) {
                assertTrue(f.isDone() && !f.isCompletedExceptionally(), "completed once drained: " + f);
            }
            assertTrue(fifth.get().isDone(), "the held call's request completed too");
            assertEquals(0, io.inFlight());
        } finally {
            disk.heal();
            io.close();
        }
    }

    @Test
    void aSubmitterKeepsItsOwnBoundWithFutures() throws Exception {
        FaultyDisk disk = new FaultyDisk(new MemoryDisk(1 << 20, "gate2")).hang();
        try (AsyncIo io = new AsyncIo(disk, 4, 64)) {
            AsyncIo.Submitter submitter = io.submitter(2);
            CompletableFuture<Void> a = submitter.write(0, ByteBuffer.allocate(BLOCK), 0, BLOCK);
            CompletableFuture<Void> b = submitter.flush();
            Thread third = new Thread(() -> {
                try {
                    submitter.read(0, ByteBuffer.allocate(BLOCK), 0, BLOCK).get();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            third.start();
            third.join(300);
            assertTrue(third.isAlive(), "a third request went through a submitter bound of 2");
            assertEquals(2, submitter.inFlight());
            disk.heal();
            third.join(10_000);
            assertFalse(third.isAlive());
            a.get(10, TimeUnit.SECONDS);
            b.get(10, TimeUnit.SECONDS);
            assertTrue(submitter.awaitDrained(Duration.ofSeconds(10)));
        } finally {
            disk.heal();
        }
    }
}
