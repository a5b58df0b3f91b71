package org.raidfive.cli;

import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncProgress;

/**
 * Care around background passes. {@code Raid5Array.status()} takes the metadata lock and then the
 * sync lock, while a recovery that completes calls {@code startSync()} on its own thread, which takes
 * them the other way round: a {@code status()} call at that moment deadlocks (a raid-core bug, see
 * the CLI's report). The CLI therefore calls {@code status()} only while no pass runs, and stops
 * passes it did not ask for before looking.
 */
final class Passes {
    private Passes() {}

    static boolean running(Raid5Array array) {
        SyncProgress p = array.syncProgress();
        return p != null && p.running();
    }

    /** Stops the running pass (checkpointed) and any pass the engine chains after it. */
    static void stopAll(Raid5Array array) throws InterruptedException {
        for (int i = 0; i < 16 && running(array); i++) {
            array.stopSync();
        }
    }
}
