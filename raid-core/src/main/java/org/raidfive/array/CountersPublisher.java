package org.raidfive.array;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.raidfive.stats.CountersFile;

/**
 * What {@link ArrayCounters} and {@link ReshapeCounters} share: the file, a daemon thread that
 * publishes every {@value #TICK_MILLIS} ms, the events forwarded into the file's broadcast buffer as
 * they happen, and the stop when the file's pages can no longer be touched. A subclass says what
 * one publication writes and how its counting is turned off.
 */
abstract class CountersPublisher implements AutoCloseable {
    static final long TICK_MILLIS = 100;

    final CountersFile file;
    /** Events forwarded so far. */
    final AtomicLong eventCount = new AtomicLong();
    /** The listener that forwards events into the file. */
    final ArrayListener forward;

    private final String name;
    private final Thread ticker;
    private volatile boolean closed;
    /** The file's pages could not be touched (truncated under us, or its file system full): publishing stopped. */
    private volatile boolean broken;

    CountersPublisher(CountersFile file, String name) {
        this.file = file;
        this.name = name;
        forward = e -> {
            eventCount.incrementAndGet();
            if (broken) {
                return;
            }
            try {
                file.transmit(eventLine(e));
            } catch (InternalError | RuntimeException fault) {
                broke(fault);
            }
        };
        ticker = new Thread(this::run, "raid-counters-" + name);
        ticker.setDaemon(true);
    }

    /** One publication of every counter; called under this object's lock. */
    abstract void update();

    /** Turns the counting off (the cells, the listener); after the last publication. */
    abstract void detach();

    /** Publishes once, then every tick: the subclass has wired its counting in before. */
    final void begin() {
        synchronized (this) {
            update();
        }
        ticker.start();
    }

    /**
     * Records in the file the Unix socket the array is served on (its inode), so that a stop
     * command can tell this process from another that listens on a path of the same name.
     */
    public void recordServerSocket(Path socket) throws IOException {
        Object ino = Files.getAttribute(socket, "unix:ino", LinkOption.NOFOLLOW_LINKS);
        if (!broken) {
            try {
                file.recordServerSocket((Long) ino);
            } catch (InternalError | RuntimeException fault) {
                broke(fault);
            }
        }
    }

    /** The file the counters are in. */
    public Path path() {
        return file.path();
    }

    private void run() {
        while (!closed) {
            try {
                Thread.sleep(TICK_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                if (closed || broken) {
                    return;
                }
                try {
                    update();
                } catch (InternalError | RuntimeException fault) {
                    broke(fault);
                    return;
                }
            }
        }
    }

    /**
     * A fault touching the mapped file (the JVM turns the SIGBUS of a truncated file or a full tmpfs
     * into an InternalError): the counters stop, the array and its event delivery go on.
     */
    private void broke(Throwable fault) {
        if (!broken) {
            broken = true;
            org.slf4j.LoggerFactory.getLogger(getClass())
                    .warn(
                            "{}: live counters stopped: {} can no longer be "
                                    + "written (truncated, or its file system is full: {}); the array is served without them",
                            name,
                            file.path(),
                            fault.toString());
        }
    }

    /** An event as one line of tab-separated fields: sequence, epoch millis, mdadm's word, kind, member, detail. */
    static String eventLine(ArrayEvent e) {
        return e.sequence() + "\t" + e.time().toEpochMilli() + "\t" + e.mdadmEvent() + "\t" + e.kind() + "\t"
                + (e.member() == null ? "" : e.member()) + "\t"
                + (e.detail() == null ? "" : e.detail().replace('\t', ' ').replace('\n', ' '));
    }

    /** Publishes a last time, stops, turns the counting off and deletes the file. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            if (!broken) {
                try {
                    update();
                } catch (InternalError | RuntimeException fault) {
                    broke(fault);
                }
            }
            closed = true;
        }
        ticker.interrupt();
        detach();
        try {
            ticker.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        file.close();
    }
}
