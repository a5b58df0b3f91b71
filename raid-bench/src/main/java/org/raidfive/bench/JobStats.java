package org.raidfive.bench;

import org.HdrHistogram.Histogram;

/**
 * What one issuer measured inside the window: operation counts and completion latencies per
 * direction. Single writer; read after the writer has finished (the runner joins it).
 */
final class JobStats {
    final Histogram readLatency = Latency.newHistogram();
    final Histogram writeLatency;
    long readOps;
    long writeOps;
    volatile Throwable error;

    JobStats(boolean writes) {
        writeLatency = writes ? Latency.newHistogram() : null;
    }

    /** Counts one completion at {@code done} that took {@code nanos}, if it lies in the window. */
    void completed(boolean read, long done, long nanos, long windowStart, long windowEnd) {
        if (done < windowStart || done >= windowEnd) {
            return;
        }
        if (read) {
            readOps++;
            Latency.record(readLatency, nanos);
        } else {
            writeOps++;
            Latency.record(writeLatency, nanos);
        }
    }
}
