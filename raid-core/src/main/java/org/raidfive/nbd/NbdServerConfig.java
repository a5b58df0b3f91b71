package org.raidfive.nbd;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything an {@link NbdServer} needs besides its disk, validated once by {@link Builder#build()}
 * (an invalid value is rejected with a message naming the value and the rule).
 *
 * <p>Defaults: export {@code "raid"} (the empty default-export name selects it too), read-write,
 * TCP on 127.0.0.1:10809, requests on a pool of 4 worker threads, 64 in-flight requests per
 * connection, 32 MiB maximum request, minimum block size 1, trim ignored, write-zeroes supported,
 * 30 s drain timeout.
 */
public final class NbdServerConfig {
    public static final String DEFAULT_EXPORT_NAME = "raid";
    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_PORT = NbdProtocol.DEFAULT_PORT;
    public static final int DEFAULT_MAX_REQUEST_BYTES = 32 << 20;
    public static final int PREFERRED_BLOCK_SIZE = 4096;

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
    }

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
        return b;
    }

    public String exportName() {
        return exportName;
    }

    /** Human-readable text sent with NBD_OPT_LIST and NBD_INFO_DESCRIPTION; empty for none. */
    public String description() {
        return description;
    }

    public boolean readOnly() {
        return readOnly;
    }

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

    public int workerThreads() {
        return workerThreads;
    }

    public int maxConnections() {
        return maxConnections;
    }

    public int maxInFlightPerConnection() {
        return maxInFlightPerConnection;
    }

    public int maxRequestBytes() {
        return maxRequestBytes;
    }

    public int minimumBlockSize() {
        return minimumBlockSize;
    }

    public TrimMode trimMode() {
        return trimMode;
    }

    public boolean writeZeroes() {
        return writeZeroes;
    }

    public RequestExecution requestExecution() {
        return requestExecution;
    }

    /** How long {@link NbdServer#close()} waits for in-flight requests before closing sockets. */
    public Duration drainTimeout() {
        return drainTimeout;
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

        private Builder() {
        }

        public Builder exportName(String exportName) {
            this.exportName = Objects.requireNonNull(exportName, "exportName");
            return this;
        }

        public Builder description(String description) {
            this.description = Objects.requireNonNull(description, "description");
            return this;
        }

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

        public Builder workerThreads(int workerThreads) {
            this.workerThreads = workerThreads;
            return this;
        }

        public Builder maxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
            return this;
        }

        public Builder maxInFlightPerConnection(int maxInFlight) {
            this.maxInFlightPerConnection = maxInFlight;
            return this;
        }

        public Builder maxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /** Advertised minimum block size (1, or a power of two up to 64 KiB); requests must align to it. */
        public Builder minimumBlockSize(int minimumBlockSize) {
            this.minimumBlockSize = minimumBlockSize;
            return this;
        }

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

        public Builder drainTimeout(Duration drainTimeout) {
            this.drainTimeout = Objects.requireNonNull(drainTimeout, "drainTimeout");
            return this;
        }

        public NbdServerConfig build() {
            int nameBytes = exportName.getBytes(StandardCharsets.UTF_8).length;
            if (nameBytes > NbdProtocol.MAX_STRING_BYTES || exportName.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("export name must be at most " + NbdProtocol.MAX_STRING_BYTES
                        + " UTF-8 bytes without NUL, got " + nameBytes + " bytes: '" + exportName + "'");
            }
            if (description.getBytes(StandardCharsets.UTF_8).length > NbdProtocol.MAX_STRING_BYTES) {
                throw new IllegalArgumentException("description must be at most " + NbdProtocol.MAX_STRING_BYTES
                        + " UTF-8 bytes");
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
                throw new IllegalArgumentException("maxInFlightPerConnection must be 1 to 4096, got "
                        + maxInFlightPerConnection);
            }
            if (minimumBlockSize < 1 || minimumBlockSize > 65536 || Integer.bitCount(minimumBlockSize) != 1) {
                throw new IllegalArgumentException("minimumBlockSize must be a power of two from 1 to 65536, got "
                        + minimumBlockSize);
            }
            if (maxRequestBytes < Math.max(PREFERRED_BLOCK_SIZE, minimumBlockSize) || maxRequestBytes > (1 << 30)
                    || maxRequestBytes % minimumBlockSize != 0) {
                throw new IllegalArgumentException("maxRequestBytes must be a multiple of the minimum block size ("
                        + minimumBlockSize + ") from " + Math.max(PREFERRED_BLOCK_SIZE, minimumBlockSize)
                        + " to 1 GiB, got " + maxRequestBytes);
            }
            if (drainTimeout.isNegative()) {
                throw new IllegalArgumentException("drainTimeout must not be negative, got " + drainTimeout);
            }
            return new NbdServerConfig(this);
        }
    }
}
