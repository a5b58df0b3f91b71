import org.raidfive.counter.CounterMode;
import org.raidfive.counter.PercpuRef;

/** A get+put loop on an in-flight counter, for bench/counters-asm to print C2's code of. */
public class CounterLoop {
    static long loop(PercpuRef r, int n) {
        for (int i = 0; i < n; i++) {
            r.get();
            r.put();
        }
        return n;
    }
    public static void main(String[] a) {
        PercpuRef r = PercpuRef.inflightCounter(CounterMode.PERCPU);
        long s = 0;
        for (int k = 0; k < 200; k++) s += loop(r, 100_000);
        long t = System.nanoTime();
        for (int k = 0; k < 200; k++) s += loop(r, 100_000);
        System.out.println(r + " " + s + " " + (System.nanoTime() - t) / (200 * 100_000.0) + " ns/pair");
    }
}
