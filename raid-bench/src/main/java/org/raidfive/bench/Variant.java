package org.raidfive.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.counter.CounterMode;

/**
 * One thing measured in a round: a target and, for an array, its counter mode and consistency policy.
 *
 * @param counterMode the array's counters; null for the raw targets
 * @param policy      the array's consistency policy; null for the raw targets
 */
public record Variant(BenchConfig.Target target, CounterMode counterMode, ConsistencyPolicy policy, boolean live) {

    public Variant(BenchConfig.Target target, CounterMode counterMode, ConsistencyPolicy policy) {
        this(target, counterMode, policy, false);
    }

    /** The variants of a configuration, in the order every round runs them. */
    public static List<Variant> of(BenchConfig config) {
        List<Variant> list = new ArrayList<>();
        for (BenchConfig.Target t : config.targets()) {
            if (t == BenchConfig.Target.ARRAY) {
                for (ConsistencyPolicy p : config.policies().policies()) {
                    for (CounterMode m : config.counters().modes()) {
                        for (boolean live : config.liveCounters().settings()) {
                            list.add(new Variant(t, m, p, live));
                        }
                    }
                }
            } else {
                list.add(new Variant(t, null, null));
            }
        }
        return list;
    }

    /** "array percpu", "array percpu ppl" (the policy named when it is not resync), "raw". */
    public String label() {
        if (counterMode == null) {
            return target.toString();
        }
        String s = target + " " + counterMode.name().toLowerCase(Locale.ROOT);
        s = policy == null || policy == ConsistencyPolicy.RESYNC ? s : s + " " + policy.mdadmName();
        return live ? s + " live-counters" : s;
    }

    @Override
    public String toString() {
        return label();
    }
}
