package org.raidfive.cli;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * SIGINT and SIGTERM as a request to stop, for a command that runs until told to ({@code raid
 * serve}): the first signal releases {@link #await()}, so the command's own thread shuts down in
 * order and returns its exit code (0 after a clean stop, as daemons do), instead of the JVM's
 * default of running shutdown hooks and exiting 130 or 143. Later signals only say that the stop is
 * under way.
 *
 * <p>{@code sun.misc.Signal} (module jdk.unsupported) is the JDK's only way to catch a signal; it is
 * exported to class-path code and stable since JDK 1.4. It is reached by reflection so that the
 * build stays free of javac's "internal proprietary API" warnings. Where it is missing,
 * {@link #install} leaves the JVM's handling in place and the caller's shutdown hook does the
 * stopping.
 */
final class StopSignals {
    private final CountDownLatch stop = new CountDownLatch(1);
    private final PrintWriter err;
    private final String verb;
    private volatile String received;

    private StopSignals(PrintWriter err, String verb) {
        this.err = err;
        this.verb = verb;
    }

    /** Catches SIGINT and SIGTERM from now on; {@code err} gets a line for each signal after the first. */
    static StopSignals install(PrintWriter err, String verb) {
        StopSignals s = new StopSignals(err, verb);
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Method getName = signalClass.getMethod("getName");
            Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
            Object handler = Proxy.newProxyInstance(
                    StopSignals.class.getClassLoader(), new Class<?>[] {handlerClass}, (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "handle":
                                s.received("SIG" + getName.invoke(args[0]));
                                return null;
                            case "hashCode":
                                return System.identityHashCode(proxy);
                            case "equals":
                                return proxy == args[0];
                            default:
                                return "StopSignals handler";
                        }
                    });
            for (String name : new String[] {"INT", "TERM"}) {
                try {
                    handle.invoke(null, signalClass.getConstructor(String.class).newInstance(name), handler);
                } catch (InvocationTargetException e) {
                    // not catchable here (e.g. the JVM runs with -Xrs): the JVM's default stays
                }
            }
        } catch (ReflectiveOperationException | LinkageError e) {
            // no sun.misc.Signal: the JVM's default handling (shutdown hooks) stays
        }
        return s;
    }

    private void received(String name) {
        synchronized (this) {
            if (received == null) {
                received = name;
                stop.countDown();
                return;
            }
        }
        err.println(verb + ": " + name + ": already stopping (after " + received + "), waiting for requests in flight");
        err.flush();
    }

    /** Waits for the first signal (or {@link #trigger}); returns its name, e.g. {@code SIGTERM}. */
    String await() throws InterruptedException {
        stop.await();
        return received;
    }

    /** Waits up to {@code millis}; the signal's name, or null if none came. */
    String await(long millis) throws InterruptedException {
        return stop.await(millis, TimeUnit.MILLISECONDS) ? received : null;
    }

    /** Stops as a signal would (e.g. the server ended on its own). */
    synchronized void trigger(String why) {
        if (received == null) {
            received = why;
            stop.countDown();
        }
    }
}
