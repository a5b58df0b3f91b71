package org.raidfive.nbd;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of an {@link NbdClient}, validated once by {@link Builder#build()}.
 *
 * <p>Defaults: connect (TCP connect plus handshake) timeout 10 s, request timeout 30 s, 64
 * requests in flight, requests of at most 32 MiB (further capped by what the server advertises).
 */
public final class NbdClientConfig {
    private static final NbdClientConfig DEFAULTS = builder().build();

    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final int maxInFlight;
    private final int maxRequestBytes;

    private NbdClientConfig(Builder b) {
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.maxInFlight = b.maxInFlight;
        this.maxRequestBytes = b.maxRequestBytes;
    }

    /** The defaults of {@link #builder()}. */
    public static NbdClientConfig defaults() {
        return DEFAULTS;
    }

    /** A builder with the defaults: 10 s to connect, 30 s per request, 64 requests in flight, 32 MiB per request. */
    public static Builder builder() {
        return new Builder();
    }

    /** Bound on connecting and on the whole handshake. */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /**
     * Bound on each request, from submission to reply. A request that overruns it fails with
     * {@link NbdTimeoutException} and, since its fate on the server is unknown, closes the client.
     */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** Requests the client keeps in flight on the connection at most. */
    public int maxInFlight() {
        return maxInFlight;
    }

    /** The largest request the client sends; larger I/O is split. */
    public int maxRequestBytes() {
        return maxRequestBytes;
    }

    @Override
    public String toString() {
        return "NbdClientConfig{connectTimeout=" + connectTimeout + ", requestTimeout=" + requestTimeout
                + ", maxInFlight=" + maxInFlight + ", maxRequestBytes=" + maxRequestBytes + "}";
    }

    /** Mutable, not thread-safe. */
    public static final class Builder {
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private int maxInFlight = 64;
        private int maxRequestBytes = 32 << 20;

        private Builder() {}

        /** How long connecting and the handshake may take. */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = Objects.requireNonNull(timeout, "connectTimeout");
            return this;
        }

        /** How long a request may wait for its reply before the connection is given up. */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = Objects.requireNonNull(timeout, "requestTimeout");
            return this;
        }

        /** Requests in flight on the connection at most. */
        public Builder maxInFlight(int maxInFlight) {
            this.maxInFlight = maxInFlight;
            return this;
        }

        /** The largest request sent; larger I/O is split. */
        public Builder maxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /** The configuration. */
        public NbdClientConfig build() {
            if (connectTimeout.isNegative()
                    || connectTimeout.isZero()
                    || connectTimeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        "connectTimeout must be positive and under 24 days, got " + connectTimeout);
            }
            if (requestTimeout.isNegative() || requestTimeout.isZero()) {
                throw new IllegalArgumentException("requestTimeout must be positive, got " + requestTimeout);
            }
            if (maxInFlight < 1 || maxInFlight > 65536) {
                throw new IllegalArgumentException("maxInFlight must be 1 to 65536, got " + maxInFlight);
            }
            if (maxRequestBytes < 4096 || maxRequestBytes > (1 << 30)) {
                throw new IllegalArgumentException("maxRequestBytes must be 4096 to 1 GiB, got " + maxRequestBytes);
            }
            return new NbdClientConfig(this);
        }
    }
}
