package org.raidfive.array;

import java.time.Duration;

/**
 * A snapshot of a sync pass: how far it is, how fast it goes, what it found.
 *
 * @param action what the pass does
 * @param doneBytes member bytes (per member) processed so far, including any resumed start
 * @param totalBytes member bytes (per member) the pass covers in all
 * @param bytesPerSecond recent rate over member bytes
 * @param mismatchSectors parity mismatches found, in 512-byte sectors counted per 4 KiB page as md's mismatch_cnt
 * @param running false once the pass has finished, been stopped or failed
 * @param error why it failed, or null
 * @param target the member being rebuilt (its name), or null for passes over the whole array
 * @param elapsed how long the pass has run (all of it, once it has ended)
 */
public record SyncProgress(
        SyncAction action,
        long doneBytes,
        long totalBytes,
        double bytesPerSecond,
        long mismatchSectors,
        boolean running,
        String error,
        String target,
        Duration elapsed) {

    /** How far the pass is, 0 to 100. */
    public double percent() {
        return totalBytes == 0 ? 100.0 : 100.0 * doneBytes / totalBytes;
    }

    /** Estimated time left at the current rate, or null when the rate is not known. */
    public Duration eta() {
        if (bytesPerSecond <= 0) {
            return null;
        }
        return Duration.ofMillis((long) ((totalBytes - doneBytes) / bytesPerSecond * 1000));
    }

    /** True when the pass covered its whole range without an error. */
    public boolean complete() {
        return doneBytes >= totalBytes && error == null;
    }
}
