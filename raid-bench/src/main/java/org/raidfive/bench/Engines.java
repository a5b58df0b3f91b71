package org.raidfive.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.raidfive.disk.AsyncIo;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;

/**
 * The two ways a job issues I/O. {@code iodepth == 1}: the job's thread calls the target itself
 * and waits (fio's psync). {@code iodepth > 1}: the job keeps {@code iodepth} requests in flight
 * through one {@link AsyncIo} shared by the run's jobs; each request slot re-submits from its
 * completion until the window closes (a closed loop, like fio's libaio engine at a fixed depth).
 *
 * <p>Per issuer (a sync job, or one async slot) there is one buffer, one {@link IoPattern} and
 * one {@link JobStats}; nothing is shared on the I/O path and nothing is allocated per I/O.
 */
final class Engines {
    private Engines() {}

    static ByteBuffer buffer(int bs, long seed) {
        ByteBuffer b =
                ByteBuffer.allocateDirect(bs + FileDisk.DIRECT_ALIGNMENT).alignedSlice(FileDisk.DIRECT_ALIGNMENT);
        long x = seed | 1;
        for (int i = 0; i + 8 <= bs; i += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b.putLong(i, x);
        }
        return b;
    }

    /** fio's psync: the job thread issues one I/O at a time. */
    static final class SyncJob extends Thread {
        private final MemberDisk disk;
        private final ByteBuffer buf;
        private final IoPattern pattern;
        private final int bs;
        final JobStats stats;
        private Window window;

        SyncJob(int id, BenchConfig c, MemberDisk disk, long seed) {
            super("bench-job-" + id);
            setDaemon(true);
            this.disk = disk;
            this.bs = c.bs();
            this.buf = buffer(bs, seed);
            this.pattern = new IoPattern(c, seed, id * (c.size() / c.bs() / c.numjobs()));
            this.stats = new JobStats(c.readPercent() < 100);
        }

        /** Starts the thread for {@code w} (made after every job is built, so setup does not eat the ramp). */
        void start(Window w) {
            this.window = w;
            start();
        }

        @Override
        public void run() {
            long start = window.start();
            long end = window.end();
            try {
                while (System.nanoTime() < window.begin()) {
                    Thread.onSpinWait();
                }
                while (true) {
                    long offset = pattern.nextOffset();
                    boolean read = pattern.nextIsRead();
                    long t0 = System.nanoTime();
                    if (t0 >= end) {
                        return;
                    }
                    if (read) {
                        disk.read(offset, buf, 0, bs);
                    } else {
                        disk.write(offset, buf, 0, bs);
                    }
                    long t1 = System.nanoTime();
                    stats.completed(read, t1, t1 - t0, start, end);
                }
            } catch (IOException | RuntimeException e) {
                stats.error = e;
            }
        }
    }

    /** {@code iodepth} slots of one job, each a closed loop through {@link AsyncIo}. */
    static final class AsyncJob implements AsyncIo.Completion<AsyncJob.Slot> {
        private final AsyncIo.Submitter submitter;
        private final int bs;
        private volatile Window window;
        private final List<Slot> slots = new ArrayList<>();
        private final AtomicInteger active = new AtomicInteger();
        private final CountDownLatch stopped = new CountDownLatch(1);

        final class Slot {
            final ByteBuffer buf;
            final IoPattern pattern;
            final JobStats stats;
            boolean read;
            long submitted;

            Slot(BenchConfig c, long seed, long startBlock) {
                buf = buffer(bs, seed);
                pattern = new IoPattern(c, seed, startBlock, c.iodepth());
                stats = new JobStats(c.readPercent() < 100);
            }
        }

        AsyncJob(int id, BenchConfig c, AsyncIo io, long seed) {
            this.submitter = io.submitter(c.iodepth());
            this.bs = c.bs();
            long blocks = c.size() / c.bs();
            long perJob = blocks / c.numjobs();
            for (int s = 0; s < c.iodepth(); s++) {
                // Sequential slots of one job start one block apart and stride by depth: together they walk the job's
                // region.
                slots.add(new Slot(c, seed * 31 + s, id * perJob + s));
            }
        }

        /** Starts every slot (call at the window's begin). */
        void start(Window w) throws InterruptedException {
            window = w;
            active.set(slots.size());
            for (Slot s : slots) {
                submitNext(s);
            }
        }

        private void submitNext(Slot s) throws InterruptedException {
            long offset = s.pattern.nextOffset();
            s.read = s.pattern.nextIsRead();
            s.submitted = System.nanoTime();
            if (s.read) {
                submitter.submitRead(offset, s.buf, 0, bs, this, s);
            } else {
                submitter.submitWrite(offset, s.buf, 0, bs, this, s);
            }
        }

        @Override
        public void completed(Slot s) {
            long now = System.nanoTime();
            s.stats.completed(s.read, now, now - s.submitted, window.start(), window.end());
            if (now >= window.end()) {
                retire();
                return;
            }
            try {
                submitNext(s);
            } catch (InterruptedException | RuntimeException e) {
                s.stats.error = e;
                retire();
            }
        }

        @Override
        public void failed(Slot s, IOException error) {
            s.stats.error = error;
            retire();
        }

        private void retire() {
            if (active.decrementAndGet() == 0) {
                stopped.countDown();
            }
        }

        /** Waits until every slot has seen the window close and stopped re-submitting. */
        boolean awaitStopped(long timeout, TimeUnit unit) throws InterruptedException {
            return stopped.await(timeout, unit);
        }

        List<JobStats> stats() {
            List<JobStats> list = new ArrayList<>();
            for (Slot s : slots) {
                list.add(s.stats);
            }
            return list;
        }
    }
}
