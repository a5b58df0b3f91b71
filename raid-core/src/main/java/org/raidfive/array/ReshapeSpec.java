package org.raidfive.array;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;

/**
 * What {@link Raid5Array#reshape} changes, as {@code mdadm --grow} names it: members added
 * ({@code --raid-devices N --add}, with a new chunk size and/or layout or not), members removed
 * ({@code --array-size} then {@code --raid-devices N}), or the chunk size and/or layout ({@code
 * --chunk}, {@code --layout}); and the speed limits the
 * reshape runs at (md's {@code speed_limit_min}/{@code max}, per member). Immutable.
 */
public final class ReshapeSpec {
    private enum Kind {
        ADD,
        REMOVE,
        CHANGE
    }

    /** The shape asked for: the fields its kind uses. */
    private record Target(int newDisks, long arrayBytes, int chunkBytes, Raid5Algorithm layout) {}

    private final Kind kind;
    private final List<MemberDisk> added;
    private final Target target;
    private final SyncLimits limits;

    private ReshapeSpec(Kind kind, List<MemberDisk> added, Target target, SyncLimits limits) {
        this.kind = kind;
        this.added = added;
        this.target = target;
        this.limits = limits;
    }

    /**
     * The array gains {@code disks} as data members (blank disks at least as large as the members,
     * or spares of the array), its data restriped over them all.
     */
    public static ReshapeSpec addMembers(List<? extends MemberDisk> disks) {
        List<MemberDisk> copy = List.copyOf(disks);
        if (copy.isEmpty()) {
            throw new IllegalArgumentException("a reshape that adds members needs at least one disk to add");
        }
        return new ReshapeSpec(Kind.ADD, copy, new Target(0, 0, 0, null), SyncLimits.MD_DEFAULT);
    }

    /**
     * {@link #addMembers(List)} that also makes the chunk {@code chunkBytes} (0 keeps it) and the
     * layout {@code layout} (null keeps it) in the same reshape, as {@code mdadm --grow --raid-devices
     * N --chunk C --layout L} does.
     */
    public static ReshapeSpec addMembers(List<? extends MemberDisk> disks, int chunkBytes, Raid5Algorithm layout) {
        if (chunkBytes < 0) {
            throw new IllegalArgumentException("chunk size " + chunkBytes + " is negative");
        }
        ReshapeSpec adding = addMembers(disks);
        return new ReshapeSpec(Kind.ADD, adding.added, new Target(0, 0, chunkBytes, layout), SyncLimits.MD_DEFAULT);
    }

    /**
     * The array keeps {@code newDisks} members and {@code arrayBytes} bytes (at most what that many
     * members hold: the data past it is not kept), restriped from its end down; the members left
     * over become spares.
     */
    public static ReshapeSpec removeMembers(int newDisks, long arrayBytes) {
        if (arrayBytes < 0) {
            throw new IllegalArgumentException("array size " + arrayBytes + " is negative");
        }
        return new ReshapeSpec(
                Kind.REMOVE, List.of(), new Target(newDisks, arrayBytes, 0, null), SyncLimits.MD_DEFAULT);
    }

    /** The chunk becomes {@code chunkBytes} (0 keeps it) and the layout {@code layout} (null keeps it). */
    public static ReshapeSpec changeChunkAndLayout(int chunkBytes, Raid5Algorithm layout) {
        if (chunkBytes < 0) {
            throw new IllegalArgumentException("chunk size " + chunkBytes + " is negative");
        }
        return new ReshapeSpec(Kind.CHANGE, List.of(), new Target(0, 0, chunkBytes, layout), SyncLimits.MD_DEFAULT);
    }

    /** The same reshape at these speed limits (default: md's, {@link SyncLimits#MD_DEFAULT}). */
    public ReshapeSpec withSyncLimits(SyncLimits limits) {
        return new ReshapeSpec(kind, added, target, Objects.requireNonNull(limits, "limits"));
    }

    /** The disks this reshape adds as members (empty unless it adds members). */
    public List<MemberDisk> added() {
        return added;
    }

    /** The speed limits the reshape runs at. */
    public SyncLimits syncLimits() {
        return limits;
    }

    /** Starts this reshape on {@code members}, every member of the array (see {@link OfflineReshape}). */
    OfflineReshape start(List<? extends MemberDisk> members) throws IOException {
        return switch (kind) {
            case ADD -> OfflineReshape.grow(members, added, target.chunkBytes(), target.layout());
            case REMOVE -> OfflineReshape.shrink(members, target.newDisks(), target.arrayBytes());
            case CHANGE -> OfflineReshape.change(members, target.chunkBytes(), target.layout());
        };
    }

    @Override
    public String toString() {
        return switch (kind) {
            case ADD ->
                "add " + added.size() + " member(s)"
                        + (target.chunkBytes() == 0 ? "" : ", chunk " + target.chunkBytes() + " bytes")
                        + (target.layout() == null ? "" : ", layout " + target.layout());
            case REMOVE -> "remove members down to " + target.newDisks() + ", " + target.arrayBytes() + " bytes";
            case CHANGE ->
                "chunk " + (target.chunkBytes() == 0 ? "kept" : target.chunkBytes() + " bytes") + ", layout "
                        + (target.layout() == null ? "kept" : target.layout());
        };
    }
}
