package org.raidfive.bench;

/**
 * Where the next I/O of one issuer goes and whether it reads: xorshift64* random numbers, no
 * allocation. Random patterns pick a uniformly random block of the region; sequential ones walk it
 * from {@code startBlock}, wrapping. Not thread-safe: one per issuer.
 */
final class IoPattern {
    private final boolean random;
    private final long blocks;
    private final int bs;
    private final int readPercent;
    private final long stride;
    private long state;
    private long cursor;

    IoPattern(BenchConfig c, long seed, long startBlock) {
        this(c, seed, startBlock, 1);
    }

    /** A sequential issuer walks {@code startBlock, startBlock + stride, ...} (stride: its sibling issuers). */
    IoPattern(BenchConfig c, long seed, long startBlock, long stride) {
        this.random = c.rw().isRandom();
        this.bs = c.bs();
        this.blocks = c.size() / c.bs();
        this.readPercent = c.readPercent();
        this.state = seed == 0 ? 0x9E3779B97F4A7C15L : seed;
        this.cursor = Math.floorMod(startBlock, blocks);
        this.stride = Math.floorMod(stride, blocks) == 0 ? 1 : Math.floorMod(stride, blocks);
    }

    private long nextRandom() {
        long x = state;
        x ^= x >>> 12;
        x ^= x << 25;
        x ^= x >>> 27;
        state = x;
        return x * 0x2545F4914F6CDD1DL;
    }

    /** Byte offset of the next I/O. */
    long nextOffset() {
        long block;
        if (random) {
            block = Math.multiplyHigh(nextRandom() >>> 1, blocks << 1);
        } else {
            block = cursor;
            cursor += stride;
            if (cursor >= blocks) {
                cursor -= blocks;
            }
        }
        return block * bs;
    }

    /** Whether the next I/O reads (by the configured mix). */
    boolean nextIsRead() {
        if (readPercent == 100) {
            return true;
        }
        if (readPercent == 0) {
            return false;
        }
        return Long.remainderUnsigned(nextRandom(), 100) < readPercent;
    }
}
