package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.raidfive.counter.CounterMode;
import org.raidfive.disk.MemberDisk;

/**
 * Quiesce under a running read load: while the configuration is held, no aligned read and no member
 * I/O is in flight (the counters, switched to atomic, read exactly zero), and readers resume
 * afterwards without an error or a wrong byte.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class QuiesceTest {

    @ParameterizedTest
    @EnumSource(CounterMode.class)
    void quiesceDrainsReadsAndReadersResume(CounterMode mode) throws Exception {
        List<MemberDisk> members = ArrayDataTest.memoryMembers(4, (1 << 20) + 64L * 16384);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(16384)
                        .assumeClean(true)
                        .counterMode(mode)
                        .build(),
                members)) {
            byte[] image = LoadGenerator.fillRandom(array, 21);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong reads = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                int id = t;
                Thread r = new Thread(() -> {
                    Random random = new Random(id);
                    ByteBuffer buf = ByteBuffer.allocateDirect(4096);
                    byte[] got = new byte[4096];
                    try {
                        while (!stop.get()) {
                            int block = random.nextInt(image.length / 4096);
                            array.read(block * 4096L, buf, 0, 4096);
                            buf.get(0, got);
                            if (!java.util.Arrays.equals(got, 0, 4096, image, block * 4096, block * 4096 + 4096)) {
                                throw new AssertionError("wrong bytes at block " + block);
                            }
                            reads.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                r.start();
                readers.add(r);
            }
            AtomicLong quiesced = new AtomicLong();
            for (int i = 0; i < 200; i++) {
                long before = reads.get();
                array.quiesce(() -> {
                    assertTrue(array.core.activeAlignedReads.awaitZero(Duration.ZERO), "aligned reads drained");
                    for (Member m : array.core.table.slots) {
                        m.nrPending.switchToAtomicSync();
                        assertTrue(m.nrPending.awaitZero(Duration.ZERO), "no I/O in flight on " + m.name());
                        if (mode != CounterMode.ATOMIC) {
                            m.nrPending.switchToPercpu();
                        }
                    }
                    quiesced.incrementAndGet();
                });
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (reads.get() < before + 20 && failure.get() == null) {
                    assertTrue(System.nanoTime() < deadline, "readers resume after quiesce " + i);
                    Thread.onSpinWait();
                }
            }
            stop.set(true);
            for (Thread r : readers) {
                r.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertTrue(quiesced.get() == 200);
            assertTrue(reads.get() > 4000, "reads ran throughout: " + reads.get());
        }
    }
}
