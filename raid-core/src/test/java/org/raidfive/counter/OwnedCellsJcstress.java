package org.raidfive.counter;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.II_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * jcstress tests of the owned cells on real hardware and the real JIT, where the plain stores may
 * be reordered and the membarrier must close the gap (Lincheck runs sequentially consistently and
 * cannot see that). Run by {@link OwnedCellsJcstressTest}; by hand:
 * {@code java -cp <test classpath> org.openjdk.jcstress.Main -t OwnedCellsJcstress}.
 */
public final class OwnedCellsJcstress {
    private OwnedCellsJcstress() {}

    /** A get in a thread's own cell against a switch to atomic: counted once, never lost. */
    @JCStressTest
    @Outcome(
            id = {"1, 1", "0, 1"},
            expect = Expect.ACCEPTABLE,
            desc = "the get is in the fold (1) or lands on the atomic word after it (0); exact 1 at the end")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a get lost or counted twice")
    @State
    public static class GetAgainstFold {
        final PercpuRef ref = PercpuRef.inflightOwned();

        @Actor
        public void getter() {
            ref.get();
        }

        @Actor
        public void switcher(JJ_Result r) {
            ref.switchToAtomicSync();
            r.r1 = ref.exactCountOrMinusOne();
        }

        @Arbiter
        public void end(JJ_Result r) {
            ref.switchToAtomicSync();
            r.r2 = ref.exactCountOrMinusOne();
        }
    }

    /**
     * tryGetLive against kill: it either takes its reference before the kill (the fold counts it,
     * so the count is not zero after the kill) or fails; never both zero and held.
     */
    @JCStressTest
    @Outcome(
            id = {"1, 0, 1", "0, 1, 0"},
            expect = Expect.ACCEPTABLE,
            desc = "tryGetLive before the kill (held, not zero) or after it (failed, zero)")
    @Outcome(expect = Expect.FORBIDDEN, desc = "early zero, or a reference taken after the kill, or lost")
    @State
    public static class TryGetLiveAgainstKill {
        final PercpuRef ref = PercpuRef.inflightOwned();

        @Actor
        public void taker(III_Result r) {
            r.r1 = ref.tryGetLive() ? 1 : 0;
        }

        @Actor
        public void killer(III_Result r) {
            ref.kill();
            r.r2 = ref.isZero() ? 1 : 0;
        }

        @Arbiter
        public void end(III_Result r) {
            r.r3 = (int) ref.exactCountOrMinusOne();
        }
    }

    /** A reader of the rw-semaphore (owned cell) against a writer: never a half-written pair. */
    @JCStressTest
    @Outcome(
            id = {"0, 0", "1, 1"},
            expect = Expect.ACCEPTABLE,
            desc = "the read lock excluded the writer")
    @Outcome(expect = Expect.FORBIDDEN, desc = "a reader saw the writer's critical section half done")
    @State
    public static class ReaderAgainstWriter {
        final PercpuRwSemaphore sem = new PercpuRwSemaphore(2, 0, true);
        int x;
        int y;

        @Actor
        public void reader(II_Result r) {
            sem.readLock();
            r.r1 = x;
            r.r2 = y;
            sem.readUnlock();
        }

        @Actor
        public void writer() {
            sem.writeLock();
            x = 1;
            y = 1;
            sem.writeUnlock();
        }
    }
}
