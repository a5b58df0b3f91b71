package org.raidfive.cli;

import java.util.List;
import java.util.function.Consumer;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.MemberState;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncProgress;

/**
 * Watches a served array and says when something an operator must know happens: a member failed
 * (the array runs degraded), the array failed, a background pass ended. Polls the array's cheap
 * flags a few times a second; the full status is read only when they change.
 */
final class ServeMonitor implements AutoCloseable {
    private static final long PERIOD_MILLIS = 200;

    private final Raid5Array array;
    private final Consumer<String> say;
    private final Thread thread;
    private volatile boolean closed;
    private boolean degraded;
    private boolean failed;
    private boolean passRunning;
    private List<String> faulty;

    private ServeMonitor(Raid5Array array, Consumer<String> say) {
        this.array = array;
        this.say = say;
        ArrayStatus s = array.status();
        this.degraded = s.degraded();
        this.failed = s.failed();
        this.passRunning = Passes.running(array);
        this.faulty = faulty(s);
        this.thread = new Thread(this::run, "raid-serve-monitor");
        thread.setDaemon(true);
    }

    static ServeMonitor start(Raid5Array array, Consumer<String> say) {
        ServeMonitor m = new ServeMonitor(array, say);
        m.thread.start();
        return m;
    }

    private void run() {
        while (!closed) {
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            if (!closed) {
                check();
            }
        }
    }

    private void check() {
        boolean nowDegraded = array.isDegraded();
        boolean nowFailed = array.isFailed();
        boolean nowRunning = Passes.running(array);
        if (nowDegraded == degraded && nowFailed == failed && nowRunning == passRunning) {
            return;
        }
        ArrayStatus s = array.status();
        List<String> nowFaulty = faulty(s);
        for (String name : nowFaulty) {
            if (!faulty.contains(name)) {
                say.accept(name + " failed (I/O error): marked faulty");
            }
        }
        if (nowFailed && !failed) {
            say.accept(s.name() + " has FAILED: too few members left; requests now get EIO");
        } else if (nowDegraded && !degraded && !nowFailed) {
            say.accept(s.name() + " is degraded (" + s.activeMembers() + " of " + s.raidDisks()
                    + " members in sync); still serving, reads of the missing member are rebuilt from parity");
        }
        if (passRunning && !nowRunning) {
            SyncProgress p = array.syncProgress();
            if (p != null) {
                say.accept(p.action()
                        + (p.complete() ? " finished" : " stopped" + (p.error() == null ? "" : ": " + p.error())) + "; "
                        + s.name() + " is " + s.state());
            }
        } else if (nowRunning && !passRunning) {
            SyncProgress p = array.syncProgress();
            say.accept((p != null ? p.action() : "a pass") + " started in the background");
        }
        degraded = nowDegraded;
        failed = nowFailed;
        passRunning = nowRunning;
        faulty = nowFaulty;
    }

    private static List<String> faulty(ArrayStatus s) {
        return s.members().stream()
                .filter(m -> m.state() == MemberState.FAULTY)
                .map(ArrayStatus.MemberStatus::name)
                .toList();
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
