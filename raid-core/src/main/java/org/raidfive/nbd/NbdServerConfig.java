package org.raidfive.nbd;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * Everything an {@link NbdServer} needs besides its disk, validated once by {@link Builder#build()}
 * (an invalid value is rejected with a message naming the value and the rule).
 *
 * <p>Defaults: export {@code "raid"} (the empty default-export name selects it too), read-write,
 * TCP on 127.0.0.1:10809, requests on a pool of 4 worker threads, 64 connections of which at most
 * 16 in the handshake (a new one evicts a silent one), at most half of them from one address (a
 * local client: one user), 10 s to finish the handshake, no idle timeout, 10 s plus a second per MiB
 * for a write's payload to arrive, 30 s for a client to take its replies, 64 in-flight requests and
 * 64 MiB of payload per connection,
 * 4 MiB of it reserved, 256 MiB shared by all connections beyond their reserves, 32 MiB maximum
 * request (advertised with NBD_INFO_BLOCK_SIZE), minimum block size 1, trim ignored, write-zeroes
 * supported, 30 s drain timeout, no TLS, every address allowed, exports listed.
 */
public final class NbdServerConfig {
    /** The export's name unless one is given. */
    public static final String DEFAULT_EXPORT_NAME = "raid";
    /** Loopback: only this host reaches the server unless told otherwise. */
    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    /** NBD's port, 10809. */
    public static final int DEFAULT_PORT = NbdProtocol.DEFAULT_PORT;
    /** The largest request accepted unless told otherwise, 32 MiB (nbdkit's limit). */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 32 << 20;
    /** The block size the server tells clients it prefers. */
    public static final int PREFERRED_BLOCK_SIZE = 4096;
    /** How long a client may take over the handshake. */
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    /** How long a reply may wait for the client to take it. */
    public static final Duration DEFAULT_REPLY_TIMEOUT = Duration.ofSeconds(30);
    /** Connections in the handshake at once at most. */
    public static final int DEFAULT_MAX_HANDSHAKING = 16;
    /** How long a write's payload may take to arrive, plus a second per MiB of it. */
    public static final Duration DEFAULT_PAYLOAD_TIMEOUT = Duration.ofSeconds(10);
    /** Request and reply data all connections together may hold beyond their reserves. */
    public static final long DEFAULT_IN_FLIGHT_BUDGET_BYTES = 256L << 20;
    /** Data each connection may always hold, budget or not. */
    public static final long DEFAULT_CONNECTION_RESERVE_BYTES = 4L << 20;
    /** Data one connection may hold at most. */
    public static final long DEFAULT_MAX_IN_FLIGHT_BYTES_PER_CONNECTION = 64L << 20;

    private final String exportName;
    private final String description;
    private final boolean readOnly;
    private final String bindAddress;
    private final int port;
    private final Path unixSocket;
    private final int workerThreads;
    private final int maxConnections;
    private final int maxInFlightPerConnection;
    private final int maxRequestBytes;
    private final int minimumBlockSize;
    private final TrimMode trimMode;
    private final boolean writeZeroes;
    private final RequestExecution requestExecution;
    private final Duration drainTimeout;
    private final Duration handshakeTimeout;
    private final Duration idleTimeout;
    private final Duration replyTimeout;
    private final Duration payloadTimeout;
    private final int maxHandshaking;
    private final int maxConnectionsPerAddress;
    private final long inFlightBudgetBytes;
    private final long connectionReserveBytes;
    private final long maxInFlightBytesPerConnection;
    private final TlsMode tls;
    private final SSLContext sslContext;
    private final boolean verifyPeer;
    private final List<AddressRange> allow;
    private final boolean listExports;

    private NbdServerConfig(Builder b) {
        this.exportName = b.exportName;
        this.description = b.description;
        this.readOnly = b.readOnly;
        this.bindAddress = b.bindAddress;
        this.port = b.port;
        this.unixSocket = b.unixSocket;
        this.workerThreads = b.workerThreads;
        this.maxConnections = b.maxConnections;
        this.maxInFlightPerConnection = b.maxInFlightPerConnection;
        this.maxRequestBytes = b.maxRequestBytes;
        this.minimumBlockSize = b.minimumBlockSize;
        this.trimMode = b.trimMode;
        this.writeZeroes = b.writeZeroes;
        this.requestExecution = b.requestExecution;
        this.drainTimeout = b.drainTimeout;
        this.handshakeTimeout = b.handshakeTimeout;
        this.idleTimeout = b.idleTimeout;
        this.replyTimeout = b.replyTimeout;
        this.payloadTimeout = b.payloadTimeout;
        this.maxHandshaking = b.maxHandshaking;
        this.maxConnectionsPerAddress =
                b.maxConnectionsPerAddress > 0 ? b.maxConnectionsPerAddress : Math.max(1, b.maxConnections / 2);
        this.inFlightBudgetBytes = b.inFlightBudgetBytes;
        this.connectionReserveBytes = b.connectionReserveBytes;
        this.maxInFlightBytesPerConnection = b.maxInFlightBytesPerConnection;
        this.tls = b.tls;
        this.sslContext = b.sslContext;
        this.verifyPeer = b.verifyPeer;
        this.allow = List.copyOf(b.allow);
        this.listExports = b.listExports;
    }

    /** A builder with the defaults above (loopback, port 10809, no TLS). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this configuration's values, to derive a variant. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.exportName = exportName;
        b.description = description;
        b.readOnly = readOnly;
        b.bindAddress = bindAddress;
        b.port = port;
        b.unixSocket = unixSocket;
        b.workerThreads = workerThreads;
        b.maxConnections = maxConnections;
        b.maxInFlightPerConnection = maxInFlightPerConnection;
        b.maxRequestBytes = maxRequestBytes;
        b.minimumBlockSize = minimumBlockSize;
        b.trimMode = trimMode;
        b.writeZeroes = writeZeroes;
        b.requestExecution = requestExecution;
        b.drainTimeout = drainTimeout;
        b.handshakeTimeout = handshakeTimeout;
        b.idleTimeout = idleTimeout;
        b.replyTimeout = replyTimeout;
        b.payloadTimeout = payloadTimeout;
        b.maxHandshaking = maxHandshaking;
        b.maxConnectionsPerAddress = maxConnectionsPerAddress;
        b.inFlightBudgetBytes = inFlightBudgetBytes;
        b.connectionReserveBytes = connectionReserveBytes;
        b.maxInFlightBytesPerConnection = maxInFlightBytesPerConnection;
        b.tls = tls;
        b.sslContext = sslContext;
        b.verifyPeer = verifyPeer;
        b.allow = new ArrayList<>(allow);
        b.listExports = listExports;
        return b;
    }

    /** The export's name. */
    public String exportName() {
        return exportName;
    }

    /** Human-readable text sent with NBD_OPT_LIST and NBD_INFO_DESCRIPTION; empty for none. */
    public String description() {
        return description;
    }

    /** True when writes are refused (NBD_FLAG_READ_ONLY). */
    public boolean readOnly() {
        return readOnly;
    }

    /** The address the server listens on. */
    public String bindAddress() {
        return bindAddress;
    }

    /** TCP port; 0 asks for an ephemeral one (see {@link NbdServer#port()}). */
    public int port() {
        return port;
    }

    /** The Unix domain socket path, or null when serving TCP. */
    public Path unixSocket() {
        return unixSocket;
    }

    /** Threads that run requests (pool execution). */
    public int workerThreads() {
        return workerThreads;
    }

    /** Connections at once at most; more are refused. */
    public int maxConnections() {
        return maxConnections;
    }

    /** Requests of one connection in flight at most; the server stops reading it beyond. */
    public int maxInFlightPerConnection() {
        return maxInFlightPerConnection;
    }

    /** The largest request accepted (NBD_INFO_BLOCK_SIZE's maximum). */
    public int maxRequestBytes() {
        return maxRequestBytes;
    }

    /** The smallest block size clients are told (512: the array's sector). */
    public int minimumBlockSize() {
        return minimumBlockSize;
    }

    /** What NBD_CMD_TRIM does. */
    public TrimMode trimMode() {
        return trimMode;
    }

    /** True when NBD_CMD_WRITE_ZEROES is offered. */
    public boolean writeZeroes() {
        return writeZeroes;
    }

    /** How requests are run: on a pool, or on each connection's thread. */
    public RequestExecution requestExecution() {
        return requestExecution;
    }

    /** How long {@link NbdServer#close()} waits for in-flight requests before closing sockets. */
    public Duration drainTimeout() {
        return drainTimeout;
    }

    /** A client that has not finished the handshake after this long is disconnected (zero: never). */
    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /** A connection with nothing in flight and no request for this long is closed (zero: never). */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /**
     * A connection whose replies cannot be written (the client stopped reading) for this long is
     * closed, giving back what its pending replies hold (zero: never).
     */
    public Duration replyTimeout() {
        return replyTimeout;
    }

    /**
     * A write's payload must have arrived this long, plus a second per MiB of it, after its header
     * (zero: no limit), so a client trickling payloads cannot hold its slot and buffers.
     */
    public Duration payloadTimeout() {
        return payloadTimeout;
    }

    /**
     * Connections still in the handshake at once; a new one beyond it evicts one that has sent
     * nothing yet (never one that is progressing, never one past NBD_OPT_GO), so idle handshakes
     * can never lock real clients out.
     */
    public int maxHandshaking() {
        return maxHandshaking;
    }

    /**
     * Connections one client address (a local client, on loopback or a Unix socket: its user) may
     * hold at once; half of {@link #maxConnections()} unless set, so one address cannot hold every slot.
     */
    public int maxConnectionsPerAddress() {
        return maxConnectionsPerAddress;
    }

    /** Server-wide bytes of request and reply payload in flight beyond every connection's reserve. */
    public long inFlightBudgetBytes() {
        return inFlightBudgetBytes;
    }

    /** Payload bytes each connection may have in flight without drawing on the shared budget. */
    public long connectionReserveBytes() {
        return connectionReserveBytes;
    }

    /** Payload bytes one connection may have in flight at most. */
    public long maxInFlightBytesPerConnection() {
        return maxInFlightBytesPerConnection;
    }

    /** Whether clients may, or must, switch to TLS with NBD_OPT_STARTTLS. */
    public TlsMode tls() {
        return tls;
    }

    /** The server's certificate and trust, for TLS; null when TLS is off. */
    public SSLContext sslContext() {
        return sslContext;
    }

    /** Require and verify a client certificate (against the context's trust store). */
    public boolean verifyPeer() {
        return verifyPeer;
    }

    /** Client addresses allowed to connect over TCP; empty allows every one. */
    public List<AddressRange> allow() {
        return allow;
    }

    /** Whether NBD_OPT_LIST names the export; off, LIST is refused (NBD_REP_ERR_POLICY). */
    public boolean listExports() {
        return listExports;
    }

    @Override
    public String toString() {
        return "NbdServerConfig{export='" + exportName + "'"
                + (unixSocket != null ? ", unix=" + unixSocket : ", tcp=" + bindAddress + ":" + port)
                + (readOnly ? ", read-only" : "") + ", workers=" + workerThreads
                + ", inFlight=" + maxInFlightPerConnection + ", maxRequest=" + maxRequestBytes
                + ", minBlock=" + minimumBlockSize + ", trim=" + trimMode + ", writeZeroes=" + writeZeroes
                + ", execution=" + requestExecution + "}";
    }

    /** Mutable, not thread-safe; {@link #build()} validates and freezes. */
    public static final class Builder {
        private String exportName = DEFAULT_EXPORT_NAME;
        private String description = "";
        private boolean readOnly;
        private String bindAddress = DEFAULT_BIND_ADDRESS;
        private int port = DEFAULT_PORT;
        private boolean tcpSet;
        private Path unixSocket;
        private int workerThreads = 4;
        private int maxConnections = 64;
        private int maxInFlightPerConnection = 64;
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private int minimumBlockSize = 1;
        private TrimMode trimMode = TrimMode.IGNORE;
        private boolean writeZeroes = true;
        private RequestExecution requestExecution = RequestExecution.WORKER_POOL;
        private Duration drainTimeout = Duration.ofSeconds(30);
        private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
        private Duration idleTimeout = Duration.ZERO;
        private Duration replyTimeout = DEFAULT_REPLY_TIMEOUT;
        private Duration payloadTimeout = DEFAULT_PAYLOAD_TIMEOUT;
        private int maxHandshaking = DEFAULT_MAX_HANDSHAKING;
        private int maxConnectionsPerAddress;
        private long inFlightBudgetBytes = DEFAULT_IN_FLIGHT_BUDGET_BYTES;
        private long connectionReserveBytes = DEFAULT_CONNECTION_RESERVE_BYTES;
        private long maxInFlightBytesPerConnection = DEFAULT_MAX_IN_FLIGHT_BYTES_PER_CONNECTION;
        private TlsMode tls = TlsMode.OFF;
        private SSLContext sslContext;
        private boolean verifyPeer;
        private List<AddressRange> allow = new ArrayList<>();
        private boolean listExports = true;

        private Builder() {}

        /** How long a client may take over the handshake before it is dropped. */
        public Builder handshakeTimeout(Duration timeout) {
            this.handshakeTimeout = Objects.requireNonNull(timeout, "handshakeTimeout");
            return this;
        }

        /** A connection with nothing in flight and no request for this long is closed; zero for never. */
        public Builder idleTimeout(Duration timeout) {
            this.idleTimeout = Objects.requireNonNull(timeout, "idleTimeout");
            return this;
        }

        /** How long a reply may wait for the client to read it before the connection is closed. */
        public Builder replyTimeout(Duration timeout) {
            this.replyTimeout = Objects.requireNonNull(timeout, "replyTimeout");
            return this;
        }

        /** Connections in the handshake at once at most. */
        public Builder maxHandshaking(int max) {
            this.maxHandshaking = max;
            return this;
        }

        /** How long a write's payload may take to arrive, plus a second per MiB; zero for no limit. */
        public Builder payloadTimeout(Duration timeout) {
            this.payloadTimeout = Objects.requireNonNull(timeout, "payloadTimeout");
            return this;
        }

        /** Connections one address (a local client: its user) may hold; 0 for half of maxConnections. */
        public Builder maxConnectionsPerAddress(int max) {
            this.maxConnectionsPerAddress = max;
            return this;
        }

        /** Request and reply data all connections together may hold beyond their reserves. */
        public Builder inFlightBudgetBytes(long bytes) {
            this.inFlightBudgetBytes = bytes;
            return this;
        }

        /** Data each connection may always hold, whatever the budget. */
        public Builder connectionReserveBytes(long bytes) {
            this.connectionReserveBytes = bytes;
            return this;
        }

        /** Data one connection may hold at most. */
        public Builder maxInFlightBytesPerConnection(long bytes) {
            this.maxInFlightBytesPerConnection = bytes;
            return this;
        }

        /** TLS with NBD_OPT_STARTTLS using {@code context}'s key and trust; {@link TlsMode#OFF} needs none. */
        public Builder tls(TlsMode mode, SSLContext context) {
            this.tls = Objects.requireNonNull(mode, "tls");
            this.sslContext = context;
            return this;
        }

        /** Require a client certificate signed by the configured CA (with TLS). */
        public Builder verifyPeer(boolean verify) {
            this.verifyPeer = verify;
            return this;
        }

        /** Allows TCP clients from {@code range} (repeatable); with none, every address may connect. */
        public Builder allow(AddressRange range) {
            this.allow.add(Objects.requireNonNull(range, "allow"));
            return this;
        }

        /** Whether NBD_OPT_LIST tells clients the export's name. */
        public Builder listExports(boolean list) {
            this.listExports = list;
            return this;
        }

        /** The export's name. */
        public Builder exportName(String exportName) {
            this.exportName = Objects.requireNonNull(exportName, "exportName");
            return this;
        }

        /** The export's description (NBD_INFO_DESCRIPTION). */
        public Builder description(String description) {
            this.description = Objects.requireNonNull(description, "description");
            return this;
        }

        /** Refuse writes. */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /** Host name or literal address to bind for TCP (default 127.0.0.1; "0.0.0.0" for all). */
        public Builder bindAddress(String bindAddress) {
            this.bindAddress = Objects.requireNonNull(bindAddress, "bindAddress");
            this.tcpSet = true;
            return this;
        }

        /** TCP port, 0 for an ephemeral port. */
        public Builder port(int port) {
            this.port = port;
            this.tcpSet = true;
            return this;
        }

        /** Serve on a Unix domain socket at {@code path} instead of TCP. */
        public Builder unixSocket(Path path) {
            this.unixSocket = Objects.requireNonNull(path, "unixSocket");
            return this;
        }

        /** Threads that run requests (pool execution). */
        public Builder workerThreads(int workerThreads) {
            this.workerThreads = workerThreads;
            return this;
        }

        /** Connections at once at most. */
        public Builder maxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
            return this;
        }

        /** Requests of one connection in flight at most. */
        public Builder maxInFlightPerConnection(int maxInFlight) {
            this.maxInFlightPerConnection = maxInFlight;
            return this;
        }

        /** The largest request accepted. */
        public Builder maxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /** Advertised minimum block size (1, or a power of two up to 64 KiB); requests must align to it. */
        public Builder minimumBlockSize(int minimumBlockSize) {
            this.minimumBlockSize = minimumBlockSize;
            return this;
        }

        /** What NBD_CMD_TRIM does. */
        public Builder trimMode(TrimMode trimMode) {
            this.trimMode = Objects.requireNonNull(trimMode, "trimMode");
            return this;
        }

        /** Whether to advertise and serve NBD_CMD_WRITE_ZEROES (zeros written in bounded pieces). */
        public Builder writeZeroes(boolean writeZeroes) {
            this.writeZeroes = writeZeroes;
            return this;
        }

        /** Where requests run; see {@link RequestExecution} for the trade-off. */
        public Builder requestExecution(RequestExecution requestExecution) {
            this.requestExecution = Objects.requireNonNull(requestExecution, "requestExecution");
            return this;
        }

        /** How long stopping waits for requests in flight. */
        public Builder drainTimeout(Duration drainTimeout) {
            this.drainTimeout = Objects.requireNonNull(drainTimeout, "drainTimeout");
            return this;
        }

        /**
         * The configuration.
         *
         * @throws IllegalArgumentException if a value is out of range or the combination does not hold
         */
        public NbdServerConfig build() {
            int nameBytes = exportName.getBytes(StandardCharsets.UTF_8).length;
            if (nameBytes > NbdProtocol.MAX_STRING_BYTES || exportName.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("export name must be at most " + NbdProtocol.MAX_STRING_BYTES
                        + " UTF-8 bytes without NUL, got " + nameBytes + " bytes: '" + exportName + "'");
            }
            if (description.getBytes(StandardCharsets.UTF_8).length > NbdProtocol.MAX_STRING_BYTES) {
                throw new IllegalArgumentException(
                        "description must be at most " + NbdProtocol.MAX_STRING_BYTES + " UTF-8 bytes");
            }
            if (unixSocket != null && tcpSet) {
                throw new IllegalArgumentException("choose either a Unix socket (" + unixSocket
                        + ") or a TCP bind address/port (" + bindAddress + ":" + port + "), not both");
            }
            if (unixSocket == null) {
                if (port < 0 || port > 65535) {
                    throw new IllegalArgumentException("port must be 0 (ephemeral) to 65535, got " + port);
                }
                try {
                    InetAddress.getByName(bindAddress);
                } catch (UnknownHostException e) {
                    throw new IllegalArgumentException("bind address '" + bindAddress + "' does not resolve", e);
                }
            }
            if (workerThreads < 1 || workerThreads > 1024) {
                throw new IllegalArgumentException("workerThreads must be 1 to 1024, got " + workerThreads);
            }
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnections must be at least 1, got " + maxConnections);
            }
            if (maxInFlightPerConnection < 1 || maxInFlightPerConnection > 4096) {
                throw new IllegalArgumentException(
                        "maxInFlightPerConnection must be 1 to 4096, got " + maxInFlightPerConnection);
            }
            if (minimumBlockSize < 1 || minimumBlockSize > 65536 || Integer.bitCount(minimumBlockSize) != 1) {
                throw new IllegalArgumentException(
                        "minimumBlockSize must be a power of two from 1 to 65536, got " + minimumBlockSize);
            }
            if (maxRequestBytes < Math.max(PREFERRED_BLOCK_SIZE, minimumBlockSize)
                    || maxRequestBytes > (1 << 30)
                    || maxRequestBytes % minimumBlockSize != 0) {
                throw new IllegalArgumentException("maxRequestBytes must be a multiple of the minimum block size ("
                        + minimumBlockSize + ") from " + Math.max(PREFERRED_BLOCK_SIZE, minimumBlockSize)
                        + " to 1 GiB, got " + maxRequestBytes);
            }
            if (drainTimeout.isNegative()) {
                throw new IllegalArgumentException("drainTimeout must not be negative, got " + drainTimeout);
            }
            for (Object[] t : new Object[][] {
                {"handshakeTimeout", handshakeTimeout},
                {"idleTimeout", idleTimeout},
                {"replyTimeout", replyTimeout},
                {"payloadTimeout", payloadTimeout}
            }) {
                Duration d = (Duration) t[1];
                if (d.isNegative()) {
                    throw new IllegalArgumentException(t[0] + " must not be negative (zero: none), got "
                            + (d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms"));
                }
            }
            if (maxConnectionsPerAddress < 0) {
                throw new IllegalArgumentException("maxConnectionsPerAddress must not be negative (zero: half of "
                        + "maxConnections), got " + maxConnectionsPerAddress);
            }
            if (maxHandshaking < 1) {
                throw new IllegalArgumentException("maxHandshaking must be at least 1, got " + maxHandshaking);
            }
            if (connectionReserveBytes < 0 || inFlightBudgetBytes < 0) {
                throw new IllegalArgumentException("the in-flight budget and the per-connection reserve must not be "
                        + "negative, got " + inFlightBudgetBytes + " and " + connectionReserveBytes);
            }
            if (maxInFlightBytesPerConnection < maxRequestBytes) {
                throw new IllegalArgumentException("maxInFlightBytesPerConnection (" + maxInFlightBytesPerConnection
                        + ") must hold at least one request of maxRequestBytes (" + maxRequestBytes + ")");
            }
            if (connectionReserveBytes + inFlightBudgetBytes < maxRequestBytes) {
                throw new IllegalArgumentException(
                        "the reserve plus the shared budget (" + (connectionReserveBytes + inFlightBudgetBytes)
                                + " bytes) must hold one request of maxRequestBytes (" + maxRequestBytes
                                + ")");
            }
            if (tls != TlsMode.OFF && sslContext == null) {
                throw new IllegalArgumentException("TLS " + tls + " needs a certificate and key (an SSLContext)");
            }
            if (verifyPeer && tls == TlsMode.OFF) {
                throw new IllegalArgumentException("verifying client certificates needs TLS on");
            }
            return new NbdServerConfig(this);
        }
    }
}
