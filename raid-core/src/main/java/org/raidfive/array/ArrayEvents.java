package org.raidfive.array;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An array's event delivery: publishers (the thread that saw a failure, a pass, safemode) only
 * append to a queue under a short lock; one daemon thread per array, started with the first
 * listener, hands the events to the listeners in order. Nothing is queued while no listener is
 * registered. Sequence numbers are taken under the queue's lock, so their order is the delivery order.
 */
final class ArrayEvents {
    private static final Logger LOG = LoggerFactory.getLogger(ArrayEvents.class);
    private static final long CLOSE_DRAIN_MILLIS = 5_000;

    private final String array;
    private final CopyOnWriteArrayList<ArrayListener> listeners = new CopyOnWriteArrayList<>();
    private final ArrayDeque<ArrayEvent> queue = new ArrayDeque<>();
    private long sequence;
    private boolean delivering;
    private boolean closed;
    private Thread thread;

    ArrayEvents(String array) {
        this.array = array;
    }

    void add(ArrayListener listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (queue) {
            if (closed) {
                throw new IllegalStateException(array + " is closed: no events will come");
            }
            listeners.add(listener);
            if (thread == null) {
                thread = new Thread(this::deliver, "raid-events-" + array);
                thread.setDaemon(true);
                thread.start();
            }
        }
    }

    void remove(ArrayListener listener) {
        listeners.remove(listener);
    }

    /** The listeners registered now (an array hands them on to the one that follows it). */
    java.util.List<ArrayListener> listeners() {
        return java.util.List.copyOf(listeners);
    }

    /** Queues an event for the listeners; never blocks beyond the queue's lock, never calls a listener. */
    void publish(ArrayEvent.Kind kind, String member, String detail, SyncProgress pass) {
        publish(kind, member, detail, pass, pass == null ? 0 : (int) pass.percent());
    }

    /** {@link #publish(ArrayEvent.Kind, String, String, SyncProgress)} with the percentage given. */
    void publish(ArrayEvent.Kind kind, String member, String detail, SyncProgress pass, int percent) {
        if (listeners.isEmpty()) {
            return;
        }
        synchronized (queue) {
            if (closed) {
                return;
            }
            queue.add(new ArrayEvent(++sequence, Instant.now(), array, kind, member, detail, pass, percent));
            queue.notifyAll();
        }
    }

    private void deliver() {
        for (; ; ) {
            ArrayEvent e;
            synchronized (queue) {
                while (queue.isEmpty()) {
                    delivering = false;
                    queue.notifyAll();
                    if (closed) {
                        return;
                    }
                    try {
                        queue.wait();
                    } catch (InterruptedException stop) {
                        return;
                    }
                }
                e = queue.poll();
                delivering = true;
            }
            for (ArrayListener l : listeners) {
                try {
                    l.onEvent(e);
                } catch (RuntimeException | LinkageError | AssertionError t) {
                    LOG.warn("{}: listener {} threw on {}; it stays registered", array, l, e, t);
                }
            }
        }
    }

    /** Delivers what is queued (waiting at most 5 s for slow listeners), then ends the event thread. */
    void close() {
        synchronized (queue) {
            closed = true;
            queue.notifyAll();
            long deadline = System.currentTimeMillis() + CLOSE_DRAIN_MILLIS;
            while (thread != null && (delivering || !queue.isEmpty()) && thread != Thread.currentThread()) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    LOG.warn("{}: {} events not delivered at close (a listener is slow)", array, queue.size());
                    queue.clear();
                    break;
                }
                try {
                    queue.wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
    }
}
