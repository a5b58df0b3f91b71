package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.ArrayEvent.Kind;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/**
 * Array events as a program sees them: each once, numbered without gaps, in the order things
 * happened, on the array's event thread, under concurrent I/O and a member failing under it; a
 * listener that throws or blocks harms neither the others nor the I/O.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ArrayEventsTest {
    private static final int CHUNK = 16384;
    private static final long MEMBER = (1 << 20) + 64L * CHUNK;

    /** Collects events with the thread they came on. */
    static final class Recorder implements ArrayListener {
        final ConcurrentLinkedQueue<ArrayEvent> events = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> threads = new ConcurrentLinkedQueue<>();

        @Override
        public void onEvent(ArrayEvent event) {
            threads.add(Thread.currentThread().getName());
            events.add(event);
        }

        List<ArrayEvent> list() {
            return new ArrayList<>(events);
        }

        ArrayEvent await(Predicate<ArrayEvent> what, String description) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                for (ArrayEvent e : events) {
                    if (what.test(e)) {
                        return e;
                    }
                }
                Thread.sleep(5);
            }
            throw new AssertionError("no " + description + " event within 60 s; got " + list());
        }
    }

    @Test
    void aFailureUnderLoadAndTheRebuildAreToldOnceEachInOrder() throws Exception {
        long seed = System.nanoTime();
        System.out.println("ArrayEventsTest seed " + seed);
        List<FaultyDisk> members = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            members.add(new FaultyDisk(new MemoryDisk(MEMBER, "m" + i)));
        }
        Recorder recorder = new Recorder();
        Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .name("events")
                        .listener(recorder)
                        .build(),
                members); // not assumed clean: the initial resync is told too
        try {
            SyncOutcome resync = array.awaitSync(Duration.ofSeconds(60));
            assertEquals(SyncOutcome.Result.DONE, resync.result(), "initial resync: " + resync);
            recorder.await(e -> e.kind() == Kind.PASS_FINISHED, "resync finished");
            byte[] image = LoadGenerator.fillRandom(array, seed);
            try (LoadGenerator load = new LoadGenerator(array, image, 4, seed).start()) {
                load.awaitOperations(200);
                members.get(1).disappear(); // every thread's next I/O on m1 fails at once
                load.awaitOperations(600);
                load.stop();
                ArrayOracle.assertArrayHolds(array, image);
            }
            array.addSpare(new MemoryDisk(MEMBER, "spare"));
            SyncOutcome rebuild = array.awaitSync(Duration.ofSeconds(60));
            assertEquals(SyncOutcome.Result.DONE, rebuild.result(), "rebuild: " + rebuild);
            recorder.await(e -> e.kind() == Kind.SPARE_ACTIVE, "spare active");
        } finally {
            array.close();
        }

        List<ArrayEvent> events = recorder.list();
        for (int i = 0; i < events.size(); i++) {
            assertEquals(i + 1, events.get(i).sequence(), "events numbered without gaps, in order: " + events);
            assertEquals("events", events.get(i).array());
        }
        for (String thread : recorder.threads) {
            assertEquals("raid-events-events", thread, "delivered on the array's event thread");
        }
        assertEquals(1, count(events, e -> e.kind() == Kind.MEMBER_FAILED), "one failure, told once: " + events);
        assertEquals(1, count(events, e -> e.kind() == Kind.DEGRADED), "degraded once: " + events);
        assertEquals(0, count(events, e -> e.kind() == Kind.FAILED), events.toString());
        ArrayEvent failed = first(events, Kind.MEMBER_FAILED);
        assertEquals("m1", failed.member());
        assertTrue(failed.detail().contains("disappeared"), "the cause is told: " + failed.detail());
        assertEquals("Fail", failed.mdadmEvent());

        List<Kind> expectedOrder = List.of(
                Kind.PASS_STARTED,
                Kind.PASS_FINISHED,
                Kind.DIRTY,
                Kind.MEMBER_FAILED,
                Kind.DEGRADED,
                Kind.SPARE_ADDED,
                Kind.MEMBER_REMOVED,
                Kind.PASS_STARTED,
                Kind.PASS_PROGRESS,
                Kind.PASS_PROGRESS,
                Kind.PASS_PROGRESS,
                Kind.PASS_PROGRESS,
                Kind.PASS_FINISHED,
                Kind.SPARE_ACTIVE);
        int at = 0;
        for (ArrayEvent e : events) {
            if (at < expectedOrder.size() && e.kind() == expectedOrder.get(at)) {
                at++;
            }
        }
        assertEquals(expectedOrder.size(), at, "events out of order or missing: " + events);
        ArrayEvent recovery = events.stream()
                .filter(e -> e.kind() == Kind.PASS_STARTED && "recover".equals(e.detail()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no recovery start: " + events));
        assertEquals("spare", recovery.member());
        assertEquals("RebuildStarted", recovery.mdadmEvent());
        ArrayEvent done = events.stream()
                .filter(e -> e.kind() == Kind.PASS_FINISHED && e.detail().startsWith("recover"))
                .findFirst()
                .orElseThrow();
        assertEquals(SyncOutcome.Result.DONE, done.outcome());
        assertEquals("RebuildFinished", done.mdadmEvent());
        List<String> progress = events.stream()
                .filter(e -> e.kind() == Kind.PASS_PROGRESS)
                .map(ArrayEvent::mdadmEvent)
                .toList();
        List<String> steps = List.of("Rebuild20", "Rebuild40", "Rebuild60", "Rebuild80");
        assertEquals(steps, progress.subList(0, 4), "md's RebuildNN steps of the resync, each once: " + progress);
        assertEquals(steps, progress.subList(4, 8), "and of the recovery: " + progress);
        assertEquals(8, progress.size(), progress.toString());
        assertEquals(Kind.CLEAN, events.get(events.size() - 1).kind(), "a clean close is the last event");
    }

    @Test
    void aThrowingOrBlockedListenerHarmsNeitherOtherListenersNorIo() throws Exception {
        List<MemberDisk> members = new ArrayList<>(ArrayDataTest.memoryMembers(4, MEMBER));
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), members)) {
            AtomicInteger thrown = new AtomicInteger();
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch blockedOnce = new CountDownLatch(1);
            array.addListener(e -> {
                thrown.incrementAndGet();
                throw new IllegalStateException("listener bug");
            });
            Recorder recorder = new Recorder();
            array.addListener(recorder);
            ArrayListener blocking = e -> {
                blockedOnce.countDown();
                try {
                    release.await();
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            };
            array.addListener(blocking);
            ByteBuffer buf = ByteBuffer.allocateDirect(4 * CHUNK);
            array.write(0, buf, 0, 4 * CHUNK); // DIRTY: the blocking listener now holds the event thread
            assertTrue(blockedOnce.await(10, TimeUnit.SECONDS));
            array.fail(members.get(2)); // a failure while events cannot be delivered
            for (int i = 0; i < 150; i++) {
                array.write((long) i * CHUNK, buf, 0, CHUNK);
                array.read((long) i * CHUNK, buf, 0, CHUNK);
            }
            assertTrue(array.isDegraded());
            assertFalse(
                    recorder.list().stream().anyMatch(e -> e.kind() == Kind.MEMBER_FAILED),
                    "delivered past a blocked listener");
            release.countDown();
            ArrayEvent failed = recorder.await(e -> e.kind() == Kind.MEMBER_FAILED, "member failed");
            assertNotNull(failed.detail());
            recorder.await(e -> e.kind() == Kind.DEGRADED, "degraded");
            assertTrue(thrown.get() >= 3, "the throwing listener still gets every event: " + thrown.get());
        }
    }

    @Test
    void awaitSyncSaysHowAPassEnded() throws Exception {
        List<MemberDisk> members = new ArrayList<>(ArrayDataTest.memoryMembers(4, MEMBER));
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder().chunkSize(CHUNK).assumeClean(true).build(), members)) {
            assertEquals(SyncOutcome.Result.NONE, array.awaitSync(Duration.ZERO).result());
            LoadGenerator.fillRandom(array, 3);
            byte[] junk = new byte[4096];
            java.util.Arrays.fill(junk, (byte) 0x5a);
            long dataOffset = array.core.table.slots[0].dataOffsetBytes;
            members.get(3)
                    .write(dataOffset + 5 * CHUNK, ByteBuffer.wrap(junk), 0, junk.length); // parity or data: a mismatch
            array.startCheck(false);
            SyncOutcome check = array.awaitSync(Duration.ofSeconds(60));
            assertEquals(SyncOutcome.Result.DONE, check.result());
            assertEquals(8, check.mismatchSectors(), "one 4 KiB page found by the check");
            assertEquals(SyncAction.CHECK, check.pass().action());
        }
    }

    private static long count(List<ArrayEvent> events, Predicate<ArrayEvent> p) {
        return events.stream().filter(p).count();
    }

    private static ArrayEvent first(List<ArrayEvent> events, Kind kind) {
        return events.stream()
                .filter(e -> e.kind() == kind)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " in " + events));
    }
}
