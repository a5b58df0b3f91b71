package org.raidfive.array;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.raidfive.counter.CounterMode;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;

/**
 * Everything {@link Raid5Array#create} needs to know, validated once by {@link Builder#build()}
 * (in the manner of Aeron's {@code Context.conclude()}): a bad value is refused with a message that
 * names the value and the rule.
 */
public final class ArraySpec {
    /** mdadm's default chunk: 512 KiB. */
    public static final int DEFAULT_CHUNK = 512 * 1024;

    private static final int MAX_NAME = 32;

    private final int chunkSize;
    private final Raid5Algorithm algorithm;
    private final String name;
    private final long memberDataBytes;
    private final boolean assumeClean;
    private final CounterMode counterMode;
    private final SyncLimits syncLimits;
    private final byte[] uuid;
    private final ConsistencyPolicy consistencyPolicy;
    private final long bitmapChunk;
    private final ArrayListener listener;
    /** mdadm 4.2 adds an internal bitmap by default when each member holds more than this. */
    public static final long BITMAP_BY_DEFAULT_ABOVE = 100L << 30;

    private ArraySpec(Builder b) {
        this.chunkSize = b.chunkSize;
        this.algorithm = b.algorithm;
        this.name = b.name;
        this.memberDataBytes = b.memberDataBytes;
        this.assumeClean = b.assumeClean;
        this.counterMode = b.counterMode;
        this.syncLimits = b.syncLimits;
        this.uuid = b.uuid == null ? null : b.uuid.clone();
        this.consistencyPolicy = b.consistencyPolicy;
        this.bitmapChunk = b.bitmapChunk;
        this.listener = b.listener;
    }

    /** The listener registered before the array does anything, or null. */
    public ArrayListener listener() {
        return listener;
    }

    /** A builder with md's defaults: 512 KiB chunks, left-symmetric, the name {@code raidfive:0}, a resync at creation. */
    public static Builder builder() {
        return new Builder();
    }

    /** Bytes per chunk (md's chunk_size). */
    public int chunkSize() {
        return chunkSize;
    }

    /** md's RAID-5 layout (parity placement). */
    public Raid5Algorithm algorithm() {
        return algorithm;
    }

    /** md's set_name (at most 32 bytes), conventionally {@code host:name}. */
    public String name() {
        return name;
    }

    /** Bytes of each member to use for data, or 0 for "as much as the smallest member allows". */
    public long memberDataBytes() {
        return memberDataBytes;
    }

    /** Skip the initial parity pass: only correct when every member reads as zeros (or parity already matches). */
    public boolean assumeClean() {
        return assumeClean;
    }

    /** The hot-path counters: per-CPU striped or one atomic. */
    public CounterMode counterMode() {
        return counterMode;
    }

    /** Speed limits for background passes. */
    public SyncLimits syncLimits() {
        return syncLimits;
    }

    /**
     * How parity is kept consistent across a crash; null (the default) chooses as mdadm 4.2 does: a
     * write-intent bitmap when each member holds more than 100 GiB, else resync.
     */
    public ConsistencyPolicy consistencyPolicy() {
        return consistencyPolicy;
    }

    /** Bytes of member data per bit of a write-intent bitmap; 0 for mdadm's default. */
    public long bitmapChunk() {
        return bitmapChunk;
    }

    /** The array UUID to use, or null for a random one. */
    public byte[] uuid() {
        return uuid == null ? null : uuid.clone();
    }

    /** Builds an {@link ArraySpec}; every setter checks its value, {@link #build()} the combination. */
    public static final class Builder {
        private int chunkSize = DEFAULT_CHUNK;
        private Raid5Algorithm algorithm = Raid5Algorithm.DEFAULT;
        private String name = "raidfive:0";
        private long memberDataBytes;
        private boolean assumeClean;
        private CounterMode counterMode = CounterMode.PERCPU;
        private SyncLimits syncLimits = SyncLimits.MD_DEFAULT;
        private ArrayListener listener;
        private byte[] uuid;
        private ConsistencyPolicy consistencyPolicy;
        private long bitmapChunk;

        /** Bytes per chunk: a power of two from 4 KiB to 1 GiB (mdadm's --chunk). */
        public Builder chunkSize(long bytes) {
            Raid5Layout.checkChunk(bytes);
            this.chunkSize = (int) bytes;
            return this;
        }

        /** md's RAID-5 layout. */
        public Builder algorithm(Raid5Algorithm algorithm) {
            this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
            return this;
        }

        /** md's RAID-5 layout by mdadm's name or short name ({@code left-symmetric}, {@code ra}, ...). */
        public Builder layout(String mdadmName) {
            return algorithm(Raid5Algorithm.parse(mdadmName));
        }

        /** md's array name (set_name), at most 32 bytes, conventionally {@code host:name}. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** Bytes of data each member holds (mdadm's --size); 0 uses all of the smallest member. */
        public Builder memberDataBytes(long bytes) {
            this.memberDataBytes = bytes;
            return this;
        }

        /** Skips the initial resync (mdadm's --assume-clean): right when the members read as zeros or parity already holds. */
        public Builder assumeClean(boolean assumeClean) {
            this.assumeClean = assumeClean;
            return this;
        }

        /** The hot-path counters (default per-CPU); {@link CounterMode#ATOMIC} for A/B measurements. */
        public Builder counterMode(CounterMode mode) {
            this.counterMode = Objects.requireNonNull(mode, "counterMode");
            return this;
        }

        /** Speed limits for background passes (default md's). */
        public Builder syncLimits(SyncLimits limits) {
            this.syncLimits = Objects.requireNonNull(limits, "syncLimits");
            return this;
        }

        /** The array's UUID (16 bytes); null for a random one. */
        public Builder uuid(byte[] uuid) {
            if (uuid != null && uuid.length != 16) {
                throw new IllegalArgumentException("array UUID must be 16 bytes, got " + uuid.length);
            }
            this.uuid = uuid == null ? null : uuid.clone();
            return this;
        }

        /** The policy, or null for mdadm's choice (a bitmap above 100 GiB per member). */
        public Builder consistencyPolicy(ConsistencyPolicy policy) {
            this.consistencyPolicy = policy;
            return this;
        }

        /** Bytes of member data per bitmap bit (a power of two of at least 4 KiB); 0 for mdadm's default. */
        public Builder bitmapChunk(long bytes) {
            if (bytes != 0 && (bytes < 4096 || Long.bitCount(bytes) != 1 || bytes > Integer.MAX_VALUE)) {
                throw new IllegalArgumentException(
                        "bitmap chunk " + bytes + " bytes must be a power of two from " + "4 KiB to 1 GiB");
            }
            this.bitmapChunk = bytes;
            return this;
        }

        /** A listener registered before the array does anything (so it sees the initial resync start). */
        public Builder listener(ArrayListener listener) {
            this.listener = listener;
            return this;
        }

        /**
         * The spec.
         *
         * @throws IllegalArgumentException if the chunk, the name or the data size is out of range
         */
        public ArraySpec build() {
            Raid5Layout.checkChunk(chunkSize);
            if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME) {
                throw new IllegalArgumentException(
                        "array name '" + name + "' is longer than md's " + MAX_NAME + "-byte set_name");
            }
            // mdadm's POSIX-portable names (letters, digits, '.', '_', '-'), with its host: prefix:
            // nothing that could break an ARRAY line or a /dev/md/ path (a newline, a space, a slash).
            if (!name.matches("[A-Za-z0-9._:-]*")) {
                throw new IllegalArgumentException("array name '" + name.replaceAll("\\p{Cntrl}", "?") + "' may hold "
                        + "only letters, digits, '.', '_', '-' and a host: prefix, as mdadm's names");
            }
            if (memberDataBytes < 0 || (memberDataBytes != 0 && memberDataBytes < chunkSize)) {
                throw new IllegalArgumentException("member data size " + memberDataBytes
                        + " bytes must be 0 (use all) or at least one chunk (" + chunkSize + " bytes)");
            }
            return new ArraySpec(this);
        }
    }
}
