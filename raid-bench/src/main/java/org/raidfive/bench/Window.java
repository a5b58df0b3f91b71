package org.raidfive.bench;

/** The measured interval of one run on the {@link System#nanoTime()} clock: ramp ends at {@code start}. */
record Window(long begin, long start, long end) {
    static Window after(long delayNanos, long rampNanos, long runtimeNanos) {
        long begin = System.nanoTime() + delayNanos;
        return new Window(begin, begin + rampNanos, begin + rampNanos + runtimeNanos);
    }
}
