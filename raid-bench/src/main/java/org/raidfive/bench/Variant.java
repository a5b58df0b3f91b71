package org.raidfive.bench;

import java.util.ArrayList;
import java.util.List;
import org.raidfive.counter.CounterMode;

/**
 * One thing measured in a round: a target and, for an array, its counter mode.
 *
 * @param counterMode the array's counters; null for the raw targets
 */
public record Variant(BenchConfig.Target target, CounterMode counterMode) {

    /** The variants of a configuration, in the order every round runs them. */
    public static List<Variant> of(BenchConfig config) {
        List<Variant> list = new ArrayList<>();
        for (BenchConfig.Target t : config.targets()) {
            if (t == BenchConfig.Target.ARRAY) {
                for (CounterMode m : config.counters().modes()) {
                    list.add(new Variant(t, m));
                }
            } else {
                list.add(new Variant(t, null));
            }
        }
        return list;
    }

    public String label() {
        return counterMode == null ? target.toString()
                : target + " " + counterMode.name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public String toString() {
        return label();
    }
}
