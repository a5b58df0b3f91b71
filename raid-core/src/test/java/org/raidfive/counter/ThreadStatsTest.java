package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Per-thread statistics cells: no add lost, threads that end folded in, sums that never go back. */
@Timeout(60)
class ThreadStatsTest {

    @Test
    void addsFromManyThreadsThatComeAndGoAreAllCounted() throws Exception {
        ThreadStats stats = new ThreadStats(3);
        AtomicBoolean stop = new AtomicBoolean();
        List<Long> seen = new ArrayList<>();
        Thread reader = new Thread(() -> {
            long last = 0;
            while (!stop.get()) {
                long now = stats.sum(1);
                if (now < last) {
                    throw new AssertionError("the sum went back from " + last + " to " + now);
                }
                last = now;
            }
            synchronized (seen) {
                seen.add(last);
            }
        });
        reader.start();
        int waves = 20;
        int threadsPerWave = 6;
        int adds = 20_000;
        for (int w = 0; w < waves; w++) {
            List<Thread> wave = new ArrayList<>();
            for (int t = 0; t < threadsPerWave; t++) {
                Thread th = new Thread(() -> {
                    long[] own = stats.mine();
                    for (int i = 0; i < adds; i++) {
                        ThreadStats.add(own, 0, 1);
                        ThreadStats.add(own, 1, 4096);
                    }
                    stats.add(2, 7);
                });
                wave.add(th);
                th.start();
            }
            for (Thread th : wave) {
                th.join();
            }
        }
        stop.set(true);
        reader.join();
        long threads = (long) waves * threadsPerWave;
        assertEquals(threads * adds, stats.sum(0));
        assertEquals(threads * adds * 4096, stats.sum(1));
        assertEquals(threads * 7, stats.sum(2));
        assertEquals(0, stats.threads(), "every ended thread's cells were folded and dropped");
        assertTrue(seen.get(0) <= threads * adds * 4096);
    }
}
