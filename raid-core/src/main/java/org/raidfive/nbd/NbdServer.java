package org.raidfive.nbd;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.net.ExtendedSocketOptions;
import org.raidfive.disk.FileKind;
import org.raidfive.disk.MemberDisk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exports one {@link MemberDisk} over the NBD protocol (fixed newstyle handshake, simple replies),
 * on TCP or a Unix domain socket. Serving a {@code MemoryDisk} or {@code FileDisk} is exactly
 * serving a RAID array, which implements the same interface.
 *
 * <pre>{@code
 * NbdServerConfig config = NbdServerConfig.builder().exportName("raid").port(0).build();
 * try (NbdServer server = NbdServer.start(disk, config)) {
 *     log.info("serving {}", server.uri());
 *     server.awaitTermination();
 * }
 * }</pre>
 *
 * <p>Threads: one acceptor; a timer (timeouts); one reader thread per connection (handshake,
 * then requests); with {@link RequestExecution#WORKER_POOL} (default) a bounded pool of
 * {@code workerThreads} shared by all connections executes requests, and each connection's own
 * writer thread sends its replies (batched, see {@link ReplyWriter}), so a worker never blocks on
 * a client's socket and a client that stops reading slows only itself; the reader runs a plain
 * READ/WRITE itself when it is the last one buffered (no hand-off when it would otherwise wait on
 * the socket), and any request when the pool's queue is full (back-pressure). A plain READ/WRITE
 * on a disk with its own completion-based I/O that does not complete inline (an array over file or
 * NBD members, an {@link NbdDisk}, a {@link org.raidfive.disk.FileDisk}) takes no worker: the reader
 * starts it and the disk's completion queues the reply. With
 * {@link RequestExecution#CONNECTION_THREAD} the reader runs every request itself, in order, and
 * writes the replies.
 *
 * <p>Hostile clients: a handshake must finish within {@code handshakeTimeout}; at most
 * {@code maxHandshaking} connections may be in it (a new one evicts one that has sent nothing;
 * a slow but progressing handshake keeps its slot), so idle handshakes cannot hold the connection
 * limit; one address (a local client: its user) holds at most {@code maxConnectionsPerAddress};
 * on a full server a newcomer takes the slot of a connection not being used (idle 5 s or more,
 * or trickling a write payload), so idle clients cannot either (see {@code makeRoom}); a write's
 * payload must arrive within {@code payloadTimeout} plus a second per MiB; {@code idleTimeout}
 * (optional) and {@code replyTimeout} close connections that do nothing or do not take their
 * replies. Memory is
 * bounded: requests larger than {@code maxRequestBytes} (advertised with NBD_INFO_BLOCK_SIZE) are
 * refused with EINVAL before anything is allocated, and payload in flight is limited per
 * connection and server-wide (see {@link ServerConnection}); direct memory running out is answered
 * ENOMEM. An allow-list limits TCP clients by address.
 *
 * <p>Commands: READ, WRITE (FUA: the disk is flushed before the reply), FLUSH ({@code disk.flush()}),
 * TRIM (per {@link TrimMode}: by default acknowledged without effect), WRITE_ZEROES (zeros
 * written in 1 MiB pieces from a shared zero buffer; NO_HOLE accepted, every write allocates
 * anyway), DISC. Error replies: EINVAL for reads/trims beyond the end, unknown commands or flags,
 * misalignment, and reads over {@code maxRequestBytes}; ENOSPC for writes/write-zeroes beyond
 * the end; EPERM for any write to a read-only export; EIO when the disk throws. An over-long or
 * rejected write's payload is read and discarded, so the connection keeps serving; a payload of
 * up to 4 GiB is discarded this way rather than closing the connection.
 *
 * <p>{@link #close()}: stop accepting, stop reading new requests, let in-flight ones finish and
 * reply (bounded by the drain timeout), close the connections, stop the workers, flush the disk.
 * The disk itself stays open: its owner closes it.
 */
public final class NbdServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NbdServer.class);
    private static final AtomicInteger SERVER_IDS = new AtomicInteger();

    private final MemberDisk disk;
    private final NbdServerConfig config;
    private final int id = SERVER_IDS.incrementAndGet();
    private final Set<ServerConnection> connections = ConcurrentHashMap.newKeySet();
    private final Set<Thread> connectionThreads = ConcurrentHashMap.newKeySet();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final AtomicInteger connectionIds = new AtomicInteger();
    private ThreadPoolExecutor workers;
    private ServerExport export;
    private ServerSocketChannel listener;
    private Thread acceptor;
    private volatile int port = -1;
    private final InFlightBudget budget;
    private ScheduledExecutorService timer;
    private volatile boolean started;
    private volatile boolean closed;

    /** A server for {@code disk}, not yet listening: see {@link #start}. */
    public NbdServer(MemberDisk disk, NbdServerConfig config) {
        this.disk = Objects.requireNonNull(disk, "disk");
        this.config = Objects.requireNonNull(config, "config");
        this.budget = new InFlightBudget(config.inFlightBudgetBytes());
    }

    /** Creates and starts a server. */
    public static NbdServer start(MemberDisk disk, NbdServerConfig config) throws IOException {
        NbdServer server = new NbdServer(disk, config);
        try {
            return server.start();
        } catch (IOException | RuntimeException e) {
            try {
                server.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** Binds the socket and starts accepting. Returns this. */
    public synchronized NbdServer start() throws IOException {
        if (started) {
            throw new IllegalStateException("server already started");
        }
        if (closed) {
            throw new IllegalStateException("server is closed");
        }
        started = true;
        if (config.requestExecution() == RequestExecution.WORKER_POOL) {
            AtomicInteger workerIds = new AtomicInteger();
            workers = new ThreadPoolExecutor(
                    config.workerThreads(),
                    config.workerThreads(),
                    0,
                    TimeUnit.SECONDS,
                    new ArrayBlockingQueue<>(4 * config.maxInFlightPerConnection() * config.workerThreads()),
                    r -> daemon(r, "nbd" + id + "-worker-" + workerIds.incrementAndGet()),
                    (task, executor) -> task.run()); // saturated or shut down: the submitting reader runs it
            workers.prestartAllCoreThreads();
        }
        export = new ServerExport(disk, config, workers);
        listener = bind();
        timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "nbd" + id + "-timer"));
        timer.scheduleWithFixedDelay(this::sweep, 200, 200, TimeUnit.MILLISECONDS);
        acceptor = daemon(this::acceptLoop, "nbd" + id + "-accept");
        acceptor.start();
        LOG.debug("serving {} ({} bytes) at {} with {}", disk.name(), export.size(), uri(), config);
        return this;
    }

    /** Device and inode of the socket file this server made, so that close deletes only that. */
    private volatile Object socketKey;

    private static Object fileKey(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                    .fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    private ServerSocketChannel bind() throws IOException {
        if (config.unixSocket() != null) {
            Path path = config.unixSocket();
            removeStaleSocket(path);
            ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.bind(UnixDomainSocketAddress.of(path));
            } catch (IOException e) {
                channel.close();
                throw new IOException("cannot listen on Unix socket " + path + ": " + e.getMessage(), e);
            }
            socketKey = fileKey(path);
            return channel;
        }
        InetSocketAddress address = new InetSocketAddress(InetAddress.getByName(config.bindAddress()), config.port());
        ServerSocketChannel channel = ServerSocketChannel.open();
        try {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.bind(address, 64);
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
        port = ((InetSocketAddress) channel.getLocalAddress()).getPort();
        return channel;
    }

    /**
     * A socket file left by a dead server is removed; anything else at the path is refused: a live
     * socket (another server), and anything that is not a socket at all (a regular file, perhaps a
     * member; a link; a directory), which is never deleted.
     */
    private static void removeStaleSocket(Path path) throws IOException {
        if (checkSocketPath(path)) {
            Files.deleteIfExists(path);
        }
    }

    /** True if {@code path} holds a stale socket (safe to replace); false if nothing is there; else refused. */
    private static boolean checkSocketPath(Path path) throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        FileKind kind = FileKind.of(path, LinkOption.NOFOLLOW_LINKS);
        if (kind != FileKind.SOCKET) {
            throw new IOException("--socket " + path + " is " + kind.description() + ": refusing to replace it (give a "
                    + "new path, or remove a stale socket file by hand)");
        }
        boolean live;
        try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(path))) {
            live = probe.isConnected();
        } catch (IOException e) {
            live = false; // nobody listening: a leftover of a dead server
        }
        if (live) {
            throw new IOException("Unix socket " + path + " is already served by another process");
        }
        return true;
    }

    /**
     * Checks, changing nothing, that a server with {@code config} could listen: a Unix socket path
     * that is free or holds a stale socket; a TCP address that can be bound now (the port is let go
     * again at once). Lets a caller refuse bad input before it opens anything it would have to undo.
     */
    public static void checkCanListen(NbdServerConfig config) throws IOException {
        if (config.unixSocket() != null) {
            Path path = config.unixSocket();
            checkSocketPath(path);
            Path dir = path.toAbsolutePath().getParent();
            if (dir != null && !Files.isDirectory(dir)) {
                throw new IOException("cannot listen on Unix socket " + path + ": " + dir + " is not a directory");
            }
            return;
        }
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(InetAddress.getByName(config.bindAddress()), config.port());
        } catch (UnknownHostException e) {
            throw new IOException("cannot listen on " + config.bindAddress() + ": unknown host", e);
        }
        try (ServerSocketChannel channel = ServerSocketChannel.open()) {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.bind(address, 1);
        } catch (IOException e) {
            throw new IOException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel channel;
            try {
                channel = listener.accept();
            } catch (ClosedChannelException e) {
                break;
            } catch (IOException e) {
                if (closed) {
                    break;
                }
                LOG.warn("accept failed on {}: {}", uri(), e.toString());
                sleepQuietly(10);
                continue;
            }
            accept(channel);
        }
    }

    private void accept(SocketChannel channel) {
        String peer;
        SocketAddress remote;
        try {
            remote = channel.getRemoteAddress();
            peer = "nbd" + id + "#" + connectionIds.incrementAndGet() + " "
                    + (remote instanceof InetSocketAddress ? remote.toString() : "unix");
            if (remote instanceof InetSocketAddress) {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
        } catch (IOException e) {
            closeQuietly(channel);
            return;
        }
        if (closed) {
            closeQuietly(channel);
            return;
        }
        if (remote instanceof InetSocketAddress inet && !allowed(inet.getAddress())) {
            refused(peer, "its address is not in --allow (" + config.allow() + ")");
            closeQuietly(channel);
            return;
        }
        String source = source(channel, remote);
        if (!makeRoom(peer, source)) {
            closeQuietly(channel);
            return;
        }
        ServerConnection connection = new ServerConnection(this, export, channel, peer, source);
        connections.add(connection);
        Thread thread = daemon(connection, peer);
        connectionThreads.add(thread);
        LOG.debug("{}: connected", peer);
        thread.start();
        if (closed) {
            connection.shutdownInput(); // close() may have missed it
        }
    }

    private boolean allowed(InetAddress address) {
        if (config.allow().isEmpty()) {
            return true;
        }
        for (AddressRange r : config.allow()) {
            if (r.contains(address)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whom a connection counts against for {@code maxConnectionsPerAddress}: its IP address; for a
     * local client (loopback, where every user shares one address) its user, from
     * {@code /proc/net/tcp} ({@link LocalPeer}), and on a Unix socket from SO_PEERCRED.
     */
    private static String source(SocketChannel channel, SocketAddress remote) {
        if (remote instanceof InetSocketAddress inet) {
            if (inet.getAddress().isLoopbackAddress()) {
                // every local client is 127.0.0.1: tell them apart by user, as on a Unix socket
                try {
                    if (channel.getLocalAddress() instanceof InetSocketAddress local) {
                        long uid = LocalPeer.uid(inet, local);
                        if (uid >= 0) {
                            return "uid " + uid;
                        }
                    }
                } catch (IOException e) {
                    // closed meanwhile: the address will do
                }
            }
            return inet.getAddress().getHostAddress();
        }
        try {
            return "user "
                    + channel.getOption(ExtendedSocketOptions.SO_PEERCRED)
                            .user()
                            .getName();
        } catch (IOException | UnsupportedOperationException e) {
            return "unix"; // no credentials: all Unix clients share one quota
        }
    }

    /**
     * Room for one more connection from {@code source}, so that no client can keep another out:
     * <ul>
     * <li>one source (an address, or a user on a Unix socket) holds at most
     *     {@code maxConnectionsPerAddress} connections; beyond, the newcomer takes the place of one
     *     of that source's own that is not being used, or is refused;
     * <li>past {@code maxHandshaking} connections in the handshake, a newcomer evicts one that has
     *     not sent a byte (from the source holding the most connections, the oldest first); a
     *     handshake that is progressing, however slowly, keeps its slot until the handshake
     *     timeout, and a connection that has its NBD_OPT_GO reply is never in the handshake;
     * <li>on a full server a newcomer takes the slot of a connection not being used: a silent
     *     handshake, a client idle (nothing in flight) for 5 s or more, or one trickling a write
     *     payload slower than 64 KiB/s; a busy client is never evicted, and only a server full of
     *     busy connections refuses, and says so.
     * </ul>
     */
    private boolean makeRoom(String peer, String source) {
        long now = System.nanoTime();
        Map<String, Integer> perSource = new HashMap<>();
        int handshaking = 0;
        for (ServerConnection c : connections) {
            perSource.merge(c.source, 1, Integer::sum);
            if (!c.transmitting()) {
                handshaking++;
            }
        }
        int mine = perSource.getOrDefault(source, 0);
        // At a quota of --max-connections itself, the server is full first: the checks below say so.
        if (mine >= config.maxConnectionsPerAddress() && config.maxConnectionsPerAddress() < config.maxConnections()) {
            ServerConnection victim = unused(now, perSource, source, source, true);
            if (victim == null
                    || !evict(
                            victim,
                            now,
                            mine + " connections from " + source + " were open (--max-connections-per-address "
                                    + config.maxConnectionsPerAddress() + ")")) {
                refused(
                        peer,
                        mine + " connections from " + source + " are open, none unused, the most one source "
                                + "may hold (--max-connections-per-address " + config.maxConnectionsPerAddress() + ")");
                return false;
            }
            return true; // one out, one in: the totals below are unchanged
        }
        boolean full = connections.size() >= config.maxConnections();
        if (handshaking >= config.maxHandshaking() || full) {
            ServerConnection victim = unused(now, perSource, source, null, false);
            if (victim != null
                    && evict(
                            victim,
                            now,
                            handshaking + " connections in the handshake, " + connections.size() + " of at most "
                                    + config.maxConnections() + " open")) {
                return true;
            }
            if (handshaking >= config.maxHandshaking()) {
                refused(
                        peer,
                        handshaking + " connections are in the handshake and each has sent something (the "
                                + "handshake timeout ends them)");
                return false;
            }
        }
        if (full) {
            ServerConnection victim = unused(now, perSource, source, null, true);
            if (victim != null && evict(victim, now, "all " + config.maxConnections() + " connections were taken")) {
                return true;
            }
            refused(
                    peer,
                    connections.size() + " connections are open, none idle for "
                            + IDLE_EVICT_NANOS / 1_000_000_000L + " s, the most allowed (--max-connections "
                            + config.maxConnections() + ")");
            return false;
        }
        return true;
    }

    /**
     * A connection a newcomer from {@code newcomer} may take the place of, or null: a handshake that
     * has sent nothing (for {@link #SILENT_GRACE_NANOS}, unless its source holds more connections
     * than the newcomer's: a fresh client is not evicted by its own kind before it could speak), and
     * when {@code pastHandshake} also a client idle for {@link #IDLE_EVICT_NANOS} or trickling a
     * payload. Only from {@code only} when it is given; else from the source holding the most
     * connections. The one unused longest goes first.
     */
    private ServerConnection unused(
            long now, Map<String, Integer> perSource, String newcomer, String only, boolean pastHandshake) {
        ServerConnection best = null;
        int bestCount = 0;
        long bestSince = 0;
        int newcomers = perSource.getOrDefault(newcomer, 0);
        for (ServerConnection c : connections) {
            if (only != null && !only.equals(c.source)) {
                continue;
            }
            long since;
            if (c.silentHandshake()) {
                since = c.openedNanos;
                if (now - since < SILENT_GRACE_NANOS && perSource.getOrDefault(c.source, 0) <= newcomers) {
                    continue;
                }
            } else if (!pastHandshake || !c.transmitting()) {
                continue;
            } else if (c.inFlight() == 0 && now - c.lastRequestNanos() >= IDLE_EVICT_NANOS) {
                since = c.lastRequestNanos();
            } else if (c.tricklingPayload(now, MIN_PAYLOAD_BYTES_PER_SECOND)) {
                since = c.payloadSinceNanos();
            } else {
                continue;
            }
            int count = perSource.getOrDefault(c.source, 0);
            if (best == null || count > bestCount || (count == bestCount && since - bestSince < 0)) {
                best = c;
                bestCount = count;
                bestSince = since;
            }
        }
        return best;
    }

    /** Evicts {@code victim}; false if it chose its export meanwhile (then it stays, and so does the newcomer's refusal). */
    private boolean evict(ServerConnection victim, long now, String situation) {
        String why;
        if (!victim.transmitting()) {
            if (!victim.claimHandshakeForEviction()) {
                return false;
            }
            why = "evicted by a new connection: silent in the handshake for " + (now - victim.openedNanos) / 1_000_000L
                    + " ms while " + situation;
        } else if (victim.payloadSinceNanos() != 0) {
            why = "evicted by a new connection: a " + victim.payloadBytes() + "-byte write payload trickling in for "
                    + (now - victim.payloadSinceNanos()) / 1_000_000_000L + " s while " + situation;
        } else {
            why = "evicted by a new connection: idle for " + (now - victim.lastRequestNanos()) / 1_000_000_000L
                    + " s while " + situation;
        }
        victim.abort(why, false);
        connections.remove(victim); // its thread removes it too, when it ends
        long last = lastEvictionLog;
        if (now - last > 1_000_000_000L) { // at most once a second: a flood must not flood the log
            lastEvictionLog = now;
            LOG.warn("{}: {}", victim.peer(), why);
        }
        return true;
    }

    /** How long a handshake may stay silent before a newcomer of its own source may evict it. */
    static final long SILENT_GRACE_NANOS = 1_000_000_000L;

    /** A write payload arriving slower than this (after its first second) may lose its slot to a newcomer. */
    static final long MIN_PAYLOAD_BYTES_PER_SECOND = 64 * 1024;

    /** How long a connection must have been idle before a newcomer may take its slot on a full server. */
    static final long IDLE_EVICT_NANOS = 5_000_000_000L;

    /** A refused connection, logged at most once a second (a flood must not flood the log). */
    private void refused(String peer, String why) {
        long now = System.nanoTime();
        long last = lastRefusalLog;
        refusals++;
        if (now - last > 1_000_000_000L) {
            lastRefusalLog = now;
            LOG.warn("{}: refused: {} ({} refused in all)", peer, why, refusals);
        }
    }

    private volatile long lastRefusalLog = System.nanoTime() - 2_000_000_000L;
    private volatile long lastEvictionLog = System.nanoTime() - 2_000_000_000L;
    private volatile long refusals;
    /** Only the timer thread touches these two. */
    private long lastPayloadTimeoutLog = System.nanoTime() - 2_000_000_000L;

    private long payloadTimeouts;

    /** Enforces the handshake, idle and reply timeouts; runs every 200 ms on the server's timer. */
    private void sweep() {
        long now = System.nanoTime();
        for (ServerConnection c : connections) {
            if (!c.transmitting()) {
                long limit = config.handshakeTimeout().toNanos();
                if (limit > 0 && now - c.openedNanos > limit) {
                    c.abort("no handshake within " + config.handshakeTimeout().toSeconds()
                            + " s (--handshake-timeout)");
                }
                continue;
            }
            long payloadDeadline =
                    c.payloadDeadlineNanos(config.payloadTimeout().toNanos());
            if (config.payloadTimeout().toNanos() > 0 && payloadDeadline != 0 && now - payloadDeadline > 0) {
                String why = "a " + c.payloadBytes() + "-byte write payload did not arrive within "
                        + (payloadDeadline - c.payloadSinceNanos()) / 1_000_000_000L + " s (--payload-timeout "
                        + config.payloadTimeout().toSeconds() + " plus a second per MiB)";
                c.abort(why, false);
                payloadTimeouts++;
                if (now - lastPayloadTimeoutLog > 1_000_000_000L) { // a flood of tricklers: one line a second
                    lastPayloadTimeoutLog = now;
                    LOG.warn("{}: closing: {} ({} in all)", c.peer(), why, payloadTimeouts);
                }
                continue;
            }
            long idle = config.idleTimeout().toNanos();
            if (idle > 0 && c.inFlight() == 0 && now - c.lastRequestNanos() > idle) {
                c.abort("idle for " + config.idleTimeout().toSeconds() + " s (--idle-timeout)");
                continue;
            }
            long stalled = c.replies().stalledSince();
            long replyLimit = config.replyTimeout().toNanos();
            if (replyLimit > 0 && stalled != 0 && now - stalled > replyLimit) {
                c.abort("the client has not taken its replies for "
                        + config.replyTimeout().toSeconds() + " s");
            }
        }
    }

    /** The server-wide in-flight payload budget. */
    InFlightBudget budget() {
        return budget;
    }

    /** Payload bytes in flight beyond the connections' reserves (for tests and monitoring). */
    public long sharedBudgetInUse() {
        return budget.inUse();
    }

    void connectionClosed(ServerConnection connection) {
        connections.remove(connection);
        connectionThreads.remove(Thread.currentThread());
    }

    /** The bound TCP port (useful with port 0), or -1 when serving a Unix socket or not started. */
    public int port() {
        return port;
    }

    /** The server's configuration. */
    public NbdServerConfig config() {
        return config;
    }

    /** The disk the server exports. */
    public MemberDisk disk() {
        return disk;
    }

    /** Number of open client connections. */
    public int connectionCount() {
        return connections.size();
    }

    /**
     * An NBD URI for this export: {@code nbd://host:port/name} or
     * {@code nbd+unix:///name?socket=path}.
     */
    public String uri() {
        NbdUri u;
        if (config.unixSocket() != null) {
            u = NbdUri.unix(config.exportName(), config.unixSocket());
        } else {
            String host = config.bindAddress();
            if (host.equals("0.0.0.0") || host.equals("::")) {
                host = "127.0.0.1";
            }
            u = NbdUri.tcp(host, port, config.exportName());
        }
        return (config.tls() == TlsMode.REQUIRE ? u.withTls(null) : u).toString();
    }

    /** Blocks until {@link #close()} has finished. */
    public void awaitTermination() throws InterruptedException {
        terminated.await();
    }

    /**
     * Stops the server: no new connections, no new requests; in-flight requests finish and reply
     * (up to the drain timeout), connections close, workers stop, the disk is flushed.
     *
     * @throws IOException if the final flush fails
     */
    @Override
    public void close() throws IOException {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            if (export != null) {
                export.markClosing();
            }
            if (timer != null) {
                timer.shutdownNow();
            }
            if (listener != null) {
                closeQuietly(listener);
                joinQuietly(acceptor, 5_000);
                if (config.unixSocket() != null
                        && socketKey != null
                        && socketKey.equals(fileKey(config.unixSocket()))) {
                    Files.deleteIfExists(config.unixSocket()); // ours still: nobody replaced it meanwhile
                }
            }
            for (ServerConnection connection : connections) {
                connection.shutdownInput();
            }
            long deadline = System.nanoTime() + config.drainTimeout().toNanos() + TimeUnit.SECONDS.toNanos(5);
            for (Thread thread : connectionThreads) {
                joinQuietly(thread, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            }
            for (ServerConnection connection : connections) {
                connection.closeChannel();
            }
            if (workers != null) {
                workers.shutdown();
                try {
                    if (!workers.awaitTermination(config.drainTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
                        LOG.warn("worker threads still busy after the drain timeout");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (started) {
                disk.flush();
            }
            LOG.debug("stopped serving {}", disk.name());
        } finally {
            terminated.countDown();
        }
    }

    @Override
    public String toString() {
        return "NbdServer[" + (started ? uri() : "not started") + ", disk " + disk.name() + "]";
    }

    private static Thread daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void joinQuietly(Thread thread, long millis) {
        if (thread == null) {
            return;
        }
        try {
            thread.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }
}
