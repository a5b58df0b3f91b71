package org.raidfive.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncOutcome;
import org.raidfive.array.SyncProgress;
import org.raidfive.bench.Sizes;

/**
 * Shows a background pass while the command waits for it: a bar redrawn in place on a terminal
 * ({@code System.console() != null}), else a plain line every few seconds and one at the end, so
 * logs and pipes get readable text.
 */
final class Progress {
    private static final int BAR = 30;

    private final PrintWriter err;
    private final boolean terminal;
    private final long plainIntervalNanos;
    private final String indent;
    private long lastPlain;
    private boolean drawn;

    Progress(PrintWriter err, boolean terminal, Duration plainInterval, String indent) {
        this.indent = indent;
        this.err = err;
        this.terminal = terminal;
        this.plainIntervalNanos = plainInterval.toNanos();
    }

    /** A bar on a terminal, else a line every 5 seconds. */
    static Progress on(PrintWriter err) {
        return new Progress(err, System.console() != null, Duration.ofSeconds(5), "");
    }

    /**
     * Waits for the array's running pass to end, showing its progress; returns how it ended (null if
     * none ran). {@code stopped} lets a Ctrl-C handler end the wait quietly. When the engine chains
     * the next pass as soon as one completes (recovery, then the next spare or a pending resync), the
     * one followed is reported as complete and the next one is left running for the caller.
     */
    SyncProgress follow(Raid5Array array, BooleanSupplier stopped) throws InterruptedException {
        long pollMillis = terminal ? 200 : 250;
        SyncProgress last = array.syncProgress();
        if (last == null) {
            return null;
        }
        while (last.running() && !stopped.getAsBoolean()) {
            show(last);
            SyncOutcome outcome = array.awaitSync(Duration.ofMillis(pollMillis));
            boolean ended = outcome.ended();
            if (ended && outcome.pass() != null && outcome.pass().action() == last.action()) {
                // The pass's own final figures: read after its lanes were joined, so a check's
                // mismatch count is complete (a snapshot from the last poll may miss the tail).
                last = outcome.pass();
                break;
            }
            SyncProgress now = array.syncProgress();
            if (ended && now != null && now.running()) {
                // the followed pass completed and the engine started the next one at once
                last = new SyncProgress(
                        last.action(),
                        last.totalBytes(),
                        last.totalBytes(),
                        last.bytesPerSecond(),
                        last.mismatchSectors(),
                        false,
                        null,
                        last.target(),
                        last.elapsed());
                break;
            }
            last = now;
        }
        if (!stopped.getAsBoolean()) {
            done(last);
        }
        return last;
    }

    void show(SyncProgress p) {
        long now = System.nanoTime();
        if (terminal) {
            err.print("\r" + indent + bar(p));
            err.flush();
            drawn = true;
        } else if (lastPlain == 0 || now - lastPlain >= plainIntervalNanos) {
            err.println(indent + line(p));
            err.flush();
            lastPlain = now;
        }
    }

    void done(SyncProgress p) {
        if (terminal && drawn) {
            err.print("\r" + indent + bar(p) + "\n");
        } else {
            err.println(indent + line(p));
        }
        err.flush();
        drawn = false;
        lastPlain = 0;
    }

    /** Ends a bar in place (before printing something else) without a final line. */
    void clear() {
        if (terminal && drawn) {
            err.println();
            err.flush();
            drawn = false;
        }
    }

    static String line(SyncProgress p) {
        String state = p.running()
                ? ""
                : p.error() != null
                        ? " - stopped: " + p.error()
                        : p.complete()
                                ? String.format(
                                        Locale.ROOT,
                                        " - done in %.3f s",
                                        p.elapsed().toNanos() / 1e9)
                                : " - stopped";
        String speed = p.running() ? " at " + Sizes.rate(p.bytesPerSecond()) + ", ETA " + Sizes.duration(p.eta()) : "";
        return String.format(
                Locale.ROOT,
                "%s: %5.1f%% (%s of %s per member)%s%s",
                p.action(),
                p.percent(),
                Sizes.human(p.doneBytes()),
                Sizes.human(p.totalBytes()),
                speed,
                state);
    }

    static String bar(SyncProgress p) {
        int filled = (int) Math.min(BAR, Math.round(p.percent() / 100 * BAR));
        return String.format(
                Locale.ROOT,
                "%-7s [%s%s] %5.1f%%  %-12s ETA %-8s",
                p.action(),
                "#".repeat(filled),
                ".".repeat(BAR - filled),
                p.percent(),
                Sizes.rate(p.bytesPerSecond()),
                p.running() ? Sizes.duration(p.eta()) : "done");
    }
}
