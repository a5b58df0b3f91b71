package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An nbdkit server in the foreground ({@code -f}) on a Unix socket in a private directory, or on
 * a TCP port; killed (SIGKILL) by {@link #close()} or {@link #kill()}.
 */
final class Nbdkit implements AutoCloseable {
    private final Process process;
    private final Path log;
    private final NbdUri uri;

    private Nbdkit(Process process, Path log, NbdUri uri) {
        this.process = process;
        this.log = log;
        this.uri = uri;
    }

    /** {@code nbdkit -f -U dir/nbdkit.sock ARGS...}; waits until the socket accepts connections. */
    static Nbdkit unix(Path dir, String... args) throws IOException, InterruptedException {
        ExternalTools.assumeInstalled("nbdkit", "nbdkit");
        Path socket = dir.resolve("nbdkit.sock");
        List<String> command = new ArrayList<>(List.of("nbdkit", "-f", "-U", socket.toString()));
        command.addAll(List.of(args));
        Path log = dir.resolve("nbdkit.log");
        Nbdkit nbdkit = new Nbdkit(ExternalTools.start(command, log), log, NbdUri.unix("", socket));
        nbdkit.awaitReady(() -> {
            try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                return probe.connect(UnixDomainSocketAddress.of(socket));
            }
        });
        return nbdkit;
    }

    /** {@code nbdkit -f -i 127.0.0.1 -p PORT ARGS...} on a port that was free a moment ago. */
    static Nbdkit tcp(Path dir, String... args) throws IOException, InterruptedException {
        ExternalTools.assumeInstalled("nbdkit", "nbdkit");
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        List<String> command =
                new ArrayList<>(List.of("nbdkit", "-f", "-i", "127.0.0.1", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        Path log = dir.resolve("nbdkit.log");
        Nbdkit nbdkit = new Nbdkit(ExternalTools.start(command, log), log, NbdUri.tcp("127.0.0.1", port, ""));
        nbdkit.awaitReady(() -> {
            try (SocketChannel probe = SocketChannel.open(new java.net.InetSocketAddress("127.0.0.1", port))) {
                return probe.isConnected();
            }
        });
        return nbdkit;
    }

    private interface Probe {
        boolean ready() throws IOException;
    }

    private void awaitReady(Probe probe) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                fail("nbdkit exited with " + process.exitValue() + ":\n" + output());
            }
            try {
                if (probe.ready()) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(20);
        }
        process.destroyForcibly();
        fail("nbdkit did not start listening within 15 s:\n" + output());
    }

    NbdUri uri() {
        return uri;
    }

    Process process() {
        return process;
    }

    String output() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "";
    }

    /** SIGKILL: the server vanishes without closing the protocol. */
    void kill() {
        try {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        kill();
    }
}
