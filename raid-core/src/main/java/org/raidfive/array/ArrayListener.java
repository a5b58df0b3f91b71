package org.raidfive.array;

/**
 * Told what happens to an array: members failing, leaving and joining, passes starting, progressing
 * and ending, the array degrading, failing, turning clean or dirty ({@link ArrayEvent.Kind}).
 *
 * <p>Events reach listeners on one thread per array, never on the thread that did the I/O, in the
 * order they happened, each once; a slow listener delays only later events, never I/O. A listener
 * that throws is logged and keeps receiving events. Register with {@link Raid5Array#addListener},
 * or before anything can happen with {@link ArraySpec.Builder#listener} or
 * {@link AssembleOptions#withListener}.
 */
@FunctionalInterface
public interface ArrayListener {
    /** Called for each event, on the array's event thread. */
    void onEvent(ArrayEvent event);
}
