package org.raidfive.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.raidfive.array.ArrayCounters;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncAction;
import org.raidfive.bench.Sizes;
import org.raidfive.counter.CounterMode;
import org.raidfive.nbd.AddressRange;
import org.raidfive.nbd.NbdServer;
import org.raidfive.nbd.NbdServerConfig;
import org.raidfive.nbd.RequestExecution;
import org.raidfive.nbd.TlsCredentials;
import org.raidfive.nbd.TlsMode;
import org.raidfive.stats.CountersFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid serve}: assembles the array (or makes a fresh in-memory one) and exports it with
 * {@link NbdServer} until SIGINT or SIGTERM; then it stops in order: no new connections, requests
 * in flight answered, the array flushed, any background pass checkpointed, the array closed clean
 * (superblocks marked clean on the members).
 *
 * <p>Threads: this command's thread waits for the stop signal ({@link StopSignals}) and then runs
 * the shutdown; a monitor thread reports a member failure or the end of a background pass as it
 * happens; the server's own threads serve. A shutdown hook runs the same idempotent shutdown if the
 * JVM is stopped another way (SIGHUP).
 */
@Command(
        header = "Export the array over NBD until stopped (SIGINT/SIGTERM).",
        name = "serve",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Assemble the array from the MEMBER files or NBD URIs (any order) and serve it as an NBD "
                    + "export to clients such as fio, qemu-img, nbdinfo or the kernel's nbd-client, until SIGINT or SIGTERM. "
                    + "The URI served is printed on stderr once listening.",
            "Stopping answers the requests in flight, then closes the array clean (as any other raid command "
                    + "leaves it). A pending resync or a recovery onto a spare runs in the background meanwhile; a member "
                    + "that fails while serving is reported and the array goes on degraded.",
            "An array stopped mid-reshape (raid grow, or Linux md) is served at the size md gives it during "
                    + "the reshape, each request mapped as md maps it at the reshape's position, while the reshape "
                    + "continues in the background (up to --speed-limit-max, held to --speed-limit-min while clients' "
                    + "I/O goes on; with --read-only it waits and nothing is written). With a write-intent bitmap such an array is served read-only.",
            "--backend memory serves a fresh in-memory array instead (for benchmarks and trials; its data goes "
                    + "when the server stops).",
            "Exit 0 after a clean stop of a whole array, 1 if it ended degraded or failed, 2 for bad input."
        },
        footer = {
            "",
            "Examples:",
            "  raid serve a.img b.img c.img d.img          # nbd://127.0.0.1:10809/raid",
            "  raid serve --port 0 --read-only a.img b.img c.img",
            "  raid serve --socket /tmp/raid.sock nbd://h1/m nbd://h2/m nbd://h3/m",
            "  raid serve --backend memory --disks 4 --size 1G"
        })
final class ServeCommand extends Verb {
    static final String DEFAULT_SIZE = "1G";

    @Option(
            names = "--port",
            paramLabel = "PORT",
            description = "TCP port (default: 10809, NBD's; 0 takes a free one, printed).")
    Integer port;

    @Option(names = "--socket", paramLabel = "PATH", description = "Serve on this Unix domain socket instead of TCP.")
    Path socket;

    @Option(
            names = "--bind",
            paramLabel = "ADDRESS",
            description = "Address to listen on (default: 127.0.0.1, this host only). Beyond this host it needs "
                    + "--tls require (with --tls-verify-peer and --allow to say who may connect) or --insecure.")
    String bind;

    @Option(
            names = "--export",
            paramLabel = "NAME",
            defaultValue = NbdServerConfig.DEFAULT_EXPORT_NAME,
            description = "Export name clients ask for (default: ${DEFAULT-VALUE}; the empty name selects it too).")
    String exportName;

    @Option(
            names = "--read-only",
            description = "Assemble read-only (nothing is written to the members, no pass "
                    + "starts) and refuse clients' writes (EPERM).")
    boolean readOnly;

    @Option(
            names = "--force",
            description = "Start an array that is dirty and degraded anyway (md's --force): stripes "
                    + "written at the crash may read back wrong (the RAID-5 write hole); the array is marked clean, as mdadm "
                    + "--assemble --force does, so later starts need no --force.")
    boolean force;

    @Mixin
    SpeedOptions speed;

    @Option(
            names = "--executor",
            paramLabel = "KIND",
            defaultValue = "auto",
            description = "Where requests run: pool (a pool of --workers threads shared by all connections: one "
                    + "connection's requests run in parallel, right when members have latency) or connection (each "
                    + "connection's thread runs its requests in order: no hand-off, fastest for memory-speed arrays); "
                    + "auto is connection for --backend memory, else pool (default: ${DEFAULT-VALUE}).")
    String executor;

    @Option(
            names = "--workers",
            paramLabel = "N",
            defaultValue = "4",
            description = "Threads of the pool executor (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(
            names = "--tls",
            paramLabel = "MODE",
            defaultValue = "off",
            description = "TLS with NBD_OPT_STARTTLS: off, on (clients may upgrade) or require (clients must; "
                    + "everything before STARTTLS is refused) (default: ${DEFAULT-VALUE}).")
    String tls;

    @Option(
            names = "--tls-certificates",
            paramLabel = "DIR|FILE",
            description = "The server's certificate and key: a directory laid out as qemu, nbdkit and libnbd "
                    + "expect (server-cert.pem, server-key.pem, and ca-cert.pem to check client certificates "
                    + "against), or a PKCS#12 file (.p12/.pfx; its password in RAID_TLS_PASSWORD).")
    Path tlsCertificates;

    @Option(names = "--tls-verify-peer", description = "Require a client certificate signed by ca-cert.pem.")
    boolean tlsVerifyPeer;

    @Option(
            names = "--allow",
            paramLabel = "CIDR",
            description = "Accept TCP clients only from this address block (repeatable), e.g. 10.0.0.0/8 or ::1.")
    List<String> allow = new ArrayList<>();

    @Option(
            names = "--no-list",
            description = "Reveal nothing a client does not know: NBD_OPT_LIST refused, no default export for "
                    + "the empty name, no export name in refusals, no description (it names the array).")
    boolean noList;

    @Option(
            names = "--insecure",
            description = "Allow a --bind beyond this host without --tls require: anyone "
                    + "who reaches the port can then read and write the array.")
    boolean insecure;

    @Option(
            names = "--max-connections",
            paramLabel = "N",
            defaultValue = "64",
            description = "Connections open at once (default: ${DEFAULT-VALUE}); at most 16 of them may be in the "
                    + "handshake, a new one evicting one that has sent nothing, so idle handshakes cannot lock clients "
                    + "out; on a full server a newcomer takes the slot of one idle for 5 s or trickling a write. A "
                    + "server full of working connections refuses new ones and logs why.")
    int maxConnections;

    @Option(
            names = "--max-connections-per-address",
            paramLabel = "N",
            defaultValue = "0",
            description = "Connections one client address (a local client: its user) may hold at once (default: "
                    + "half of --max-connections), so one address cannot hold every slot.")
    int maxConnectionsPerAddress;

    @Option(
            names = "--payload-timeout",
            paramLabel = "SECONDS",
            defaultValue = "10",
            description = "A write's data must have arrived this long, plus a second per MiB of it, after its "
                    + "header, or the connection is closed (default: ${DEFAULT-VALUE}; 0: never).")
    long payloadTimeout;

    @Option(
            names = "--handshake-timeout",
            paramLabel = "SECONDS",
            defaultValue = "10",
            description = "A client that has not finished the NBD handshake after this long is disconnected "
                    + "(default: ${DEFAULT-VALUE}; 0: never).")
    long handshakeTimeout;

    @Option(
            names = "--idle-timeout",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description = "A connection with nothing in flight and no request for this long is closed (default: "
                    + "${DEFAULT-VALUE}, never).")
    long idleTimeout;

    @Option(
            names = "--reply-timeout",
            paramLabel = "SECONDS",
            defaultValue = "30",
            description = "A client that does not take its replies for this long is disconnected, giving back the "
                    + "memory its replies hold (default: ${DEFAULT-VALUE}; 0: never).")
    long replyTimeout;

    @Option(
            names = "--max-request",
            paramLabel = "SIZE",
            defaultValue = "32M",
            converter = SizeConverter.class,
            description = "Largest request, advertised to clients (NBD_INFO_BLOCK_SIZE); larger ones get EINVAL "
                    + "without being read into memory (default: ${DEFAULT-VALUE}).")
    long maxRequest;

    @Option(
            names = "--in-flight-budget",
            paramLabel = "SIZE",
            defaultValue = "256M",
            converter = SizeConverter.class,
            description = "Request and reply data all connections together may hold in memory beyond 4 MiB each "
                    + "(default: ${DEFAULT-VALUE}); a client past it is not read from until its replies are taken.")
    long inFlightBudget;

    @Option(
            names = "--counters",
            paramLabel = "MODE",
            description = "The array's hot-path counters: percpu, percpu-shared (cells with atomic adds, the "
                    + "fallback without membarrier) or atomic (default: percpu).")
    String counters;

    @Option(
            names = "--backend",
            paramLabel = "KIND",
            description =
                    "memory: serve a fresh in-memory array (zeros) instead of MEMBER files, shaped by the options "
                            + "below, as raid bench builds its arrays.")
    String backend;

    @Option(names = "--disks", paramLabel = "N", description = "--backend memory: members (default: 4).")
    Integer disks;

    @Option(
            names = "--size",
            paramLabel = "SIZE",
            converter = SizeConverter.class,
            description = "--backend memory: array size at least this, members sized to hold it (default: "
                    + DEFAULT_SIZE + ").")
    Long size;

    @Option(
            names = "--chunk",
            paramLabel = "SIZE",
            converter = SizeConverter.class,
            description = "--backend memory: chunk size (default: 512K).")
    Long chunk;

    @Option(
            names = "--layout",
            paramLabel = "NAME",
            description = "--backend memory: md layout (default: left-symmetric).")
    String layout;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array; none with --backend memory. */
    List<String> members = new ArrayList<>();

    private ServedArray served;
    private NbdServer server;
    private ServeMonitor monitor;
    private boolean stopped;
    private int exitCode = ExitCode.OK;

    @Override
    public Integer call() throws Exception {
        NbdServerConfig config = checkOptions();
        Verbosity.showWarnings("org.raidfive.nbd", verbosity.level());
        try {
            NbdServer.checkCanListen(config); // before the array is opened: a refusal writes nothing
        } catch (IOException e) {
            throw CliException.usage(e.getMessage());
        }
        StopSignals signals = StopSignals.install(err(), name());
        if (backend == null && Members.reshaping(members)) {
            if (force) {
                throw CliException.usage("--force starts a dirty degraded array; " + members.get(0)
                        + "'s array is mid-reshape, which raid serve continues without it");
            }
            return new ServedReshape(this, source, members).serve(config, signals, speed.limits(), readOnly);
        }
        served = backend != null
                ? ServedArray.memory(memoryOptions(), counterMode())
                : ServedArray.assemble(members, readOnly, force, counterMode());
        report(served.array().assemblyReport());
        Thread hook = new Thread(() -> stop("the JVM is shutting down"), "raid-serve-shutdown");
        try {
            Runtime.getRuntime().addShutdownHook(hook);
            Raid5Array array = served.array();
            ArrayStatus before = array.status();
            if (speed.min != null || speed.max != null) {
                array.setSyncLimits(speed.limits());
            }
            publishCounters(array);
            SyncAction started = readOnly ? null : array.startSync();
            try {
                server = NbdServer.start(
                        array,
                        config.toBuilder()
                                .description("raidfive RAID-5 " + before.name() + " (UUID " + before.uuid() + ")")
                                .build());
            } catch (IOException e) {
                throw new CliException(ExitCode.USAGE, e.getMessage(), e);
            }
            if (liveCounters != null && config.unixSocket() != null) {
                try {
                    // raid stop --socket finds this server by the socket's inode in its counters file
                    liveCounters.recordServerSocket(config.unixSocket());
                } catch (IOException e) {
                    say("raid stop --socket will not find this server: " + e.getMessage());
                }
            }
            say("serving " + server.uri() + " (" + describe(before, config) + ")");
            if (started != null) {
                say(RebuildCommand.describe(before, started) + " in the background");
            }
            if (!isLoopback(config) && config.tls() != TlsMode.REQUIRE) {
                say("listening on " + config.bindAddress() + " without TLS (--insecure): any host that reaches "
                        + "port " + server.port() + " can read and write the array");
            }
            monitor = ServeMonitor.start(array, this::say);
            String why = signals.await();
            stop(why);
        } finally {
            stop("error");
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs or ran; stop() is idempotent
            }
        }
        return exitCode;
    }

    /**
     * Live counters and events for raid stat / raid monitor, in the run directory; an array that
     * cannot publish them (no such directory, a JVM without Agrona's flags) is served without.
     */
    /** The live counters this server publishes, or null. */
    private ArrayCounters liveCounters;

    private void publishCounters(Raid5Array array) {
        Path file = CountersFile.pathFor(LiveArrays.directory(), array.uuid());
        try {
            liveCounters = array.publishCounters(file);
            say("live counters and events in " + file + " (raid stat, raid monitor)");
        } catch (IOException | IllegalStateException e) {
            say("serving without live counters: " + e.getMessage());
        }
    }

    /** Stops in order, once, whoever calls first (this command's thread or the shutdown hook). */
    private synchronized void stop(String why) {
        if (stopped || served == null) {
            return;
        }
        stopped = true;
        Raid5Array array = served.array();
        List<String> problems = new ArrayList<>();
        if (server != null) {
            say("stopping (" + why + "): answering the requests in flight, then closing the array");
            try {
                server.close();
            } catch (IOException e) {
                problems.add("flushing the array failed: " + e.getMessage());
            }
        }
        if (monitor != null) {
            monitor.close();
        }
        ArrayStatus end = null;
        try {
            Passes.stopAll(array);
            end = array.status();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            served.close();
        } catch (IOException e) {
            problems.add("closing the array failed: " + e.getMessage());
        }
        if (end == null || server == null) {
            exitCode = ExitCode.PROBLEM;
            return;
        }
        String state = end.failed()
                ? "FAILED"
                : end.degraded()
                        ? "degraded, " + end.activeMembers() + " of " + end.raidDisks() + " members in sync"
                        : "whole";
        String closed = served.memory()
                ? "the in-memory array is gone"
                : readOnly
                        ? end.name() + " closed, read-only: the members are unchanged"
                        : end.failed() ? end.name() + " closed" : end.name() + " closed clean";
        for (String p : problems) {
            say(p);
        }
        say("stopped; " + closed + " (" + state + ")");
        exitCode = !problems.isEmpty() || end.failed() || end.degraded() ? ExitCode.PROBLEM : ExitCode.OK;
    }

    private NbdServerConfig checkOptions() throws IOException {
        if (backend == null) {
            if (source.array == null && source.given.isEmpty()) {
                throw CliException.usage(
                        "give the MEMBER files or NBD URIs of the array to serve (or --array NAME), or "
                                + "--backend memory for a fresh in-memory array");
            }
            members = source.members();
            for (Object[] o :
                    new Object[][] {{"--disks", disks}, {"--size", size}, {"--chunk", chunk}, {"--layout", layout}}) {
                if (o[1] != null) {
                    throw CliException.usage(o[0] + " shapes a fresh array: it applies only with --backend memory");
                }
            }
        } else {
            if (!backend.toLowerCase(Locale.ROOT).equals("memory")) {
                throw CliException.usage("unknown --backend '" + backend + "'; valid: memory");
            }
            if (!source.given.isEmpty() || source.array != null) {
                throw CliException.usage("--backend memory serves a fresh in-memory array: give no MEMBER or --array");
            }
        }
        if (socket != null && (port != null || bind != null)) {
            throw CliException.usage("give --socket or --port/--bind, not both");
        }
        if (socket != null && socket.toString().getBytes(StandardCharsets.UTF_8).length > 107) {
            // sockaddr_un's sun_path: refused here, before the array is assembled, not at bind
            throw CliException.usage(
                    "--socket " + socket + " is " + socket.toString().getBytes(StandardCharsets.UTF_8).length
                            + " bytes long; a Unix socket path holds at most "
                            + "107 (use a shorter or relative path)");
        }
        if (maxRequest > (1 << 30)) { // before the int cast below; the rest NbdServerConfig checks
            throw CliException.usage("--max-request " + maxRequest + " is larger than 1 GiB");
        }
        NbdServerConfig.Builder b = NbdServerConfig.builder()
                .exportName(exportName)
                .readOnly(readOnly)
                .maxConnections(maxConnections)
                .maxHandshaking(Math.min(16, Math.max(1, maxConnections)))
                .handshakeTimeout(Duration.ofSeconds(handshakeTimeout))
                .idleTimeout(Duration.ofSeconds(idleTimeout))
                .replyTimeout(Duration.ofSeconds(replyTimeout))
                .payloadTimeout(Duration.ofSeconds(payloadTimeout))
                .maxConnectionsPerAddress(maxConnectionsPerAddress)
                .maxRequestBytes((int) maxRequest)
                .inFlightBudgetBytes(inFlightBudget)
                .maxInFlightBytesPerConnection(
                        Math.max(maxRequest, NbdServerConfig.DEFAULT_MAX_IN_FLIGHT_BYTES_PER_CONNECTION))
                .requestExecution(parseExecutor(executor, backend != null))
                .workerThreads(workers)
                // The array takes whole 512-byte sectors: advertise it, so clients align (and others get EINVAL).
                .minimumBlockSize(512);
        if (socket != null) {
            b.unixSocket(socket);
        } else {
            b.bindAddress(bind != null ? bind : NbdServerConfig.DEFAULT_BIND_ADDRESS)
                    .port(port != null ? port : NbdServerConfig.DEFAULT_PORT);
        }
        TlsMode mode = parseTls(tls);
        if (mode != TlsMode.OFF) {
            if (tlsCertificates == null) {
                throw CliException.usage("--tls " + tls + " needs --tls-certificates DIR (server-cert.pem, "
                        + "server-key.pem, ca-cert.pem) or a PKCS#12 file");
            }
            try {
                String password = System.getenv("RAID_TLS_PASSWORD");
                b.tls(
                        mode,
                        TlsCredentials.server(
                                tlsCertificates, password == null ? new char[0] : password.toCharArray()));
            } catch (IOException e) {
                throw CliException.usage("--tls-certificates: " + e.getMessage());
            }
        } else if (tlsCertificates != null || tlsVerifyPeer) {
            throw CliException.usage("--tls-certificates and --tls-verify-peer need --tls on or --tls require");
        }
        b.verifyPeer(tlsVerifyPeer).listExports(!noList);
        if (socket != null && !allow.isEmpty()) {
            throw CliException.usage(
                    "--allow limits TCP clients by address; a Unix socket has none (use its file " + "permissions)");
        }
        for (String a : allow) {
            try {
                b.allow(AddressRange.parse(a));
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--allow " + e.getMessage());
            }
        }
        if (socket == null && !insecure && mode != TlsMode.REQUIRE && !loopback(bind)) {
            throw CliException.usage("--bind " + bind + " reaches beyond this host, and NBD without TLS lets anyone "
                    + "who reaches the port read and write the array: add --tls require --tls-certificates DIR, or "
                    + "--insecure to do it anyway");
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw CliException.usage(optionNames(e.getMessage()));
        }
    }

    /** NbdServerConfig's settings as this command's options, for its refusals. */
    private static final Map<String, String> OPTIONS = Map.ofEntries(
            Map.entry("handshakeTimeout", "--handshake-timeout"),
            Map.entry("idleTimeout", "--idle-timeout"),
            Map.entry("replyTimeout", "--reply-timeout"),
            Map.entry("payloadTimeout", "--payload-timeout"),
            Map.entry("maxConnectionsPerAddress", "--max-connections-per-address"),
            Map.entry("maxConnections", "--max-connections"),
            Map.entry("workerThreads", "--workers"),
            Map.entry("maxRequestBytes", "--max-request"),
            Map.entry("exportName", "--export"));

    /** A refusal of NbdServerConfig's in this command's words: its setting names become option names. */
    static String optionNames(String message) {
        StringBuilder out = new StringBuilder();
        Matcher m = Pattern.compile("\\b[a-z]+[A-Z][A-Za-z]*\\b").matcher(message);
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(OPTIONS.getOrDefault(m.group(), m.group())));
        }
        return m.appendTail(out).toString();
    }

    static TlsMode parseTls(String text) {
        switch (text.toLowerCase(Locale.ROOT)) {
            case "off":
                return TlsMode.OFF;
            case "on":
                return TlsMode.ON;
            case "require":
                return TlsMode.REQUIRE;
            default:
                throw CliException.usage("unknown --tls '" + text + "'; valid: off, on, require");
        }
    }

    private static boolean loopback(String bind) {
        if (bind == null) {
            return true;
        }
        try {
            return InetAddress.getByName(bind).isLoopbackAddress();
        } catch (IOException e) {
            return false; // an address that does not resolve is refused later, naming it
        }
    }

    /**
     * {@code auto}: measured with fio (4 KiB, iodepth 32, one connection) on a memory array, the
     * connection's own thread beats the hand-off to a pool by about a third; with file or NBD
     * members a slow request would hold up the connection's others, so the pool.
     */
    static RequestExecution parseExecutor(String text, boolean memoryBackend) {
        switch (text.toLowerCase(Locale.ROOT)) {
            case "auto":
                return memoryBackend ? RequestExecution.CONNECTION_THREAD : RequestExecution.WORKER_POOL;
            case "pool":
                return RequestExecution.WORKER_POOL;
            case "connection":
                return RequestExecution.CONNECTION_THREAD;
            default:
                throw CliException.usage("unknown --executor '" + text + "'; valid: auto, pool, connection");
        }
    }

    private CounterMode counterMode() {
        if (counters == null) {
            return CounterMode.PERCPU;
        }
        switch (counters.toLowerCase(Locale.ROOT)) {
            case "percpu":
                return CounterMode.PERCPU;
            case "percpu-shared":
                return CounterMode.PERCPU_SHARED;
            case "atomic":
                return CounterMode.ATOMIC;
            default:
                throw CliException.usage("unknown --counters '" + counters + "'; valid: percpu, percpu-shared, atomic");
        }
    }

    private ServedArray.MemoryOptions memoryOptions() {
        return new ServedArray.MemoryOptions(
                disks != null ? disks : 4,
                size != null ? size : Sizes.parse(DEFAULT_SIZE),
                chunk != null ? chunk : 512 * 1024,
                layout != null ? layout : "left-symmetric");
    }

    private String describe(ArrayStatus s, NbdServerConfig config) {
        StringBuilder d = new StringBuilder("array size ")
                .append(s.arrayBytes())
                .append(" bytes = ")
                .append(Sizes.human(s.arrayBytes()))
                .append(", ")
                .append(s.name())
                .append(" raid5 ")
                .append(s.layout())
                .append(" chunk ")
                .append(Sizes.chunk(s.chunkSize()))
                .append(", ")
                .append(s.activeMembers())
                .append(" of ")
                .append(s.raidDisks())
                .append(" members in sync");
        if (s.spareMembers() > 0) {
            d.append(" + ").append(s.spareMembers()).append(" spare");
        }
        d.append(", ")
                .append(s.state())
                .append(", ")
                .append(served.memory() ? "in memory, " : "")
                .append(config.readOnly() ? "read-only" : "read-write")
                .append(", ")
                .append(
                        config.requestExecution() == RequestExecution.CONNECTION_THREAD
                                ? "connection executor"
                                : "pool executor (" + config.workerThreads() + " workers)");
        return d.toString();
    }

    private static boolean isLoopback(NbdServerConfig config) {
        if (config.unixSocket() != null) {
            return true;
        }
        try {
            return InetAddress.getByName(config.bindAddress()).isLoopbackAddress();
        } catch (IOException e) {
            return false;
        }
    }
}
