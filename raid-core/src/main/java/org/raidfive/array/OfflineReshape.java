package org.raidfive.array;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import org.raidfive.counter.ThreadStats;
import org.raidfive.disk.AlignedBuffers;
import org.raidfive.disk.AsyncDisk;
import org.raidfive.disk.ClaimMode;
import org.raidfive.disk.DiskClaim;
import org.raidfive.disk.IoCallback;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.MdFeatures;
import org.raidfive.md.MdTime;
import org.raidfive.md.MdUuid;
import org.raidfive.md.Superblock;
import org.raidfive.md.SuperblockException;
import org.raidfive.parity.Xor;

/**
 * A reshape of an array, run on its members (no {@link Raid5Array} open on them), as Linux md
 * restripes one: adding members ({@link
 * #grow}), removing members ({@link #shrink}) or changing the chunk size or layout of the same
 * members ({@link #change}), and in md's on-disk form throughout, so that md can take over mid-way
 * and raidfive can finish what md started: {@code reshape_position}, {@code raid_disks} the new
 * count, {@code delta_disks}, {@code new_layout}, {@code new_chunk}, {@code new_level}, and
 * {@code new_offset} with {@code MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_NEW_OFFSET}. As mdadm does
 * for v1.2 members without a backup file, the data offset moves away from the data still to be
 * moved: down for a grow (by mdadm's {@code min_offset_change}), so the new stripes are written
 * below the old ones they come from; up for a shrink (by as much), so they are written above; for
 * a chunk or layout change towards the larger room, to mdadm's {@code choose_offset} point.
 *
 * <p>A reshape whose offset moves down goes forwards, one that moves up goes backwards (md's
 * {@code reshape_backwards}, and {@code MD_FEATURE_RESHAPE_BACKWARDS} when the member count stays:
 * md's super_1_sync records the bit only then, a shrink being backwards by its negative delta),
 * from the end of the smaller of the two arrays down to 0. Either way it goes a batch of new stripes
 * at a time: the data of the batch is read from the old geometry (zeros past the old array's end, as
 * md fills them), its parity computed, and written in the new geometry. On members whose I/O waits
 * (NBD, files with O_DIRECT) every read of a batch goes to the members at once and then every write,
 * a deep queue on each member as md keeps one over its window; memory members, files through the
 * page cache, and a degraded batch (which rebuilds the missing member's chunks), go stripe by stripe
 * over a few threads. md's checkpoint rule
 * ({@code reshape_request} in {@code drivers/md/raid5.c}) decides when {@code reshape_position}
 * must be recorded first: before a batch would write over old data a resume from the recorded
 * position still reads, every member is flushed and the superblock with the position reached is
 * written and flushed on every member (the flushes and the superblock writes sent to every member
 * at once, round by round). A crash at any moment therefore leaves the recorded
 * position, the new geometry on one side of it and the old data on the other intact; {@link
 * #resume} continues from there, and {@link #readOnly} reads the array there, writing nothing, as
 * md maps a read during a reshape. {@link #read} and {@link #write} (and {@link #reader}, the array
 * as a disk) may also run on other threads while {@link #run} moves stripes: the array served
 * during its reshape, as md serves it. A write into the array bytes a batch is moving waits for
 * the batch's end (md's window being reshaped), a write elsewhere runs beside it; the first marks the
 * array dirty first (md's {@code resync_offset}); a reshape continued dirty after a crash ends
 * dirty, for the resync md runs after it. Writes are not served with an internal bitmap. The end writes md's final superblock: the new layout and chunk,
 * the data offset moved by {@code new_offset} and the data size changed by as much ({@code
 * md_finish_reshape}), no reshape fields; a shrink's freed members are spares.
 *
 * <p>An internal write-intent bitmap is kept, as md keeps it through a reshape (it maps member
 * sectors, whose count does not change): the added members get a copy, and its events follow every
 * superblock write so that it is not taken for stale.
 *
 * <p>A member failing mid-reshape (a read, a write, a flush or its superblock write) is recorded
 * faulty on the others, as md's error handler records it, and the reshape goes on degraded: its
 * chunks of the old geometry are rebuilt from the rest of their stripe (md's rule keeps whole old
 * stripes in place while any of their data is still to move), nothing is written to its slot, and
 * the array ends degraded, for a spare to be rebuilt into ({@link #missingMember} names it). A
 * reshape recorded so is resumed without that member. A second failure stops the reshape, resumable
 * only if the member comes back. {@link #setSyncLimits} paces it as md's {@code speed_limit_max}, and to
 * {@code speed_limit_min} while clients' reads and writes go on.
 *
 * <p>Refused (one line each, nothing written): starting on arrays that are degraded, dirty,
 * rebuilding, with a partial parity log (md refuses a reshape with a log too), bad blocks recorded,
 * members disagreeing on events; too little room for the offset's move (the sectors missing named);
 * a shrink below the array size the caller gives; a reshape md left that changes the level or
 * needs a backup file (finish those with Linux md).
 */
public final class OfflineReshape implements ReshapeState, AutoCloseable {
    /** Where {@link Hook} is called: the crash points of the reshape. */
    enum Point {
        /** A batch's old data is read (streamed on the lanes: its first stripe's); nothing of it written yet. */
        BATCH_READ,
        /**
         * One member write of a batch is done (on the lanes) or sent (a batch sent at once: a crash
         * injected there waits for the writes sent before it ends).
         */
        MEMBER_WRITTEN,
        /** The superblock of one member was sent during a checkpoint (written once its round ends). */
        CHECKPOINT_MEMBER,
        /** The superblock of one member was written with the final geometry. */
        FINISH_MEMBER,
        /** The superblock of one member was written marking the array dirty (a first write) or clean again. */
        STATE_MEMBER
    }

    /** A test's view of the crash points; throwing stops the reshape there, as a crash would. */
    @FunctionalInterface
    interface Hook {
        void at(Point point, long position) throws IOException;
    }

    /** md checkpoints at least this often. */
    private static final long CHECKPOINT_NANOS = 10_000_000_000L;
    /** Bytes each member moves per batch, at most (at least one stripe's chunk). */
    private static final int BATCH_MEMBER_BYTES = 4 << 20;
    /** Threads a batch's stripes are spread over (the caller is one of them). */
    private static final int LANES = Math.min(4, Runtime.getRuntime().availableProcessors());

    private final String name;
    private final MemberDisk[] slots;
    /** {@link #slots}' completion-based views, for a batch's I/O submitted at once; used while none is missing. */
    private final AsyncDisk[] asyncSlots;

    private final Superblock[] superblocks;
    private final List<DiskClaim> claims;
    private final Raid5Layout oldLayout;
    private final Raid5Layout newLayout;
    private final long[] oldOffset;
    private final long[] newOffset;
    /**
     * Sectors the data offset moves by on every member, away from the data still to be moved: down
     * for a forward reshape, up for a backward one (md's {@code min_offset_diff}, made positive).
     */
    private final long offsetMove;

    /**
     * md's {@code reshape_backwards}: the reshape runs from the end of the array down to 0, the new
     * geometry above the position and the old below it (a shrink, or a change with room only after
     * the data).
     */
    private final boolean backwards;

    /** Where the reshape starts: 0 forwards, md's {@code raid5_size(mddev, 0, 0)} backwards. */
    private final long startPosition;

    /** Where it ends: the new array's size forwards, 0 backwards. */
    private final long endPosition;
    /**
     * The array sectors up to (forwards) or from (backwards) this one are in the new geometry
     * (reshape_progress). Volatile: a {@link #read} on another thread maps by it, and a batch's
     * writes are done before it moves past them.
     */
    private volatile long progress;
    /**
     * The position the members' superblocks record (reshape_safe). Volatile: the reshape's
     * checkpoint moves it while writes run (with the turn shared), and a write reads it to see
     * whether it needs a checkpoint first; it moves only after the superblocks are written.
     */
    private volatile long recorded;

    /**
     * Readers hold it shared while they map and read; the reshape holds it alone only to move
     * {@link #recorded} and to leave a failed member out. A batch writes over old data below the
     * recorded position only (md's safepos), so a read that mapped by an earlier {@link #progress}
     * (the old geometry above it) stays right until the recorded position passes it: that move
     * waits for the read. md likewise maps a request under {@code device_lock} while a reshape runs.
     */
    private final ReentrantReadWriteLock mapping = new ReentrantReadWriteLock();

    /**
     * Client writes ({@link #write}) hold it shared, each stripe under its lock in {@link
     * #stripeLocks}, and so does a batch while it moves its stripes, with the array bytes it moves
     * in its window ({@link #windowLo}), which writes wait out, and the reshape's checkpoint (md
     * writes its superblocks while writes go on); the reshape's steps (a batch's start and end, the
     * end, a checkpoint at a stop), a write's dirty mark or checkpoint, a member's failure, a
     * flush and a read of a degraded array hold it alone. So a write never meets a batch that is
     * moving its stripes (md: the window being moved waits, the rest of the array is written), {@link
     * #progress} and {@link #missing} change only while no write runs ({@link #recorded} also moves
     * in a checkpoint beside writes, after the superblocks say so), and a
     * degraded read does not rebuild a chunk from a stripe a write is half-way through. Fair: waiting
     * writes go before the next batch.
     */
    private final ReentrantReadWriteLock turns = new ReentrantReadWriteLock(true);

    /**
     * The array bytes the batch in flight moves, widened to whole old stripes, [lo, hi); empty
     * between batches. Set under {@link #turns} alone, so a write that holds its turn shared sees the
     * window of any batch that runs meanwhile; a write into it waits on {@link #window}.
     */
    private volatile long windowLo;

    private volatile long windowHi;
    private final Object window = new Object();

    /** Client writes to one stripe (of either geometry) one at a time: a read-modify-write is not atomic. */
    private final Object[] stripeLocks =
            Arrays.stream(new Object[64]).map(o -> new Object()).toArray();

    /** This run marked the superblocks dirty for its first client write ({@link #markClean} undoes it). */
    private volatile boolean dirtied;

    /** The superblocks said clean when opened (a reshape resumed after a crash with writes stays dirty). */
    private boolean openedClean = true;

    private final ThreadLocal<ClientScratch> clientScratch = ThreadLocal.withInitial(ClientScratch::new);

    /** What a client write needs per stripe, kept per writing thread: a write allocates no arrays. */
    private final class ClientScratch {
        /** A whole stripe of either geometry and its parity. */
        final ByteBuffer stripe = AlignedBuffers.allocate(
                Math.max(oldLayout.disks() * oldLayout.chunkSize(), newLayout.disks() * newLayout.chunkSize()));
        /** XOR sources and their offsets, for up to a stripe's data chunks. */
        final ByteBuffer[] sources = new ByteBuffer[Math.max(3, Math.max(oldLayout.disks(), newLayout.disks()))];

        final int[] from = new int[sources.length];
    }

    /**
     * Per client thread (a read, or a write that reads a stripe), what rebuilding a missing member's
     * chunk takes, made on its first rebuild: room for the stripe's other chunks, seen through the
     * scratch's one view, and the XOR's sources.
     */
    private final ThreadLocal<LaneScratch> readerScratch = ThreadLocal.withInitial(this::newReaderScratch);

    private LaneScratch newReaderScratch() {
        return new LaneScratch(newScratch(), Math.max(oldLayout.disks(), newLayout.disks()));
    }

    private long events;
    /**
     * The end is on every member's superblock. Volatile: a served size ({@link #arrayBytes}) is read
     * outside the reshape's locks.
     */
    private volatile boolean finished;
    /** The members have an internal write-intent bitmap. */
    private final boolean hasBitmap;

    /** Opened by {@link #readOnly}: {@link #run} is refused. */
    private boolean readOnly;

    /**
     * The slot without a member (it failed during this reshape, or before it resumed), or -1: its
     * chunks of the old geometry are rebuilt from the others of their stripe, nothing is written to it.
     */
    private volatile int missing = -1;

    private final String uuid;
    /** Per slot, where the members' I/O is counted, or null: see {@link #countMemberIo}. */
    private volatile ThreadStats[] memberStats;

    /** What the member of {@link #missing} was called, when it failed in this run. */
    private String failedName;

    /** The lane number of a {@link #read}'s thread: its rebuilds use {@link #readerScratch}. */
    private static final int READER = -1;

    /** Per lane, room for the other chunks of an old stripe when one is rebuilt. */
    private ByteBuffer[] degradedScratch;

    /** The views of a batch's buffer and of its rebuilds' room that a phase sent at once gives its I/Os. */
    private final Views batchViews = new Views();

    private final Views roomViews = new Views();

    /**
     * Views of one buffer for the member I/Os of a phase sent at once, one per I/O (a disk may move
     * a view's position and limit while the I/O runs), handed out again from the first by the next
     * phase, which starts once every I/O of the last has ended: the views are made in the first
     * batches, then reused.
     */
    private static final class Views {
        private ByteBuffer of;
        private ByteBuffer[] views = new ByteBuffer[0];
        private int used;

        /** Hands out views of {@code buffer} from the first again. */
        void reset(ByteBuffer buffer) {
            if (of != buffer) {
                of = buffer;
                Arrays.fill(views, null);
            }
            used = 0;
        }

        ByteBuffer next() {
            if (used == views.length) {
                views = Arrays.copyOf(views, Math.max(64, 2 * used));
            }
            ByteBuffer v = views[used];
            if (v == null) {
                v = of.duplicate();
                views[used] = v;
            }
            used++;
            return v.clear();
        }
    }

    /** Per lane of the running {@link #run} (set before its lanes start): what a stripe reuses. */
    private LaneScratch[] laneScratch;

    /**
     * What one lane of a run uses stripe after stripe, so that moving a stripe allocates nothing: a
     * view of the run's batch buffer (a disk may move a buffer's position and limit: one view per
     * lane, cleared before each use, and a lane makes one call at a time) and the XOR's sources.
     */
    private static final class LaneScratch {
        private final ByteBuffer view;
        final ByteBuffer[] sources;
        final int[] at;
        private ByteBuffer degradedOf;
        private ByteBuffer degradedView;

        LaneScratch(ByteBuffer batch, int width) {
            view = batch.duplicate();
            sources = new ByteBuffer[width];
            at = new int[width];
        }

        ByteBuffer view() {
            return view.clear();
        }

        /** A view of {@code room}, this lane's room for a rebuild, made once. */
        ByteBuffer degradedView(ByteBuffer room) {
            if (degradedOf != room) {
                degradedOf = room;
                degradedView = room.duplicate();
            }
            return degradedView.clear();
        }
    }

    private long lastCheckpoint = System.nanoTime();
    /** The flushes {@link #startWriteBack} started, or null; and the first member one of them failed. */
    private AtOnce writeBack;

    private MemberFailed writeBackFailure;
    /** Room for the missing member's old chunks in a degraded batch sent at once; made at the first. */
    private SentRebuilds sentRebuilds;

    private Hook hook = (p, at) -> {};

    /** Bytes each member moves per batch, at most ({@link #setBatchMemberBytes}). */
    private int batchMemberBytes = BATCH_MEMBER_BYTES;

    /** md's {@code speed_limit_max} for this reshape, bytes per member per second. */
    private long maxBytesPerSecond = Long.MAX_VALUE;

    /** md's {@code speed_limit_min}: the rate kept while clients' reads or writes go on. */
    private long minBytesPerSecond = Long.MAX_VALUE;

    /** Clients' reads and writes so far ({@link #read}, {@link #write}): the reshape is not idle. */
    private final LongAdder foregroundOps = new LongAdder();

    private Clock clock = Clock.SYSTEM;

    /** The time the pacing reads and the sleep it takes: a test's clock can stand in. */
    interface Clock {
        long nanoTime();

        void sleep(long nanos) throws InterruptedException;

        Clock SYSTEM = new Clock() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleep(long nanos) throws InterruptedException {
                TimeUnit.NANOSECONDS.sleep(nanos);
            }
        };
    }

    private OfflineReshape(MemberDisk[] slots, Superblock[] superblocks, List<DiskClaim> claims, boolean done) {
        this.slots = slots;
        this.asyncSlots = new AsyncDisk[slots.length];
        for (int s = 0; s < slots.length; s++) {
            asyncSlots[s] = slots[s] == null ? null : AsyncDisk.of(slots[s]);
        }
        this.superblocks = superblocks;
        this.claims = claims;
        Superblock top =
                Arrays.stream(superblocks).filter(Objects::nonNull).findFirst().orElseThrow();
        this.name = ArrayMetadata.holder(top.name(), top.setUuid());
        this.uuid = MdUuid.format(top.setUuid());
        this.hasBitmap = top.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET);
        int disks = top.raidDisks();
        int slotCount = slots.length; // the old count too when members are removed
        this.backwards = isBackwards(top);
        // md's raid5_size: the component size in whole chunks of both geometries
        long memberBytes = top.size() * 512 / maxChunk(top) * maxChunk(top);
        this.oldLayout = new Raid5Layout(
                Raid5Algorithm.fromMdNumber(top.layout()),
                disks - top.deltaDisks(),
                top.chunkSectors() * 512,
                memberBytes);
        this.newLayout =
                new Raid5Layout(Raid5Algorithm.fromMdNumber(top.newLayout()), disks, top.newChunk() * 512, memberBytes);
        this.oldOffset = new long[slotCount];
        this.newOffset = new long[slotCount];
        long move = Long.MAX_VALUE;
        for (int s = 0; s < slotCount; s++) {
            if (superblocks[s] == null) {
                missing = s; // recorded faulty: nothing is read from or written to its slot
                continue;
            }
            oldOffset[s] = superblocks[s].dataOffset() * 512;
            newOffset[s] = (superblocks[s].dataOffset() + superblocks[s].newOffset()) * 512;
            move = Math.min(move, backwards ? superblocks[s].newOffset() : -(long) superblocks[s].newOffset());
        }
        this.offsetMove = move;
        long newArray = newLayout.stripes() * newLayout.stripeDataBytes() / 512;
        long oldArray = oldLayout.stripes() * oldLayout.stripeDataBytes() / 512;
        this.startPosition = backwards ? Math.min(newArray, oldArray) : 0;
        this.endPosition = backwards ? 0 : newArray;
        this.progress = done ? endPosition : top.reshapePosition();
        this.finished = done;
        this.recorded = progress;
        if (missing >= 0) {
            ensureScratch();
        }
        this.events = Arrays.stream(superblocks)
                .filter(Objects::nonNull)
                .mapToLong(Superblock::events)
                .max()
                .orElse(0);
    }

    /**
     * Starts adding {@code added} to the array on {@code members} (any order) as data members, to
     * {@code members.size() + added.size()} in all, and returns the reshape ready to {@link #run}.
     * The superblocks written here say a reshape is under way at position 0, so from this point Linux
     * md or {@link #resume} can carry it on. {@code added} must be blank disks at least as large as
     * the members (their first 64 KiB is not checked here: a caller that takes files from a user checks
     * them as {@code raid create} does).
     */
    public static OfflineReshape grow(List<? extends MemberDisk> members, List<? extends MemberDisk> added)
            throws IOException {
        return grow(members, added, 0, null);
    }

    /**
     * {@link #grow(List, List)} that also changes the chunk to {@code chunkBytes} (0 keeps it) and
     * the layout to {@code layout} (null keeps it) in the same reshape, as {@code mdadm --grow
     * --raid-devices N --chunk C --layout L} does: the data offset moves down by mdadm's {@code
     * min_offset_change} over both chunks, and the component size must be a whole number of new
     * chunks, as mdadm demands.
     */
    public static OfflineReshape grow(
            List<? extends MemberDisk> members, List<? extends MemberDisk> added, int chunkBytes, Raid5Algorithm layout)
            throws IOException {
        if (added.isEmpty()) {
            throw new ArrayConfigException("a reshape that adds members needs at least one disk to add");
        }
        return start(members, (found, claims) -> {
            Superblock[] sbs = found.sbs;
            Superblock top = sbs[0];
            String array = found.array;
            int oldDisks = top.raidDisks();
            int newDisks = oldDisks + added.size();
            if (newDisks > Raid5Layout.MAX_DISKS) {
                throw new ArrayConfigException(
                        array + ": " + newDisks + " members is more than " + Raid5Layout.MAX_DISKS);
            }
            int chunkSectors = top.chunkSectors();
            int newChunk = chunkBytes == 0 ? chunkSectors : chunkBytes / 512;
            Raid5Algorithm newLayout = layout == null ? Raid5Algorithm.fromMdNumber(top.layout()) : layout;
            if (chunkBytes != 0) {
                checkChunk(chunkBytes);
            }
            checkDivides(array, top, newChunk);
            long drop = minOffsetChange(chunkSectors, newChunk, oldDisks - 1, newDisks - 1);
            long bitmapBytes = bitmapBytes(members.get(0), sbs[0]);
            for (int s = 0; s < oldDisks; s++) {
                long room = sbs[s].dataOffset() - earliestDataSector(sbs[s], bitmapBytes / 512);
                if (room < drop) {
                    throw new ArrayConfigException(array + ": " + members.get(s).name()
                            + " has " + room + " sectors free before its data; adding " + added.size()
                            + " member(s) moves the data offset down by " + drop + " sectors (" + (drop - room)
                            + " sectors of room missing); a reshape with a backup file is not supported");
                }
            }
            long needed = top.dataOffset() * 512 + top.size() * 512;
            for (MemberDisk d : added) {
                if (d.size() < needed) {
                    throw new ArrayConfigException(
                            d.name() + " holds " + d.size() + " bytes; a member of " + array + " needs " + needed);
                }
                for (MemberDisk m : members) {
                    if (m == d) {
                        throw new ArrayConfigException(d.name() + " is already a member of " + array);
                    }
                }
            }
            for (MemberDisk d : added) {
                claims.add(d.claim(ClaimMode.EXCLUSIVE, array));
            }
            MemberDisk[] slots = Arrays.copyOf(bySlot(members, sbs, oldDisks, array, false), newDisks);
            Superblock[] next = new Superblock[newDisks];
            for (Superblock sb : sbs) {
                next[sb.role()] = sb.copy();
            }
            int devNumber = 0;
            for (Superblock sb : next) {
                if (sb != null) {
                    devNumber = Math.max(devNumber, sb.devNumber() + 1);
                }
            }
            for (int i = 0; i < added.size(); i++) {
                int slot = oldDisks + i;
                MemberDisk d = added.get(i);
                Superblock sb = top.copy()
                        .deviceUuid(MdUuid.random())
                        .devNumber(devNumber + i)
                        .dataSize(d.size() / 512 - top.dataOffset())
                        .cntCorrectedRead(0)
                        .devflags(0)
                        .setFeature(Superblock.MD_FEATURE_BAD_BLOCKS, false);
                slots[slot] = d;
                next[slot] = sb;
                if (sb.bblogOffset() != 0 && sb.bblogSize() > 0) {
                    SuperblockIo.writeEmptyBadBlockLog(d, sb);
                }
                if (bitmapBytes > 0) {
                    // The bitmap as the other members have it (md keeps it through a reshape: it maps member
                    // sectors, and their count does not change).
                    SuperblockIo.copyBitmapArea(members.get(0), d, sb, bitmapBytes);
                }
            }
            int maxDev = Math.max(top.maxDev(), devNumber + added.size());
            long events = Arrays.stream(sbs).mapToLong(Superblock::events).max().orElse(0) + 1;
            for (int s = 0; s < newDisks; s++) {
                Superblock sb = next[s];
                sb.maxDev(maxDev);
                for (int t = 0; t < newDisks; t++) {
                    sb.devRole(next[t].devNumber(), t);
                }
                markReshaping(sb.raidDisks(newDisks).deltaDisks(added.size()), newLayout.mdNumber(), newChunk, -drop, 0)
                        .events(events);
            }
            // The new members first: a crash before the old ones say "reshape" leaves them as blank
            // disks with a superblock nobody points at, and the array as it was.
            for (int s = newDisks - 1; s >= 0; s--) {
                write(slots[s], next[s]);
            }
            return new OfflineReshape(slots, next, claims, false);
        });
    }

    /**
     * Starts changing the chunk size and/or the layout of the array on {@code members} (any order, every
     * member), as {@code mdadm --grow --chunk/--layout} does, and returns the reshape ready to
     * {@link #run}. mdadm moves the data offset of such a reshape towards the larger free space, by its
     * {@code choose_offset} between the minimum change (a whole number of old and new rows) and all the
     * room: down when there is more room before the data than after it (the reshape runs forwards from
     * 0), up otherwise (md's backwards reshape, {@code MD_FEATURE_RESHAPE_BACKWARDS}, from the array's
     * end down to 0; the data size grows to the device's end when it must, as mdadm sets it to max).
     * The component size must be a whole number of new chunks, as mdadm demands.
     * {@code askedChunkBytes} 0 keeps the chunk, {@code askedLayout} null keeps the layout.
     */
    public static OfflineReshape change(
            List<? extends MemberDisk> members, int askedChunkBytes, Raid5Algorithm askedLayout) throws IOException {
        return start(members, (found, claims) -> {
            Superblock[] sbs = found.sbs;
            Superblock top = sbs[0];
            String array = found.array;
            int disks = top.raidDisks();
            int oldChunk = top.chunkSectors();
            int newChunkBytes = askedChunkBytes == 0 ? oldChunk * 512 : askedChunkBytes;
            Raid5Algorithm newLayout = askedLayout == null ? Raid5Algorithm.fromMdNumber(top.layout()) : askedLayout;
            checkChunk(newChunkBytes);
            int newChunk = newChunkBytes / 512;
            if (newChunk == oldChunk && newLayout.mdNumber() == top.layout()) {
                throw new ArrayConfigException(array + " already has a " + oldChunk / 2 + "K chunk and the "
                        + Raid5Algorithm.fromMdNumber(top.layout()) + " layout: nothing to change");
            }
            checkDivides(array, top, newChunk);
            long min = minOffsetChange(oldChunk, newChunk, disks - 1, disks - 1);
            long bitmapBytes = bitmapBytes(members.get(0), sbs[0]);
            long before = Long.MAX_VALUE;
            long after = Long.MAX_VALUE;
            for (int i = 0; i < disks; i++) {
                before = Math.min(before, mdadmSpaceBefore(sbs[i], bitmapBytes / 512));
                after = Math.min(after, members.get(i).size() / 512 - sbs[i].size() - sbs[i].dataOffset());
            }
            // mdadm's set_new_data_offset: towards the larger room, backwards when it is after the data
            boolean backwards = before <= after;
            long room = backwards ? after : before;
            if (room < min) {
                throw new ArrayConfigException(array + ": changing the chunk from " + oldChunk / 2 + "K to "
                        + newChunk / 2 + "K moves the data offset " + (backwards ? "up" : "down") + " by at least "
                        + min + " sectors, and there are " + room + " free " + (backwards ? "after" : "before")
                        + " the data (" + (min - room) + " sectors of room missing); a reshape with a backup file "
                        + "is not supported");
            }
            MemberDisk[] slots = bySlot(members, sbs, disks, array, false);
            Superblock[] next = new Superblock[disks];
            long events = Arrays.stream(sbs).mapToLong(Superblock::events).max().orElse(0) + 1;
            // md's raid5_size(mddev, 0, 0): where a backward reshape starts
            long start = backwards
                    ? top.size() / Math.max(oldChunk, newChunk) * Math.max(oldChunk, newChunk) * (disks - 1)
                    : 0;
            for (int i = 0; i < disks; i++) {
                Superblock sb = sbs[i];
                long offset = sb.dataOffset();
                long chosen = backwards
                        ? chooseOffset(offset, offset + after, offset + min, offset + after)
                        : chooseOffset(offset - before, offset, offset - before, offset - min);
                if (chosen < earliestDataSector(sb, bitmapBytes / 512)) {
                    throw new ArrayConfigException(array + ": the data offset mdadm would choose (" + chosen
                            + " sectors) overlaps the metadata before it; change the chunk or layout with Linux md");
                }
                Superblock changed = markReshaping(
                                sb.copy().deltaDisks(0), newLayout.mdNumber(), newChunk, chosen - offset, start)
                        .setFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS, backwards)
                        .events(events);
                next[sb.role()] = roomAfter(changed, members.get(i), chosen - offset);
            }
            for (int s = 0; s < disks; s++) {
                write(slots[s], next[s]);
            }
            return new OfflineReshape(slots, next, claims, false);
        });
    }

    /**
     * Starts removing members from the array on {@code members} (any order, every member), down to
     * {@code newDisks}, as {@code mdadm --grow --raid-devices} does, and returns the reshape ready to
     * {@link #run}. The array shrinks to {@code newDisks - 1} chunks a stripe: {@code arrayBytes} is
     * the size the caller has truncated it to (mdadm's {@code --array-size}, which mdadm insists on
     * first), at most that, and the data past it is not kept. The data offset moves up by mdadm's
     * {@code min_offset_change} (the reshape runs backwards, from the new array's end down to 0), so
     * each member needs that much room after its data; the data size grows into it when it must, as
     * mdadm sets the component's size to max. At the end the members past {@code newDisks} are spares.
     */
    public static OfflineReshape shrink(List<? extends MemberDisk> members, int newDisks, long arrayBytes)
            throws IOException {
        return start(members, (found, claims) -> {
            Superblock[] sbs = found.sbs;
            Superblock top = sbs[0];
            String array = found.array;
            int oldDisks = top.raidDisks();
            if (newDisks >= oldDisks || newDisks < Raid5Layout.MIN_DISKS) {
                throw new ArrayConfigException(array + " has " + oldDisks + " members: removing members leaves from "
                        + Raid5Layout.MIN_DISKS + " to " + (oldDisks - 1) + ", not " + newDisks);
            }
            int chunk = top.chunkSectors();
            long start = top.size() / chunk * chunk * (newDisks - 1);
            if (arrayBytes > start * 512 || arrayBytes < 0) {
                throw new ArrayConfigException("this change will reduce the size of " + array + " to " + start * 512
                        + " bytes (" + start / 2 + "K): give an array size of at most that (mdadm's --array-size "
                        + "first); the data past it is not kept");
            }
            long min = minOffsetChange(chunk, chunk, oldDisks - 1, newDisks - 1);
            for (int i = 0; i < oldDisks; i++) {
                long after = members.get(i).size() / 512 - sbs[i].size() - sbs[i].dataOffset();
                if (after < min) {
                    throw new ArrayConfigException(array + ": " + members.get(i).name() + " has " + after
                            + " sectors free after its data; removing " + (oldDisks - newDisks)
                            + " member(s) moves the data offset up by " + min + " sectors (" + (min - after)
                            + " sectors of room missing: make the member that much larger); a reshape with a "
                            + "backup file is not supported");
                }
            }
            MemberDisk[] slots = bySlot(members, sbs, oldDisks, array, false);
            Superblock[] next = new Superblock[oldDisks];
            long events = Arrays.stream(sbs).mapToLong(Superblock::events).max().orElse(0) + 1;
            for (int i = 0; i < oldDisks; i++) {
                Superblock sb = markReshaping(
                                sbs[i].copy().raidDisks(newDisks).deltaDisks(newDisks - oldDisks),
                                top.layout(),
                                chunk,
                                min,
                                start)
                        .events(events);
                next[sb.role()] = roomAfter(sb, members.get(i), min);
            }
            for (int s = 0; s < oldDisks; s++) {
                write(slots[s], next[s]);
            }
            return new OfflineReshape(slots, next, claims, false);
        });
    }

    /** How a reshape starts from the members' superblocks: checks, then writes its first superblocks. */
    @FunctionalInterface
    private interface Starter {
        OfflineReshape start(Found found, List<DiskClaim> claims) throws IOException;
    }

    /** The members read and claimed for a start ({@link #readStartable}), and given back if it fails. */
    private static OfflineReshape start(List<? extends MemberDisk> members, Starter starter) throws IOException {
        List<DiskClaim> claims = new ArrayList<>();
        try {
            return starter.start(readStartable(members, claims), claims);
        } catch (IOException | RuntimeException e) {
            claims.forEach(DiskClaim::close);
            throw e;
        }
    }

    /** The reshape fields of a start, as md's super_1_sync writes them; raid disks and delta set by the caller. */
    private static Superblock markReshaping(Superblock sb, int layout, int chunk, long newOffset, long position) {
        return sb.newLevel(Superblock.LEVEL_RAID5)
                .newLayout(layout)
                .newChunk(chunk)
                .newOffset((int) newOffset)
                .reshapePosition(position)
                .setFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE, true)
                .setFeature(Superblock.MD_FEATURE_NEW_OFFSET, true)
                .utime(MdTime.of(MdTime.nowSeconds(), 0));
    }

    /**
     * An upward move needs the data size to reach past the component at its new offset: when it does
     * not, mdadm sets the member's size to max (md's {@code new_offset_store} says E2BIG otherwise),
     * the device's end.
     */
    private static Superblock roomAfter(Superblock sb, MemberDisk disk, long up) {
        if (up > 0 && sb.dataSize() < up + sb.size()) {
            sb.dataSize(disk.size() / 512 - sb.dataOffset());
        }
        return sb;
    }

    /**
     * mdadm's {@code space_before} of a v1.2 member (super1.c {@code getinfo_super1}): the sectors
     * between the end of the metadata before the data and the data. mdadm measures the bitmap's end
     * from the device's start, not from the superblock as the kernel does.
     */
    static long mdadmSpaceBefore(Superblock sb, long bitmapSectors) {
        long earliest = sb.superOffset() + (32 + 4) * 2;
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            earliest = Math.max(earliest, sb.bitmapOffset() + bitmapSectors);
        }
        if (sb.bblogOffset() != 0 && sb.bblogSize() > 0) {
            earliest = Math.max(earliest, sb.superOffset() + sb.bblogOffset() + sb.bblogSize());
        }
        return Math.max(0, sb.dataOffset() - earliest);
    }

    /**
     * mdadm's {@code choose_offset} (Grow.c): a new data offset in {@code [min, max]}, near the
     * middle of {@code [lo, hi]} and aligned to as large a power of two as fits, up to 1 MiB.
     */
    static long chooseOffset(long lo, long hi, long min, long max) {
        long choice = (lo + hi) / 2;
        for (long bit = 1; bit < 2 * 1024; bit <<= 1) {
            if ((bit & choice) == 0) {
                continue;
            }
            long bigger = choice + bit;
            long smaller = choice - bit;
            if (bigger > max && smaller < min) {
                break;
            }
            if (bigger > max) {
                choice = smaller;
            } else if (smaller < min) {
                choice = bigger;
            } else if (hi - bigger > smaller - lo) {
                choice = bigger;
            } else {
                choice = smaller;
            }
        }
        return choice;
    }

    /**
     * The reshape recorded on {@code members} (any order, every member of the new geometry), ready to
     * {@link #run} from where its superblocks say it is, whoever started it (Linux md or raidfive).
     */
    public static OfflineReshape resume(List<? extends MemberDisk> members) throws IOException {
        return open(members, false);
    }

    /**
     * The reshape recorded on {@code members}, opened to {@link #read} the array as it stands at the
     * recorded position (md's mapping: below it forwards, or from it up backwards, the new geometry;
     * the old one elsewhere), without writing anything: the members are claimed shared, as a
     * read-only assembly claims them, and {@link #run} is refused. A member recorded faulty is read
     * from parity. The same reshapes as {@link #resume} are taken; one whose superblocks say it is
     * done (or whose end was cut short) is an array to assemble, and is refused here.
     */
    public static OfflineReshape readOnly(List<? extends MemberDisk> members) throws IOException {
        return open(members, true);
    }

    /** Whether the members are marked dirty now: written to since they were clean, or a resync is due. */
    boolean dirtied() {
        return dirtied || !openedClean;
    }

    /** Whether it was opened {@link #readOnly}. */
    boolean readOnly() {
        return readOnly;
    }

    private static OfflineReshape open(List<? extends MemberDisk> members, boolean readOnly) throws IOException {
        List<DiskClaim> claims = new ArrayList<>();
        try {
            Found found = readAll(members, claims, readOnly ? ClaimMode.SHARED : ClaimMode.EXCLUSIVE);
            Superblock[] sbs = found.sbs;
            Superblock top = sbs[0];
            String array = found.array;
            List<Integer> finishing = found.finishing;
            boolean done = !top.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE);
            if (done && (finishing.isEmpty() || readOnly)) {
                throw new ArrayConfigException(array + " is not reshaping: nothing to "
                        + (readOnly
                                ? "read mid-reshape (assemble it"
                                        + (finishing.isEmpty() ? ")" : " after raid grow --continue)")
                                : "continue"));
            }
            String unsupported = done ? null : unsupported(top, sbs, members);
            if (unsupported != null) {
                throw new ArrayConfigException(array + "'s reshape " + unsupported
                        + ": raidfive " + (readOnly ? "reads and continues" : "continues")
                        + " reshapes that add or remove members or change chunk or layout, with "
                        + "the data offset moved (no backup file); "
                        + "finish this one with Linux md (mdadm --assemble)");
            }
            int disks = top.raidDisks();
            // a shrink reads its old members until the end, then they are spares
            int slotCount = done ? disks : Math.max(disks, disks - top.deltaDisks());
            for (int i = 0; i < sbs.length && !done; i++) {
                if (sbs[i].role() == Superblock.ROLE_SPARE) {
                    throw new ArrayConfigException(members.get(i).name() + " is a spare of " + array
                            + ": continue the reshape with its active members only, and add the spare after");
                }
            }
            MemberDisk[] slots = bySlot(members, sbs, slotCount, array, true);
            Superblock[] bySlot = new Superblock[slotCount];
            for (Superblock sb : sbs) {
                if (sb.role() != Superblock.ROLE_SPARE) {
                    bySlot[sb.role()] = sb;
                }
            }
            if (done) {
                // a shrink interrupted while its end was written: the freed members are spares already
                List<MemberDisk> active = new ArrayList<>();
                List<Superblock> activeSbs = new ArrayList<>();
                for (int i = 0; i < sbs.length; i++) {
                    if (sbs[i].role() != Superblock.ROLE_SPARE) {
                        active.add(members.get(i));
                        activeSbs.add(sbs[i]);
                    }
                }
                checkResumable(array, active, activeSbs.toArray(new Superblock[0]), slots);
            } else {
                checkResumable(array, members, sbs, slots);
            }
            for (int i : finishing) {
                write(members.get(i), sbs[i]); // the end, as the others have it
            }
            OfflineReshape reshape = new OfflineReshape(slots, bySlot, claims, done);
            reshape.readOnly = readOnly;
            reshape.openedClean = Arrays.stream(sbs).allMatch(Superblock::isClean);
            return reshape;
        } catch (IOException | RuntimeException e) {
            claims.forEach(DiskClaim::close);
            throw e;
        }
    }

    /**
     * The members by slot: each in the slot its superblock names, below {@code disks}, one per slot,
     * every slot taken; or, with {@code oneFaulty}, one slot left empty when the newest superblock
     * lists no device in it (its member failed: md's degraded reshape goes on without it).
     */
    private static MemberDisk[] bySlot(
            List<? extends MemberDisk> members, Superblock[] sbs, int disks, String array, boolean oneFaulty)
            throws ArrayConfigException {
        MemberDisk[] slots = new MemberDisk[disks];
        for (int i = 0; i < sbs.length; i++) {
            int role = sbs[i].role();
            if (role == Superblock.ROLE_SPARE) {
                continue; // a finished shrink's freed member (a spare is refused before a reshape runs)
            }
            if (role >= disks) {
                throw new ArrayConfigException(members.get(i).name() + " is not an active member of " + array
                        + " (role " + Superblock.describeRole(role) + ")");
            }
            if (slots[role] != null) {
                throw new ArrayConfigException(members.get(i).name() + " and " + slots[role].name()
                        + " both say they are slot " + role + " of " + array + " (a copy of a member?)");
            }
            slots[role] = members.get(i);
        }
        int empty = -1;
        for (int s = 0; s < disks; s++) {
            if (slots[s] == null) {
                boolean listed = false;
                for (int d = 0; d < sbs[0].maxDev(); d++) {
                    listed |= sbs[0].devRole(d) == s;
                }
                if (!oneFaulty || listed || empty >= 0) {
                    throw new ArrayConfigException(array + " is missing the member in slot " + s + ": raidfive "
                            + (oneFaulty
                                    ? "continues a reshape without a member only when the members record it failed"
                                    : "starts a reshape only on whole arrays")
                            + " (every one of its " + disks + " members" + (oneFaulty ? " but a failed one" : "")
                            + ")");
                }
                empty = s;
            }
        }
        return slots;
    }

    /**
     * md's {@code reshape_backwards} from a superblock (super_1_validate): a reshape that removes
     * members runs backwards, and one that keeps their count does when the bit says so.
     */
    static boolean isBackwards(Superblock sb) {
        return sb.deltaDisks() < 0 || (sb.deltaDisks() == 0 && sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS));
    }

    /** Why raidfive does not continue this md reshape, or null when it does (more members, same chunk and layout). */
    private static String unsupported(Superblock top, Superblock[] sbs, List<? extends MemberDisk> members) {
        if (top.newLevel() != Superblock.LEVEL_RAID5) {
            return "changes the level to " + top.newLevel();
        }
        if (top.deltaDisks() == 0 && top.newChunk() == top.chunkSectors() && top.newLayout() == top.layout()) {
            return "changes nothing";
        }
        if (top.newChunk() <= 0 || Integer.bitCount(top.newChunk()) != 1 || top.newChunk() < 8) {
            return "has a new chunk of " + top.newChunk() + " sectors";
        }
        if (top.hasFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS) && top.deltaDisks() > 0) {
            return "adds members backwards";
        }
        boolean backwards = isBackwards(top);
        for (int i = 0; i < sbs.length; i++) {
            if (!sbs[i].hasFeature(Superblock.MD_FEATURE_NEW_OFFSET)
                    || (backwards ? sbs[i].newOffset() <= 0 : sbs[i].newOffset() >= 0)) {
                return "keeps the data offset of " + members.get(i).name() + " (md's reshape with a backup file)";
            }
        }
        return null;
    }

    void hook(Hook h) {
        this.hook = h;
    }

    void clock(Clock c) {
        this.clock = c;
    }

    /**
     * md's speed limits for the reshape, per member per second as for every pass: while no client
     * reads or writes ({@link #read}, {@link #write}) the reshape runs up to the maximum; after a
     * batch during which one did, it slows to the minimum (md's {@code speed_limit_min}, kept while
     * other I/O runs) until a batch passes without any. Takes effect at the next batch.
     */
    public void setSyncLimits(SyncLimits limits) {
        this.minBytesPerSecond = limits.minBytesPerSecond();
        this.maxBytesPerSecond = limits.maxBytesPerSecond();
    }

    /**
     * Bytes each member moves per batch at most (default 4 MiB; at least one row of stripes), set
     * before {@link #run}: smaller batches keep a {@link #write} waiting for a batch shorter, at
     * some cost in the reshape's rate.
     */
    public void setBatchMemberBytes(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("batch of " + bytes + " bytes per member");
        }
        this.batchMemberBytes = bytes;
    }

    /** Whether the reshape runs from the array's end down to 0 (md's {@code reshape_backwards}). */
    @Override
    public boolean backwards() {
        return backwards;
    }

    /** Array sectors the reshape moves in all: from its start position to its end position. */
    @Override
    public long sectorsTotal() {
        return Math.abs(endPosition - startPosition);
    }

    /** Array sectors already moved when the reshape is at {@code position}. */
    @Override
    public long sectorsDone(long position) {
        return Math.abs(position - startPosition);
    }

    @Override
    public String uuid() {
        return uuid;
    }

    /** {@code holder}-style name of the array: its name and UUID. */
    @Override
    public String name() {
        return name;
    }

    /**
     * md's reshape position: the array sectors below it (forwards) or from it up ({@link #backwards})
     * are in the new geometry.
     */
    @Override
    public long position() {
        return progress;
    }

    /** The position at which the reshape is done: the new array's size forwards, 0 backwards. */
    public long endPosition() {
        return endPosition;
    }

    /** Members before the reshape. */
    @Override
    public int oldDisks() {
        return oldLayout.disks();
    }

    /** Members after it. */
    @Override
    public int newDisks() {
        return newLayout.disks();
    }

    /**
     * The array's size in bytes before the reshape (md keeps it until the end of a grow; a shrink's
     * caller truncated it first).
     */
    @Override
    public long oldArrayBytes() {
        return oldLayout.arrayBytes();
    }

    /** The chunk size before the reshape, in bytes. */
    @Override
    public int oldChunkBytes() {
        return oldLayout.chunkSize();
    }

    /** The chunk size after the reshape, in bytes. */
    @Override
    public int newChunkBytes() {
        return newLayout.chunkSize();
    }

    /** The parity layout before the reshape. */
    @Override
    public Raid5Algorithm oldAlgorithm() {
        return oldLayout.algorithm();
    }

    /** The parity layout after the reshape. */
    @Override
    public Raid5Algorithm newAlgorithm() {
        return newLayout.algorithm();
    }

    /** The array's size in bytes once the reshape is done. */
    @Override
    public long newArrayBytes() {
        return newLayout.arrayBytes();
    }

    /**
     * Moves the data until the reshape is done (true) or {@code stop} says to stop between batches
     * (false; the position reached is checkpointed on every member first). {@code progress} hears the
     * position after each batch. A member failing is left out (see above); an I/O error beyond that
     * (a second member) stops the reshape where it is: the last checkpoint and
     * the data are intact, and {@link #resume} continues from there.
     */
    public boolean run(BooleanSupplier stop, LongConsumer progressListener) throws IOException {
        if (readOnly) {
            throw new IllegalStateException(name + "'s reshape was opened read-only");
        }
        if (finished) {
            return true;
        }
        int chunk = newLayout.chunkSize();
        long stripeBytes = (long) (newLayout.dataDisks() + 1) * chunk;
        if (stripeBytes > 1 << 30) {
            throw new ArrayConfigException(name + ": a stripe of " + stripeBytes + " bytes is more than raidfive "
                    + "restripes in memory at once (1 GiB); finish this reshape with Linux md");
        }
        int row = rowStripes();
        int batch = Math.max(row, batchMemberBytes / chunk / row * row);
        // a batch streamed on the lanes needs a stripe of room per lane; one sent at once, all of it
        // (a run that starts streaming never sends at once: a member left out stays out)
        int held = submitsAtOnce() ? batch : Math.min(batch, LANES);
        ByteBuffer buf = AlignedBuffers.allocate((int) (held * stripeBytes));
        laneScratch = new LaneScratch[LANES];
        for (int i = 0; i < LANES; i++) {
            laneScratch[i] = new LaneScratch(buf, Math.max(oldLayout.disks(), newLayout.disks()));
        }
        try (Lanes lanes = new Lanes(LANES)) {
            return runBatches(stop, progressListener, buf, lanes, batch);
        }
    }

    private boolean runBatches(
            BooleanSupplier stop, LongConsumer progressListener, ByteBuffer buf, Lanes lanes, int batch)
            throws IOException {
        int chunk = newLayout.chunkSize();
        int row = rowStripes();
        long paceStart = clock.nanoTime();
        long moved = 0; // bytes per member since paceStart, at the rate paceLimit
        long paceLimit = maxBytesPerSecond;
        long foreground = foregroundOps.sum();
        while (progress != endPosition) {
            int n;
            long batchStart = clock.nanoTime();
            turns.writeLock().lock();
            try {
                if (stop.getAsBoolean()) {
                    checkpoint();
                    return false;
                }
                n = step(batch, row, paceLimit, buf, lanes);
            } finally {
                turns.writeLock().unlock();
            }
            progressListener.accept(progress);
            // md's is_mddev_idle: clients' I/O since the last batch holds the reshape to the minimum
            long nowForeground = foregroundOps.sum();
            long limit = nowForeground != foreground ? minBytesPerSecond : maxBytesPerSecond;
            foreground = nowForeground;
            if (limit != paceLimit) { // a new window at the new rate, from this batch's start
                paceLimit = limit;
                paceStart = batchStart;
                moved = 0;
            }
            moved += (long) n * chunk;
            pace(paceStart, moved, paceLimit, stop);
        }
        turns.writeLock().lock();
        try {
            finish();
        } finally {
            turns.writeLock().unlock();
        }
        return true;
    }

    /**
     * One batch of the reshape (a checkpoint first when md's rule asks for it), run with its turn
     * taken, at most a quarter second's worth at {@code limit}; returns the new stripes it moved.
     */
    private int step(int batch, int row, long limit, ByteBuffer buf, Lanes lanes) throws IOException {
        int chunk = newLayout.chunkSize();
        int chunkSectors = chunk / 512;
        long stripeSectors = (long) chunkSectors * newLayout.dataDisks();
        // forwards the batch's first new stripe, backwards one past its last
        long at = progress / stripeSectors;
        long left = backwards ? at : newLayout.stripes() - at;
        int n = (int) Math.min(pacedBatch(batch, chunk, row, limit), left);
        if (room(at) < (long) n * chunkSectors || System.nanoTime() - lastCheckpoint > CHECKPOINT_NANOS) {
            shared(this::checkpoint); // md writes its superblocks while writes elsewhere go on
            // whole rows: md records only positions on a row of the larger chunk (raid5_run)
            n = (int) Math.min(n, Math.max(0, room(at) / chunkSectors / row * row));
            if (n == 0) {
                throw new ArrayConfigException(name + ": the data offset moved by " + offsetMove
                        + " sectors is too little to restripe at position " + progress
                        + " without overwriting data still needed; finish the reshape with Linux md");
            }
        }
        long first = backwards ? at - n : at;
        int stripes = n;
        openWindow(first, stripes);
        try {
            // md's rule: only the window being moved waits. The batch's I/O holds the turn shared, so
            // writes outside the window go on meanwhile; progress moves with the turn alone again.
            shared(() -> moveBatch(first, stripes, buf, lanes));
            progress += (backwards ? -stripes : stripes) * stripeSectors;
        } finally {
            closeWindow();
        }
        return stripes;
    }

    /**
     * Runs {@code what} with the turn shared, from the turn held alone (and holds it alone again
     * after): writes run beside it, and it leaves a failed member out with the turn alone ({@link
     * #alone}).
     */
    private void shared(Exclusive what) throws IOException {
        turns.readLock().lock();
        turns.writeLock().unlock();
        try {
            what.run();
        } finally {
            turns.readLock().unlock();
            turns.writeLock().lock();
        }
    }

    /**
     * The batch of new stripes {@code [first, first + n)} is being moved: writes to its array bytes
     * wait. Widened to whole old stripes: a degraded batch rebuilds a chunk from the rest of its old
     * stripe, which a write beside the window must not be half-way through. Under the turn alone.
     */
    private void openWindow(long first, int n) {
        long newBytes = newLayout.stripeDataBytes();
        long oldBytes = oldLayout.stripeDataBytes();
        windowLo = first * newBytes / oldBytes * oldBytes;
        windowHi = ((first + n) * newBytes + oldBytes - 1) / oldBytes * oldBytes;
    }

    private void closeWindow() {
        synchronized (window) {
            windowLo = 0;
            windowHi = 0;
            window.notifyAll();
        }
    }

    /** Whether {@code len} bytes at array byte {@code offset} meet the batch being moved. */
    private boolean inWindow(long offset, long len) {
        return offset < windowHi && offset + len > windowLo;
    }

    /** A write that meets the batch being moved waits for its end without holding its turn. */
    private void awaitWindow(long offset, long len) throws InterruptedIOException {
        turns.readLock().unlock();
        try {
            synchronized (window) {
                while (inWindow(offset, len)) {
                    window.wait();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(name + ": interrupted while a write waited for the reshape's batch");
        } finally {
            turns.readLock().lock();
        }
    }

    /** Stripes per batch under the speed limit: about a quarter second's worth, at least one row. */
    private static int pacedBatch(int batch, int chunk, int row, long limit) {
        return limit == Long.MAX_VALUE ? batch : (int) Math.max(row, Math.min(batch, limit / 4 / chunk / row * row));
    }

    /**
     * New stripes per row of the larger chunk: md's reshape moves, and records, whole rows of
     * {@code max(chunk, new_chunk)} member sectors (1 unless the chunk shrinks).
     */
    private int rowStripes() {
        return Math.max(1, oldLayout.chunkSize() / newLayout.chunkSize());
    }

    /** The larger of the two chunks, in bytes. */
    private static int maxChunk(Superblock sb) {
        return Math.max(sb.chunkSectors(), sb.newChunk()) * 512;
    }

    /**
     * Waits until {@code moved} bytes per member since {@code start} are within {@code limit} (md
     * sleeps likewise when a pass runs above its speed limit), in slices that let
     * {@code stop} end the wait.
     */
    private void pace(long start, long moved, long limit, BooleanSupplier stop) throws IOException {
        if (limit == Long.MAX_VALUE) {
            return;
        }
        long due = start + (long) (moved * 1e9 / limit);
        try {
            for (long wait = due - clock.nanoTime(); wait > 0 && !stop.getAsBoolean(); wait = due - clock.nanoTime()) {
                clock.sleep(Math.min(wait, 100_000_000L));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(name + ": reshape interrupted while paced to its speed limit");
        }
    }

    /**
     * md's safepos: how many member sectors of the new geometry a batch may cover from new stripe
     * {@code at} (forwards up from it, backwards down from it) without touching old data a resume from
     * the recorded position still reads: the old stripes holding the array below the recorded position
     * (backwards) or from it up (forwards), whole, as a degraded resume reads them, shifted by the
     * offset's move.
     */
    private long room(long at) {
        long oldChunkSectors = oldLayout.chunkSize() / 512;
        long oldStripeSectors = oldChunkSectors * oldLayout.dataDisks();
        long newStart = at * (newLayout.chunkSize() / 512);
        if (backwards) {
            long oldEnd = (recorded + oldStripeSectors - 1) / oldStripeSectors * oldChunkSectors;
            return newStart + offsetMove - oldEnd;
        }
        return recorded / oldStripeSectors * oldChunkSectors + offsetMove - newStart;
    }

    /**
     * One batch. Sent at once ({@link #submitsAtOnce}): every old chunk read, every parity computed,
     * then every new chunk written. On the lanes, stripe by stripe: its old data read into its
     * lane's one stripe of room, its parity computed there and the stripe written from it while it
     * is still in the CPU's cache, which spares memory members and page-cache files a pass of the
     * batch through main memory. Either order is safe because md's rule keeps a batch's writes a row
     * of the larger chunk below the recorded position ({@link #room}): none lands on old data the
     * batch still reads, and a batch whose write fails is read again, degraded, and written again.
     */
    private void moveBatch(long firstStripe, int n, ByteBuffer buf, Lanes lanes) throws IOException {
        if (!submitsAtOnce()) {
            streamBatch(firstStripe, n, buf, lanes);
            startWriteBack();
            return;
        }
        // a member failing is left out and the phase sent again without it (a second one stops the reshape)
        while (true) {
            try {
                readBatchAtOnce(firstStripe, n, buf);
                break;
            } catch (MemberFailed e) {
                alone(() -> leaveOut(e));
            }
        }
        int width = lanes.width(n);
        phase(lanes, n, k -> parity(k, laneScratch[k % width]));
        hook.at(Point.BATCH_READ, progress);
        // after a failed write the batch, whole in memory, is written again to the members left
        while (true) {
            try {
                writeBatchAtOnce(firstStripe, n, buf);
                return;
            } catch (MemberFailed e) {
                alone(() -> leaveOut(e));
            }
        }
    }

    /**
     * {@link #moveBatch} on the lanes: stripe {@code k} in room {@code k % width} of {@code buf}, one
     * per lane. The first stripe is read before the others start, so that the test hook's
     * {@link Point#BATCH_READ} comes before any of the batch is written.
     */
    private void streamBatch(long firstStripe, int n, ByteBuffer buf, Lanes lanes) throws IOException {
        int width = lanes.width(n);
        phase(lanes, 1, k -> readStripe(firstStripe, 0, buf));
        hook.at(Point.BATCH_READ, progress);
        // lane 0 takes stripe 0 first and finds it read; a phase run again (a member left out) reads it again
        AtomicBoolean firstRead = new AtomicBoolean(true);
        phase(lanes, n, k -> {
            if (k != 0 || !firstRead.getAndSet(false)) {
                readStripe(firstStripe + k, k % width, buf);
            }
            writeStripe(firstStripe + k, k % width, buf);
        });
    }

    /**
     * After a batch on members through the page cache, a flush of each is started and not waited
     * for: the kernel writes the batch back while the next batches move, and the checkpoint's own
     * flush ({@link #flushAll}, which waits for this one first) finds little left to write. At most
     * one is in flight. Its errors are kept for the checkpoint: Linux reports a write-back error to
     * one fsync of a descriptor only, so an error this flush took must fail the member there.
     */
    private void startWriteBack() {
        AtOnce previous = writeBack;
        if (previous != null) {
            if (!previous.ended()) {
                return;
            }
            writeBack = null;
            keepWriteBackFailure(previous);
        }
        boolean any = false;
        for (int s = 0; s < slots.length; s++) {
            any |= slots[s] != null && asyncSlots[s].bufferedByPageCache();
        }
        if (!any) {
            return;
        }
        AtOnce flushes = new AtOnce(slots.length);
        for (int s = 0; s < slots.length; s++) {
            if (slots[s] != null && asyncSlots[s].bufferedByPageCache()) {
                flushes.submitted(s, 0);
                asyncSlots[s].flushAsync(flushes, s);
            }
        }
        flushes.release();
        writeBack = flushes;
    }

    /** Waits for the flushes {@link #startWriteBack} started; throws the first member they failed, if still present. */
    private void awaitWriteBack() throws MemberFailed {
        AtOnce early = writeBack;
        if (early != null) {
            writeBack = null;
            early.awaitAll();
            keepWriteBackFailure(early);
        }
        MemberFailed failed = writeBackFailure;
        writeBackFailure = null;
        if (failed != null && slots[failed.slot] != null) {
            throw failed;
        }
    }

    private void keepWriteBackFailure(AtOnce ended) {
        try {
            ended.settle(null, 0, 0);
        } catch (MemberFailed e) {
            if (writeBackFailure == null) {
                writeBackFailure = e;
            }
        }
    }

    /**
     * Whether a batch's member I/O goes to the members all at once ({@link #readBatchAtOnce}): with
     * some member whose each I/O waits for a device or a link (NBD, files opened with O_DIRECT),
     * degraded or not (a missing member's old chunks are read from their rows' other members in the
     * same round). Memory members complete inline, and a file through the page cache is a copy that
     * the calling thread makes for less than a hand-off to the ring's workers costs (measured: a
     * grow on page-cache files ran about 0.8x as fast with its I/O submitted at once); those take the
     * lanes.
     */
    private boolean submitsAtOnce() {
        for (int s = 0; s < slots.length; s++) {
            if (slots[s] != null && !asyncSlots[s].completesInline() && !asyncSlots[s].bufferedByPageCache()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Every old chunk a batch reads, submitted to the members at once (a deep queue on each, as md
     * reads a whole window), and waited for together; the first member that failed is thrown once
     * every read has ended.
     */
    private void readBatchAtOnce(long firstStripe, int n, ByteBuffer buf) throws IOException {
        int chunk = newLayout.chunkSize();
        int newData = newLayout.dataDisks();
        if (missing >= 0) {
            roomViews.reset(sentRebuilds(n * newData * (long) chunk).clear().room);
        }
        batchViews.reset(buf);
        AtOnce reads = new AtOnce(slots.length);
        try {
            for (int k = 0; k < n; k++) {
                readOld(
                        (firstStripe + k) * newData * (long) chunk,
                        buf,
                        k * (newData + 1) * chunk,
                        newData * chunk,
                        k,
                        reads);
            }
        } finally {
            reads.awaitAll();
        }
        reads.settle(memberStats, IoStats.READS, IoStats.READ_BYTES);
        if (missing >= 0) {
            sentRebuilds.finish(buf);
        }
    }

    /**
     * The room for the missing member's old chunks in a batch of {@code arrayBytes} sent at once:
     * every old row the batch meets holds at most one chunk of it, rebuilt from the row's others.
     */
    private SentRebuilds sentRebuilds(long arrayBytes) {
        long oldStripeBytes = (long) oldLayout.chunkSize() * oldLayout.dataDisks();
        long rows = arrayBytes / oldStripeBytes + 2;
        long room = rows * oldLayout.chunkSize() * (oldLayout.disks() - 1);
        if (sentRebuilds == null || sentRebuilds.room.capacity() < room) {
            if (room > Integer.MAX_VALUE) {
                throw new IllegalStateException(name + ": a degraded batch needs " + room + " bytes of room");
            }
            sentRebuilds = new SentRebuilds(AlignedBuffers.allocate((int) room));
        }
        return sentRebuilds;
    }

    /**
     * Bytes {@code [within, within+len)} of the missing member's old chunk of {@code oldStripe}, for
     * {@code at} in the batch: the same bytes of the row's other chunks sent to their members with
     * {@code sent}, XORed into place by {@link SentRebuilds#finish} once every read is in.
     */
    private void sendRebuild(long oldStripe, int within, int at, int len, AtOnce sent) {
        SentRebuilds r = sentRebuilds;
        long offset = oldLayout.memberOffset(oldStripe) + within;
        int roomAt = r.reserve(at, len, oldLayout.disks() - 1);
        for (int s = 0, i = 0; s < oldLayout.disks(); s++) {
            if (s != missing) {
                sent.submitted(s, len);
                asyncSlots[s].readAsync(oldOffset[s] + offset, roomViews.next(), roomAt + i * len, len, sent, s);
                i++;
            }
        }
    }

    /** The missing member's pieces of a batch sent at once: where each goes, and its sources in {@link #room}. */
    private static final class SentRebuilds {
        final ByteBuffer room;
        private int used;
        /** Four ints per piece: where it goes in the batch, its length, where its sources start in room, how many. */
        private int[] pieces = new int[4 * 64];

        private int count;
        private ByteBuffer[] from = new ByteBuffer[0];
        private int[] offsets = new int[0];

        SentRebuilds(ByteBuffer room) {
            this.room = room;
        }

        SentRebuilds clear() {
            used = 0;
            count = 0;
            return this;
        }

        int reserve(int at, int len, int sources) {
            int roomAt = used;
            used += len * sources;
            if (4 * count == pieces.length) {
                pieces = Arrays.copyOf(pieces, 2 * pieces.length);
            }
            int p = 4 * count++;
            pieces[p] = at;
            pieces[p + 1] = len;
            pieces[p + 2] = roomAt;
            pieces[p + 3] = sources;
            return roomAt;
        }

        /** Each piece, the XOR of its sources, into {@code batch}. */
        void finish(ByteBuffer batch) {
            for (int p = 0; p < 4 * count; p += 4) {
                int len = pieces[p + 1];
                int sources = pieces[p + 3];
                if (from.length < sources) {
                    from = new ByteBuffer[sources];
                    offsets = new int[sources];
                }
                for (int i = 0; i < sources; i++) {
                    from[i] = room;
                    offsets[i] = pieces[p + 2] + i * len;
                }
                Xor.parity(batch, pieces[p], from, offsets, sources, len);
            }
        }
    }

    /**
     * Every chunk of a batch's new stripes, data and parity, submitted to the members at once and
     * waited for together. The test hook hears each write as it is submitted; a crash it injects
     * waits for the writes already submitted, so the members hold exactly those.
     */
    private void writeBatchAtOnce(long firstStripe, int n, ByteBuffer buf) throws IOException {
        int chunk = newLayout.chunkSize();
        int newData = newLayout.dataDisks();
        batchViews.reset(buf);
        AtOnce writes = new AtOnce(slots.length);
        try {
            for (int k = 0; k < n; k++) {
                long stripe = firstStripe + k;
                int base = k * (newData + 1) * chunk;
                long at = newLayout.memberOffset(stripe);
                for (int i = 0; i <= newData; i++) {
                    int slot = i < newData ? newLayout.dataSlot(stripe, i) : newLayout.paritySlot(stripe);
                    if (slot == missing) {
                        continue;
                    }
                    writes.submitted(slot, chunk);
                    asyncSlots[slot].writeAsync(
                            newOffset[slot] + at, batchViews.next(), base + i * chunk, chunk, writes, slot);
                    hook.at(Point.MEMBER_WRITTEN, progress);
                }
            }
        } finally {
            writes.awaitAll();
        }
        writes.settle(memberStats, IoStats.WRITES, IoStats.WRITE_BYTES);
    }

    /** The parity of the batch's {@code k}-th new stripe, from its data read into the run's batch buffer. */
    private void parity(int k, LaneScratch lane) {
        ByteBuffer buf = lane.view();
        int chunk = newLayout.chunkSize();
        int newData = newLayout.dataDisks();
        int base = k * (newData + 1) * chunk;
        ByteBuffer[] sources = lane.sources;
        int[] at = lane.at;
        for (int i = 0; i < newData; i++) {
            sources[i] = buf;
            at[i] = base + i * chunk;
        }
        Xor.parity(buf, base + newData * chunk, sources, at, newData, chunk);
    }

    /**
     * The member I/Os of one phase submitted at once: counts them in, hears them end (on any
     * thread), and lets the submitter wait for the last. Keeps each slot's first error, and its
     * I/Os and bytes for the live counters.
     */
    private static final class AtOnce implements IoCallback {
        private final AtomicInteger pending = new AtomicInteger(1); // 1: the submitter's own, until awaitAll
        // set before the waiter's own count is given up: the I/O that ends last sees it
        private volatile Thread waiter;
        private boolean released;
        private final IOException[] errors;
        private final int[] ops;
        private final long[] bytes;

        AtOnce(int slots) {
            errors = new IOException[slots];
            ops = new int[slots];
            bytes = new long[slots];
        }

        void submitted(int slot, int len) {
            pending.incrementAndGet();
            ops[slot]++;
            bytes[slot] += len;
        }

        @Override
        public void ioDone(int slot, IOException error) {
            if (error != null) {
                synchronized (errors) {
                    if (errors[slot] == null) {
                        errors[slot] = error;
                    }
                }
            }
            if (pending.decrementAndGet() == 0) {
                Thread w = waiter;
                if (w != null) {
                    LockSupport.unpark(w);
                }
            }
        }

        /** Gives up the submitter's own count without waiting: {@link #ended} may now become true. */
        void release() {
            if (!released) {
                released = true;
                pending.decrementAndGet();
            }
        }

        /** Whether every I/O submitted has ended, once {@link #release}d. */
        boolean ended() {
            return pending.get() == 0;
        }

        /** Waits for every I/O submitted, also when interrupted (their buffers are the batch's; the interrupt is kept). */
        void awaitAll() {
            boolean interrupted = false;
            waiter = Thread.currentThread();
            boolean last = released ? pending.get() == 0 : pending.decrementAndGet() == 0;
            released = true;
            if (!last) {
                while (pending.get() != 0) {
                    LockSupport.park(this);
                    interrupted |= Thread.interrupted();
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        /** Counts the slots' I/O, and throws the first slot that failed. */
        void settle(ThreadStats[] counted, int opsStat, int bytesStat) throws MemberFailed {
            synchronized (errors) {
                for (int s = 0; s < errors.length; s++) {
                    if (errors[s] != null) {
                        countFailure(counted, s);
                        throw new MemberFailed(s, errors[s]);
                    }
                }
            }
            if (counted != null) {
                for (int s = 0; s < ops.length; s++) {
                    if (ops[s] > 0) {
                        long[] own = counted[s].mine();
                        ThreadStats.add(own, opsStat, ops[s]);
                        ThreadStats.add(own, bytesStat, bytes[s]);
                    }
                }
            }
        }
    }

    /** One phase of a batch; when a member fails, it is left out and the phase runs again without it. */
    private void phase(Lanes lanes, int n, StripeTask task) throws IOException {
        while (true) {
            try {
                lanes.each(n, task);
                return;
            } catch (MemberFailed e) {
                // a write beside the batch may have left the same member out first; another one
                // already missing makes memberFailed throw: RAID-5 cannot lose two
                alone(() -> leaveOut(e));
            }
        }
    }

    /** {@link #memberFailed}, unless another thread left that member out first. With the turn alone. */
    private void leaveOut(MemberFailed e) throws IOException {
        if (slots[e.slot] != null) {
            memberFailed(e);
        }
    }

    /**
     * md's error handler during a reshape: the first member to fail is marked faulty in the other
     * members' superblocks (its role becomes {@link Superblock#ROLE_FAULTY}, the events move on, the
     * recorded position stays), and the reshape goes on degraded. A second failure stops it: RAID-5
     * cannot lose two members.
     */
    private void memberFailed(MemberFailed e) throws IOException {
        if (missing >= 0) {
            throw new IOException(
                    name + ": " + slots[e.slot].name() + " failed while the member in slot " + missing
                            + " is already missing; the reshape stops at position " + recorded
                            + " (the data is intact up to there; a RAID-5 cannot lose two members)",
                    e.getCause());
        }
        int devNumber = superblocks[e.slot].devNumber();
        ensureScratch();
        mapping.writeLock().lock(); // a read maps by missing and slots
        try {
            missing = e.slot;
            failedName = slots[e.slot].name();
            slots[e.slot] = null;
            superblocks[e.slot] = null;
        } finally {
            mapping.writeLock().unlock();
        }
        for (MemberDisk d : slots) {
            if (d != null) {
                d.flush();
            }
        }
        events++;
        long now = MdTime.of(MdTime.nowSeconds(), 0);
        for (int s = 0; s < slots.length; s++) {
            if (slots[s] != null) {
                superblocks[s]
                        .devRole(devNumber, Superblock.ROLE_FAULTY)
                        .events(events)
                        .utime(now);
                write(slots[s], superblocks[s]);
            }
        }
    }

    private void ensureScratch() {
        if (degradedScratch == null) {
            degradedScratch = new ByteBuffer[LANES];
            for (int i = 0; i < LANES; i++) {
                degradedScratch[i] = newScratch();
            }
        }
    }

    private ByteBuffer newScratch() {
        return AlignedBuffers.allocate(Math.max(
                (oldLayout.disks() - 1) * oldLayout.chunkSize(), (newLayout.disks() - 1) * newLayout.chunkSize()));
    }

    /**
     * The member the reshape runs without (it failed during this run, or was recorded faulty before
     * it resumed), or null when every member takes part.
     */
    @Override
    public String missingMember() {
        return missing < 0 ? null : failedName != null ? failedName : "slot " + missing;
    }

    private void readStripe(long stripe, int k, ByteBuffer batch) throws IOException {
        LaneScratch lane = laneScratch[k];
        int chunk = newLayout.chunkSize();
        int newData = newLayout.dataDisks();
        int base = k * (newData + 1) * chunk;
        readOld(stripe * newData * (long) chunk, lane.view(), base, newData * chunk, k, null);
        parity(k, lane);
    }

    /**
     * {@code len} bytes of the array from byte {@code from}, as the old geometry holds them (zeros
     * past the old array's end, as md reads them), into {@code buf} at {@code at}: read here, or
     * with {@code sent} (every member present) sent to the members and counted in it, to be waited
     * for there.
     */
    private void readOld(long from, ByteBuffer buf, int at, int len, int k, AtOnce sent) throws IOException {
        int oldChunk = oldLayout.chunkSize();
        int oldData = oldLayout.dataDisks();
        long oldChunks = oldLayout.stripes() * oldData;
        for (int done = 0; done < len; ) {
            long p = from + done;
            long c = p / oldChunk;
            int within = (int) (p % oldChunk);
            int n = Math.min(len - done, oldChunk - within);
            if (c >= oldChunks) {
                for (int b = 0; b < n; b += 8) {
                    buf.putLong(at + done + b, 0);
                }
            } else {
                long oldStripe = c / oldData;
                int slot = oldLayout.dataSlot(oldStripe, (int) (c % oldData));
                long position = oldOffset[slot] + oldLayout.memberOffset(oldStripe) + within;
                if (slot == missing && sent != null) {
                    sendRebuild(oldStripe, within, at + done, n, sent);
                } else if (slot == missing) {
                    rebuildOld(oldStripe, within, buf, at + done, n, k);
                } else if (sent != null) {
                    sent.submitted(slot, n);
                    asyncSlots[slot].readAsync(position, batchViews.next(), at + done, n, sent, slot);
                } else {
                    read(slot, position, buf, at + done, n);
                }
            }
            done += n;
        }
    }

    /**
     * The array's size while the reshape is under way, in bytes: md's {@code raid5_size} over the
     * smaller member count (the old size until a grow ends; a shrink's new size, which the caller
     * set first).
     */
    @Override
    public long reshapingArrayBytes() {
        return Math.min(oldLayout.arrayBytes(), newLayout.arrayBytes());
    }

    /**
     * The array's size now, in bytes: {@link #reshapingArrayBytes} while the reshape is under way,
     * {@link #newArrayBytes} once it has ended (md grows the array when its reshape ends, as {@code
     * raid5_finish_reshape} sets the new size). What {@link #read}, {@link #write} and {@link #reader}
     * take.
     */
    public long arrayBytes() {
        return finished ? newLayout.arrayBytes() : reshapingArrayBytes();
    }

    /**
     * {@code len} bytes of the array from byte {@code offset} into {@code dst} at {@code at}, each
     * read in the geometry that holds it at the {@link #position}: the new one below it (forwards)
     * or from it up ({@link #backwards}), the old one elsewhere, as md's {@code make_request} maps
     * a read during a reshape. A chunk on a member recorded faulty is rebuilt from the rest of its
     * stripe in that stripe's geometry (md's rule keeps both sides whole at the recorded position).
     */
    public void read(long offset, ByteBuffer dst, int at, int len) throws IOException {
        long size = arrayBytes();
        if (offset < 0 || len < 0 || offset > size || len > size - offset) {
            throw new IllegalArgumentException(
                    len + " bytes at " + offset + " are not within " + name + "'s " + size + " bytes");
        }
        foregroundOps.increment();
        mapping.readLock().lock();
        boolean degraded = missing >= 0; // it changes under the mapping's write lock, and only once
        if (degraded) {
            mapping.readLock().unlock();
            turns.writeLock().lock(); // no write half-way through a stripe this read rebuilds from
            mapping.readLock().lock();
        }
        try {
            readMapped(offset, dst, at, len);
        } finally {
            mapping.readLock().unlock();
            if (degraded) {
                turns.writeLock().unlock();
            }
        }
    }

    /**
     * Why {@link #write} is refused on this reshape, or null when it is served: opened {@link
     * #readOnly}, or an internal write-intent bitmap (md sets its bits for a write during a
     * reshape; raidfive does not yet).
     */
    @Override
    public String whyNoWrites() {
        if (readOnly) {
            return name + "'s reshape was opened read-only";
        }
        if (hasBitmap) {
            return name + " has a write-intent bitmap: raidfive serves no writes during its reshape (finish the "
                    + "reshape first, or remove the bitmap before it)";
        }
        return null;
    }

    /**
     * Writes {@code len} bytes from {@code src} at {@code at} to the array at byte {@code offset},
     * each stripe in the geometry that holds it at the {@link #position} (md's mapping, as {@link
     * #read}), also while {@link #run} goes on: a write to the array bytes a batch is moving (widened
     * to whole old stripes) waits for the batch's end, as md holds a request to the window being
     * reshaped; a write elsewhere runs beside the batch. Within one chunk a stripe is written as md's read-modify-write writes it (old data
     * and old parity read, the parity updated); otherwise, or when that chunk's member is missing,
     * as its reconstruct-write (the stripe read as it stands, a missing member's chunk rebuilt, the
     * new bytes put over it, its parity computed from scratch), then the chunks written and the
     * parity. A write to the stripes moved since the last
     * checkpoint has the position recorded first: a resume would move them again from the old data
     * (md's make_request holds such a write until {@code reshape_safe} catches up). The first write of a run marks every
     * superblock dirty (md's {@code resync_offset} 0) before any data goes; {@link #markClean} marks
     * them clean again after the last. A member failing is recorded faulty as in the reshape, and
     * the write goes on degraded.
     */
    public void write(long offset, ByteBuffer src, int at, int len) throws IOException {
        String refused = whyNoWrites();
        if (refused != null) {
            throw new IOException(refused);
        }
        long size = arrayBytes();
        if (offset < 0 || len < 0 || offset > size || len > size - offset) {
            throw new IllegalArgumentException(
                    len + " bytes at " + offset + " are not within " + name + "'s " + size + " bytes");
        }
        foregroundOps.increment();
        turns.readLock().lock();
        try {
            while (true) {
                prepareWrite(offset, len);
                if (!inWindow(offset, len)) {
                    break; // and no batch starts until this write lets its turn go
                }
                awaitWindow(offset, len);
            }
            long boundary = progress * 512;
            for (int done = 0; done < len; ) {
                long p = offset + done;
                boolean below = p < boundary;
                int n = (int) ((below ? Math.min(offset + len, boundary) : offset + len) - p);
                writeIn(below != backwards, p, src, at + done, n);
                done += n;
            }
        } finally {
            turns.readLock().unlock();
        }
    }

    /** A write's dirty mark and checkpoint, when it needs them, with the turn alone. */
    private void prepareWrite(long offset, int len) throws IOException {
        if ((!dirtied && openedClean) || intoUnrecorded(offset, len)) {
            alone(() -> {
                if (!dirtied && openedClean) {
                    for (Superblock sb : superblocks) {
                        if (sb != null) {
                            sb.resyncOffset(0);
                        }
                    }
                    dirtied = true;
                    writeSuperblocks(Point.STATE_MEMBER, progress);
                }
                if (intoUnrecorded(offset, len)) {
                    // md's make_request holds such a write until reshape_safe has caught up: a
                    // resume from the recorded position would move this range again from the old
                    // data, over it
                    checkpoint();
                }
            });
        }
    }

    @FunctionalInterface
    private interface Exclusive {
        void run() throws IOException;
    }

    /** Runs {@code what} with {@link #turns} held alone, from a write that holds it shared (and holds it so again after). */
    private void alone(Exclusive what) throws IOException {
        turns.readLock().unlock();
        turns.writeLock().lock();
        try {
            what.run();
        } finally {
            turns.readLock().lock(); // before the write lock goes: no step between
            turns.writeLock().unlock();
        }
    }

    /**
     * Whether the members were dirty when this reshape was opened (written to mid-reshape and not
     * stopped cleanly): they stay so through its end, and the array's resync is due after it, as md
     * runs it.
     */
    @Override
    public boolean resyncDue() {
        return !openedClean;
    }

    /**
     * Whether {@code len} bytes at {@code offset} touch the array moved since the recorded position
     * (between it and the progress): new geometry that a resume would move again.
     */
    private boolean intoUnrecorded(long offset, long len) {
        long lo = Math.min(recorded, progress) * 512;
        long hi = Math.max(recorded, progress) * 512;
        return offset < hi && offset + len > lo;
    }

    /** The position the members' superblocks record (md's reshape_safe); tests see the window after it. */
    long recordedPosition() {
        return recorded;
    }

    /** Every member flushed (a member failing is recorded faulty, as in the reshape). */
    public void flush() throws IOException {
        turns.writeLock().lock();
        try {
            try {
                awaitWriteBack(); // an error it took is this flush's too
            } catch (MemberFailed e) {
                memberFailed(e);
            }
            for (int s = 0; s < slots.length; s++) {
                if (slots[s] != null) {
                    try {
                        flushMember(s);
                    } catch (MemberFailed e) {
                        memberFailed(e);
                    }
                }
            }
        } finally {
            turns.writeLock().unlock();
        }
    }

    /**
     * After the last {@link #write} (and with {@link #run} stopped or done): every member flushed,
     * then every superblock marked clean again, as md marks an array clean when it stops. Only what
     * this run marked dirty is marked clean: a reshape resumed dirty after a crash stays dirty, for
     * the resync after it.
     */
    public void markClean() throws IOException {
        turns.writeLock().lock();
        try {
            if (!dirtied) {
                return;
            }
            for (Superblock sb : superblocks) {
                if (sb != null) {
                    sb.resyncOffset(Superblock.RESYNC_CLEAN);
                }
            }
            writeSuperblocks(Point.STATE_MEMBER, progress);
            dirtied = false;
        } finally {
            turns.writeLock().unlock();
        }
    }

    /** {@code len} bytes from {@code src} at array byte {@code from}, all in one geometry, stripe by stripe. */
    private void writeIn(boolean inNew, long from, ByteBuffer src, int at, int len) throws IOException {
        long stripeBytes = (inNew ? newLayout : oldLayout).stripeDataBytes();
        for (int done = 0; done < len; ) {
            long p = from + done;
            int within = (int) (p % stripeBytes);
            int n = (int) Math.min(len - done, stripeBytes - within);
            long stripe = p / stripeBytes;
            while (true) {
                try {
                    synchronized (stripeLocks[(int) ((stripe << 1 | (inNew ? 1 : 0)) & (stripeLocks.length - 1))]) {
                        writeClientStripe(inNew, stripe, within, src, at + done, n);
                    }
                    break;
                } catch (MemberFailed e) {
                    alone(() -> leaveOut(e)); // throws if another member is missing: RAID-5 cannot lose two
                }
            }
            done += n;
        }
    }

    /**
     * {@code len} bytes at byte {@code within} of {@code stripe}'s data: md's read-modify-write when
     * they lie in one chunk and its member and the parity's are there, else its reconstruct-write.
     */
    private void writeClientStripe(boolean inNew, long stripe, int within, ByteBuffer src, int at, int len)
            throws IOException {
        Raid5Layout layout = inNew ? newLayout : oldLayout;
        long[] offsets = inNew ? newOffset : oldOffset;
        int chunk = layout.chunkSize();
        int data = layout.dataDisks();
        ClientScratch scratch = clientScratch.get();
        ByteBuffer buf = scratch.stripe; // this thread's own: no other call uses it meanwhile
        ByteBuffer[] sources = scratch.sources;
        int[] from = scratch.from;
        long memberAt = layout.memberOffset(stripe);
        int first = within / chunk;
        int parity = layout.paritySlot(stripe);
        int dataSlot = layout.dataSlot(stripe, first);
        if ((within + len - 1) / chunk == first && dataSlot != missing && parity != missing) {
            // md's read-modify-write, for a write within one chunk: new parity = old parity ^ old data ^ new data
            long at0 = memberAt + within - (long) first * chunk;
            read(dataSlot, offsets[dataSlot] + at0, buf, 0, len);
            read(parity, offsets[parity] + at0, buf, len, len);
            sources[0] = buf;
            sources[1] = buf;
            sources[2] = src;
            from[0] = 0;
            from[1] = len;
            from[2] = at;
            Xor.parity(buf, 2 * len, sources, from, 3, len);
            sources[2] = null; // the caller's buffer is not kept
            write(dataSlot, offsets[dataSlot] + at0, src, at, len);
            write(parity, offsets[parity] + at0, buf, 2 * len, len);
            return;
        }
        long start = stripe * layout.stripeDataBytes();
        if (inNew) {
            readNew(start, buf, 0, data * chunk);
        } else {
            readOld(start, buf, 0, data * chunk, READER, null);
        }
        buf.put(within, src, at, len);
        for (int i = 0; i < data; i++) {
            sources[i] = buf;
            from[i] = i * chunk;
        }
        Xor.parity(buf, data * chunk, sources, from, data, chunk);
        int last = (within + len - 1) / chunk;
        for (int i = first; i <= last; i++) {
            int slot = layout.dataSlot(stripe, i);
            int lo = Math.max(within, i * chunk);
            int hi = Math.min(within + len, (i + 1) * chunk);
            if (slot != missing) { // a missing member's bytes are in the parity
                write(slot, offsets[slot] + memberAt + lo - (long) i * chunk, buf, lo, hi - lo);
            }
        }
        // the parity changes only where the data did: one chunk's range, or every byte of the chunk
        int pLo = first == last ? within - first * chunk : 0;
        int pHi = first == last ? within + len - first * chunk : chunk;
        if (parity != missing) {
            write(parity, offsets[parity] + memberAt + pLo, buf, data * chunk + pLo, pHi - pLo);
        }
    }

    private void readMapped(long offset, ByteBuffer dst, int at, int len) throws IOException {
        long boundary = progress * 512;
        ByteBuffer buf = dst; // the caller's, used by this call alone (MemberDisk's contract)
        for (int done = 0; done < len; ) {
            long p = offset + done;
            boolean below = p < boundary;
            boolean inNew = below != backwards;
            int n = (int) ((below ? Math.min(offset + len, boundary) : offset + len) - p);
            try {
                if (inNew) {
                    readNew(p, buf, at + done, n);
                } else {
                    readOld(p, buf, at + done, n, READER, null);
                }
            } catch (MemberFailed e) {
                throw (IOException) e.getCause();
            }
            done += n;
        }
    }

    /**
     * The array as a {@link MemberDisk} of {@link #arrayBytes} bytes (the new size once the reshape has
     * ended), read through {@link
     * #read} and written through {@link #write} (refused as {@link #whyNoWrites} says), also while
     * {@link #run} moves stripes on another thread: what {@code raid serve} exports mid-reshape.
     * Closing it leaves this reshape open.
     */
    public MemberDisk reader() {
        return new Reader();
    }

    private final class Reader implements MemberDisk {
        @Override
        public long size() {
            return arrayBytes();
        }

        @Override
        public void read(long position, ByteBuffer dst, int dstOffset, int length) throws IOException {
            OfflineReshape.this.read(position, dst, dstOffset, length);
        }

        @Override
        public void write(long position, ByteBuffer src, int srcOffset, int length) throws IOException {
            OfflineReshape.this.write(position, src, srcOffset, length);
        }

        @Override
        public void flush() throws IOException {
            if (whyNoWrites() == null) {
                OfflineReshape.this.flush();
            }
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void close() {
            // the reshape's members stay open: the reshape's owner closes them
        }
    }

    /** {@link #readOld} in the new geometry, from byte {@code from} of the array (below its end). */
    private void readNew(long from, ByteBuffer buf, int at, int len) throws IOException {
        int chunk = newLayout.chunkSize();
        int data = newLayout.dataDisks();
        for (int done = 0; done < len; ) {
            long p = from + done;
            long c = p / chunk;
            int within = (int) (p % chunk);
            int n = Math.min(len - done, chunk - within);
            long stripe = c / data;
            int slot = newLayout.dataSlot(stripe, (int) (c % data));
            if (slot == missing) {
                rebuild(true, newLayout.memberOffset(stripe) + within, buf, at + done, n, READER);
            } else {
                read(slot, newOffset[slot] + newLayout.memberOffset(stripe) + within, buf, at + done, n);
            }
            done += n;
        }
    }

    private void writeStripe(long stripe, int k, ByteBuffer batch) throws IOException {
        ByteBuffer buf = laneScratch[k].view();
        int chunk = newLayout.chunkSize();
        int newData = newLayout.dataDisks();
        int base = k * (newData + 1) * chunk;
        long at = newLayout.memberOffset(stripe);
        for (int i = 0; i <= newData; i++) {
            int slot = i < newData ? newLayout.dataSlot(stripe, i) : newLayout.paritySlot(stripe);
            if (slot != missing) {
                write(slot, newOffset[slot] + at, buf, base + i * chunk, chunk);
                hook.at(Point.MEMBER_WRITTEN, progress);
            }
        }
    }

    /**
     * Bytes {@code [within, within+len)} of the old geometry's chunk of {@code oldStripe} on the
     * missing slot, into {@code buf} at {@code at}: the XOR of the same bytes of the stripe's
     * other chunks, data and parity. md's rule keeps a whole old stripe in place while any of its
     * data is still to be moved (writes stay a row of the larger chunk below the recorded position),
     * so the others are intact.
     */
    private void rebuildOld(long oldStripe, int within, ByteBuffer buf, int at, int len, int k) throws IOException {
        rebuild(false, oldLayout.memberOffset(oldStripe) + within, buf, at, len, k);
    }

    /**
     * {@link #rebuildOld} in either geometry: {@code len} bytes at {@code offset} into the data area
     * of the missing slot in the new geometry ({@code inNew}) or the old.
     */
    private void rebuild(boolean inNew, long offset, ByteBuffer buf, int at, int len, int k) throws IOException {
        Raid5Layout layout = inNew ? newLayout : oldLayout;
        long[] offsets = inNew ? newOffset : oldOffset;
        int others = layout.disks() - 1;
        ByteBuffer scratch;
        ByteBuffer[] sources;
        int[] from;
        if (k == READER) {
            LaneScratch reader = readerScratch.get();
            scratch = reader.view();
            sources = reader.sources;
            from = reader.at;
        } else {
            // a lane's: used between its stripe's reads and the parity, never beside them
            LaneScratch lane = laneScratch[k % LANES];
            scratch = lane.degradedView(degradedScratch[k % LANES]);
            sources = lane.sources;
            from = lane.at;
        }
        for (int s = 0, i = 0; s < layout.disks(); s++) {
            if (s != missing) {
                read(s, offsets[s] + offset, scratch, i * len, len);
                sources[i] = scratch;
                from[i] = i * len;
                i++;
            }
        }
        Xor.parity(buf, at, sources, from, others, len);
    }

    /** A member's I/O failed: the reshape may go on without it (md's degraded reshape). */
    private static final class MemberFailed extends IOException {
        private static final long serialVersionUID = 1L;
        final int slot;

        MemberFailed(int slot, IOException cause) {
            super(cause.getMessage(), cause);
            this.slot = slot;
        }
    }

    private void read(int slot, long position, ByteBuffer buf, int at, int len) throws MemberFailed {
        ThreadStats[] counted = memberStats;
        try {
            slots[slot].read(position, buf, at, len);
        } catch (IOException e) {
            countFailure(counted, slot);
            throw new MemberFailed(slot, e);
        }
        count(counted, slot, IoStats.READS, IoStats.READ_BYTES, len);
    }

    private void write(int slot, long position, ByteBuffer buf, int at, int len) throws MemberFailed {
        ThreadStats[] counted = memberStats;
        try {
            slots[slot].write(position, buf, at, len);
        } catch (IOException e) {
            countFailure(counted, slot);
            throw new MemberFailed(slot, e);
        }
        count(counted, slot, IoStats.WRITES, IoStats.WRITE_BYTES, len);
    }

    private static void count(ThreadStats[] counted, int slot, int ops, int bytes, int len) {
        if (counted != null) {
            long[] own = counted[slot].mine();
            ThreadStats.add(own, ops, 1);
            ThreadStats.add(own, bytes, len);
        }
    }

    private static void countFailure(ThreadStats[] counted, int slot) {
        if (counted != null) {
            counted[slot].add(IoStats.ERRORS, 1);
        }
    }

    /**
     * From now on, counts each member's I/O of the reshape (its own and the I/O it serves) in {@code
     * perSlot[slot]} ({@link IoStats#MEMBER_WIDTH} wide), or stops counting (null). For {@link
     * ReshapeCounters}.
     */
    void countMemberIo(ThreadStats[] perSlot) {
        memberStats = perSlot;
    }

    /** Members in the new geometry (slots, the missing one included). */
    int slotCount() {
        return slots.length;
    }

    /** The name of the member in {@code slot}, the failed one's included; null for a slot never filled. */
    String slotName(int slot) {
        return slot == missing ? failedName : slots[slot] == null ? null : slots[slot].name();
    }

    /** Whether {@code slot}'s member is left out of the reshape (failed, or recorded faulty). */
    boolean slotMissing(int slot) {
        return slot == missing;
    }

    @FunctionalInterface
    private interface StripeTask {
        void run(int k) throws IOException;
    }

    /**
     * The stripes of a batch over a few threads (the caller is one): stripe {@code k} goes to lane
     * {@code k % lanes}. Every lane ends before {@link #each} returns, also when one fails; the first
     * failure is thrown.
     */
    private static final class Lanes implements AutoCloseable {
        private final int count;
        private final ExecutorService pool;

        Lanes(int count) {
            this.count = count;
            this.pool = count <= 1
                    ? null
                    : Executors.newFixedThreadPool(count - 1, r -> {
                        Thread t = new Thread(r, "reshape-lane");
                        t.setDaemon(true);
                        return t;
                    });
        }

        /** The lanes {@link #each} spreads {@code n} stripes over. */
        int width(int n) {
            return Math.min(count, n);
        }

        void each(int n, StripeTask task) throws IOException {
            int lanes = width(n);
            List<Future<?>> others = new ArrayList<>();
            for (int lane = 1; lane < lanes; lane++) {
                int first = lane;
                others.add(pool.submit(() -> {
                    for (int k = first; k < n; k += lanes) {
                        task.run(k);
                    }
                    return null;
                }));
            }
            IOException failure = null;
            try {
                for (int k = 0; k < n; k += lanes) {
                    task.run(k);
                }
            } catch (IOException e) {
                failure = e;
            }
            boolean interrupted = false;
            for (Future<?> f : others) {
                while (true) {
                    try {
                        f.get();
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true; // the lane's I/O is under way: wait for it all the same
                    } catch (ExecutionException e) {
                        if (failure == null) {
                            failure = e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
                        }
                        break;
                    }
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (failure != null) {
                throw failure;
            }
        }

        @Override
        public void close() {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
    }

    /** Flushes every member, then records the position reached in every superblock (md's checkpoint). */
    private void checkpoint() throws IOException {
        if (progress == recorded) {
            lastCheckpoint = System.nanoTime();
            return;
        }
        for (Superblock sb : superblocks) {
            if (sb != null) {
                sb.reshapePosition(progress);
            }
        }
        writeSuperblocks(Point.CHECKPOINT_MEMBER, progress);
        moveRecorded();
        lastCheckpoint = System.nanoTime();
    }

    /** The recorded position catches up with the progress, once the reads mapped before are done. */
    private void moveRecorded() {
        mapping.writeLock().lock();
        try {
            recorded = progress;
        } finally {
            mapping.writeLock().unlock();
        }
    }

    /** md_finish_reshape and super_1_sync after it: the new geometry is the geometry. */
    private void finish() throws IOException {
        for (Superblock sb : superblocks) {
            if (sb != null) {
                finalForm(sb); // once: it moves the data offset
            }
        }
        // A shrink's freed members become spares (raid5_finish_reshape takes them out of sync, and md
        // removes them from their slots); one recorded faulty stays faulty.
        for (int s = newLayout.disks(); s < slots.length; s++) {
            if (superblocks[s] != null) {
                int dev = superblocks[s].devNumber();
                for (Superblock sb : superblocks) {
                    if (sb != null) {
                        sb.devRole(dev, Superblock.ROLE_SPARE);
                    }
                }
            }
        }
        writeSuperblocks(Point.FINISH_MEMBER, endPosition);
        moveRecorded();
        finished = true;
    }

    /**
     * Flushes every member, then writes every member's superblock as it now is, with the next events
     * count, then flushes every member again. Each round goes to all members at once and waits for
     * them all (md_super_write on every member, then md_super_wait): a superblock is
     * written only once every member's data is durable, so whichever superblocks a crash leaves
     * written, the position they record is safe. A member failing on the way is recorded faulty on
     * the others ({@link #memberFailed}, which flushes them and writes these same superblocks), as
     * md fails a member whose superblock write fails.
     */
    private void writeSuperblocks(Point point, long at) throws IOException {
        try {
            flushAll();
            events++;
            long now = MdTime.of(MdTime.nowSeconds(), 0);
            AtOnce written = new AtOnce(slots.length);
            try {
                for (int s = 0; s < slots.length; s++) {
                    if (slots[s] != null) {
                        superblocks[s].events(events).utime(now);
                        if (hasBitmap) {
                            writeBitmapEvents(s); // a read-modify-write of the bitmap superblock's block
                        }
                        written.submitted(s, SuperblockIo.BLOCK);
                        asyncSlots[s].writeAsync(
                                Superblock.SUPERBLOCK_OFFSET,
                                SuperblockIo.encoded(superblocks[s]),
                                0,
                                SuperblockIo.BLOCK,
                                written,
                                s);
                        hook.at(point, at);
                    }
                }
            } finally {
                written.awaitAll(); // a crash the hook injects leaves exactly the superblocks sent before it
            }
            written.settle(null, 0, 0);
            flushAll();
        } catch (MemberFailed e) {
            if (turns.isWriteLockedByCurrentThread()) {
                memberFailed(e);
            } else {
                alone(() -> leaveOut(e)); // the reshape's checkpoint, with the turn shared
            }
        }
    }

    /**
     * Flushes every member at once and waits for them all; the first member whose flush failed is
     * thrown once every flush has ended.
     */
    private void flushAll() throws MemberFailed {
        awaitWriteBack();
        AtOnce flushed = new AtOnce(slots.length);
        try {
            for (int s = 0; s < slots.length; s++) {
                if (slots[s] != null) {
                    flushed.submitted(s, 0);
                    asyncSlots[s].flushAsync(flushed, s);
                }
            }
        } finally {
            flushed.awaitAll();
        }
        flushed.settle(null, 0, 0);
    }

    private void flushMember(int slot) throws MemberFailed {
        try {
            slots[slot].flush();
        } catch (IOException e) {
            throw new MemberFailed(slot, e);
        }
    }

    /**
     * The bitmap superblock's events brought to the superblock's, as md_update_sb has
     * md_bitmap_update_sb do: a write that fails is the member's failure, a refusal of the metadata
     * is not.
     */
    private void writeBitmapEvents(int slot) throws IOException {
        try {
            SuperblockIo.writeBitmapEvents(slots[slot], superblocks[slot], superblocks[slot].events());
        } catch (SuperblockException e) {
            throw new ArrayConfigException(e.getMessage(), e);
        } catch (IOException e) {
            throw new MemberFailed(slot, e);
        }
    }

    /**
     * What to do with a member the others moved on without: before a reshape, bring it back in sync;
     * mid-reshape (as md, which goes on degraded and whose {@code mdadm --assemble} leaves such a
     * member out) give the members without it, and rebuild onto a spare once the reshape is done.
     */
    private static String staleAdvice(boolean reshaping) {
        return reshaping
                ? "(leave it out: the reshape goes on degraded without it; add a spare once it is done)"
                : "(assemble the array and rebuild it first)";
    }

    /**
     * What md_finish_reshape leaves in a member's superblock: the new layout and chunk, the data
     * offset moved by new_offset and the data size grown by as much, no reshape fields.
     */
    static Superblock finalForm(Superblock sb) {
        long moved = -(long) sb.newOffset();
        return sb.dataOffset(sb.dataOffset() - moved)
                .dataSize(sb.dataSize() + moved)
                .layout(sb.newLayout())
                .chunkSectors(sb.newChunk())
                .newOffset(0)
                .deltaDisks(0)
                .reshapePosition(0)
                .setFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE, false)
                .setFeature(Superblock.MD_FEATURE_NEW_OFFSET, false)
                .setFeature(Superblock.MD_FEATURE_RESHAPE_BACKWARDS, false);
    }

    /** Gives the members back (their claims); the disks stay open, the caller's to close. */
    @Override
    public void close() {
        claims.forEach(DiskClaim::close);
    }

    // ---- checks

    /** {@link Raid5Layout#checkChunk}, refused as an array's configuration. */
    private static void checkChunk(int chunkBytes) throws ArrayConfigException {
        try {
            Raid5Layout.checkChunk(chunkBytes);
        } catch (IllegalArgumentException e) {
            throw new ArrayConfigException(e.getMessage());
        }
    }

    /** mdadm's rule for a new chunk: the component size is a whole number of them, refused in its words. */
    private static void checkDivides(String array, Superblock top, int newChunkSectors) throws ArrayConfigException {
        if (top.size() % newChunkSectors != 0) {
            throw new ArrayConfigException("New chunk size (" + newChunkSectors / 2 + "K) does not evenly divide "
                    + "device size (" + top.size() / 2 + "k) of " + array + " (mdadm's rule: shrink the array with "
                    + "--size " + (top.size() & -newChunkSectors) / 2 + "K first)");
        }
    }

    /** mdadm's {@code min_offset_change}: a whole number of old and of new stripes, per old data member. */
    static long minOffsetChange(long oldChunkSectors, long newChunkSectors, int oldData, int newData) {
        long a = oldChunkSectors * oldData;
        long b = newChunkSectors * newData;
        long lcm = a / gcd(a, b) * b;
        return lcm / oldData;
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /**
     * The first sector the data may start at on a v1.2 member: 36 KiB past the superblock, past the
     * bad block log and past the internal bitmap's {@code bitmapSectors} (the kernel's
     * {@code super_1_allow_new_offset}).
     */
    static long earliestDataSector(Superblock sb, long bitmapSectors) {
        long earliest = sb.superOffset() + (32 + 4) * 2;
        if (sb.bblogOffset() != 0 && sb.bblogSize() > 0) {
            earliest = Math.max(earliest, sb.superOffset() + sb.bblogOffset() + sb.bblogSize());
        }
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            earliest = Math.max(earliest, sb.superOffset() + sb.bitmapOffset() + bitmapSectors);
        }
        return earliest;
    }

    /** Bytes of the internal bitmap's area on {@code disk} (its superblock and bits, 4 KiB-rounded), or 0. */
    private static long bitmapBytes(MemberDisk disk, Superblock sb) throws IOException {
        if (!sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            return 0;
        }
        try {
            return SuperblockIo.readBitmap(disk, sb).areaBytes(4096);
        } catch (SuperblockException e) {
            throw new ArrayConfigException(e.getMessage(), e);
        }
    }

    /** A superblock write and its flush, with the bitmap's events brought along as md_update_sb does. */
    private static void write(MemberDisk disk, Superblock sb) throws IOException {
        if (sb.hasFeature(Superblock.MD_FEATURE_BITMAP_OFFSET)) {
            try {
                SuperblockIo.writeBitmapEvents(disk, sb, sb.events());
            } catch (SuperblockException e) {
                throw new ArrayConfigException(e.getMessage(), e);
            }
        }
        SuperblockIo.writeSuperblock(disk, sb);
    }

    /**
     * The superblocks of {@code members}, in their order, after claiming them all. The freshest
     * (most events) speaks for the array: its geometry, position and roles are put in every copy, each
     * member keeping its own identity and offsets. A crash mid-checkpoint leaves members one event
     * apart with two positions, both safe to resume from; a member further behind, or one the freshest
     * does not list in the slot it claims, is not part of the array any more and is refused.
     */
    /** What {@link #readAll} found: the superblocks in member order, the array's name, the members whose end it writes. */
    private record Found(Superblock[] sbs, String array, List<Integer> finishing) {}

    private static Found readAll(List<? extends MemberDisk> members, List<DiskClaim> claims, ClaimMode mode)
            throws IOException {
        List<Integer> finishing = new ArrayList<>();
        if (members.size() < Raid5Layout.MIN_DISKS) {
            throw new ArrayConfigException("a reshape needs every member of the array (got " + members.size() + ")");
        }
        Superblock[] sbs = new Superblock[members.size()];
        for (int i = 0; i < sbs.length; i++) {
            try {
                sbs[i] = SuperblockIo.read(members.get(i));
            } catch (SuperblockException e) {
                throw new ArrayConfigException(e.getMessage(), e);
            }
        }
        int freshest = 0;
        for (int i = 0; i < sbs.length; i++) {
            if (!Arrays.equals(sbs[i].setUuid(), sbs[0].setUuid())) {
                throw new ArrayConfigException(members.get(i).name() + " belongs to another array than "
                        + members.get(0).name());
            }
            if (sbs[i].level() != Superblock.LEVEL_RAID5) {
                throw new ArrayConfigException(members.get(i).name() + " is not a RAID-5 member");
            }
            if (Long.compareUnsigned(sbs[i].events(), sbs[freshest].events()) > 0) {
                freshest = i;
            }
        }
        Superblock top = sbs[freshest].copy();
        String holder = ArrayMetadata.holder(top.name(), top.setUuid());
        boolean reshaping = top.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE);
        for (int i = 0; i < sbs.length; i++) {
            Superblock sb = sbs[i];
            String who = members.get(i).name();
            long behind = top.events() - sb.events();
            if (!reshaping && behind == 1 && sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE)) {
                // A crash while the end was written: the newest says done, so every stripe was written
                // and flushed in the new geometry before it; this one still has the last checkpoint.
                sbs[i] = finalForm(sb).events(top.events());
                for (int d = 0; d < top.maxDev(); d++) {
                    sbs[i].devRole(d, top.devRole(d)); // a shrink's freed member is a spare now
                }
                sb = sbs[i];
                finishing.add(i);
            } else if (behind > (reshaping ? 1 : 0)) {
                throw new ArrayConfigException(who + " is " + behind + " events behind the other members of " + holder
                        + ": it is not in sync with them " + staleAdvice(reshaping));
            }
            if (top.devRole(sb.devNumber()) != sb.role()) {
                boolean failed = top.devRole(sb.devNumber()) == Superblock.ROLE_FAULTY;
                throw new ArrayConfigException(who + " says it is " + Superblock.describeRole(sb.role()) + " of "
                        + holder + ", but the newest superblock says "
                        + Superblock.describeRole(top.devRole(sb.devNumber()))
                        + (reshaping && failed ? " " + staleAdvice(true) : ""));
            }
        }
        for (MemberDisk d : members) {
            claims.add(d.claim(mode, holder));
        }
        for (Superblock sb : sbs) {
            int own = sb.featureMap() & Superblock.MD_FEATURE_BAD_BLOCKS;
            sb.raidDisks(top.raidDisks())
                    .deltaDisks(top.deltaDisks())
                    .layout(top.layout())
                    .newLayout(top.newLayout())
                    .chunkSectors(top.chunkSectors())
                    .newChunk(top.newChunk())
                    .newLevel(top.newLevel())
                    .size(top.size())
                    .reshapePosition(top.reshapePosition())
                    .featureMap((top.featureMap() & ~Superblock.MD_FEATURE_BAD_BLOCKS) | own)
                    .maxDev(top.maxDev());
            for (int d = 0; d < top.maxDev(); d++) {
                sb.devRole(d, top.devRole(d));
            }
        }
        return new Found(sbs, holder, finishing);
    }

    /**
     * {@link #readAll} for a reshape that starts: not one already under way, every member present,
     * each passing {@link #checkStartable}.
     */
    private static Found readStartable(List<? extends MemberDisk> members, List<DiskClaim> claims) throws IOException {
        Found found = readAll(members, claims, ClaimMode.EXCLUSIVE);
        Superblock top = found.sbs[0];
        if (top.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE) || !found.finishing.isEmpty()) {
            throw new ArrayConfigException(found.array + " is already reshaping (reshape_position "
                    + top.reshapePosition() + "): continue it (raid grow --continue)");
        }
        checkStartable(found.array, members, found.sbs);
        if (members.size() != top.raidDisks()) {
            throw new ArrayConfigException(found.array + " has " + top.raidDisks() + " members and " + members.size()
                    + " were given: raidfive starts a reshape only on whole arrays, every member present");
        }
        return found;
    }

    /**
     * {@link #checkStartable}, but a reshape that was written to mid-way and not stopped cleanly is
     * continued, as md continues it (it reads data, not parity, and recomputes every stripe it moves;
     * the array stays dirty for the resync after it), unless a member is missing too: then a stripe
     * written at the crash may rebuild wrong (the write hole), and md does not start it either.
     */
    private static void checkResumable(
            String array, List<? extends MemberDisk> members, Superblock[] sbs, MemberDisk[] slots)
            throws ArrayConfigException {
        boolean dirty = !Arrays.stream(sbs).allMatch(Superblock::isClean);
        if (dirty && Arrays.asList(slots).contains(null)) {
            throw new ArrayConfigException(array + " was not stopped cleanly and a member is missing: a stripe "
                    + "written at the crash may rebuild wrong (the RAID-5 write hole); continue it with Linux md "
                    + "(mdadm --assemble --force)");
        }
        Superblock[] clean = new Superblock[sbs.length];
        for (int i = 0; i < sbs.length; i++) {
            clean[i] = dirty ? sbs[i].copy().resyncOffset(Superblock.RESYNC_CLEAN) : sbs[i];
        }
        checkStartable(array, members, clean);
    }

    private static void checkStartable(String array, List<? extends MemberDisk> members, Superblock[] sbs)
            throws ArrayConfigException {
        for (int i = 0; i < sbs.length; i++) {
            Superblock sb = sbs[i];
            String who = members.get(i).name();
            String refusal = sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE) ? null : MdFeatures.refusal(sb, who);
            if (refusal != null) {
                throw new ArrayConfigException(refusal);
            }
            if (sb.hasFeature(Superblock.MD_FEATURE_PPL) || sb.hasFeature(Superblock.MD_FEATURE_MULTIPLE_PPLS)) {
                throw new ArrayConfigException(array + " has a partial parity log, which md refuses to reshape with: "
                        + "switch to resync first (raid grow --consistency-policy resync)");
            }
            if (sb.hasFeature(Superblock.MD_FEATURE_RECOVERY_OFFSET)
                    || sb.hasFeature(Superblock.MD_FEATURE_REPLACEMENT)) {
                throw new ArrayConfigException(who + " is being rebuilt: finish the rebuild first (raid rebuild)");
            }
            if (sb.hasFeature(Superblock.MD_FEATURE_BAD_BLOCKS)) {
                throw new ArrayConfigException(who + " has bad blocks recorded: replace it before a reshape");
            }
            if (!sb.isClean()) {
                throw new ArrayConfigException(
                        array + " was not stopped cleanly: let its resync finish first " + "(raid rebuild)");
            }
            if (sb.role() >= Superblock.ROLE_MAX) {
                throw new ArrayConfigException(who + " is a " + Superblock.describeRole(sb.role()) + " of " + array
                        + ", not an active member");
            }
        }
    }
}
