package org.raidfive.array;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.raidfive.array.ReshapeTestDisks.Kept;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;

/** Filled arrays of memory members with room for a reshape either way, and the reshapes the tests start on them. */
final class RoomyArrays {
    static final int CHUNK = 64 * 1024;
    /** 1 MiB before the data (the default offset), 4 MiB of data, 3 MiB after: room either way. */
    static final long MEMBER = 8L << 20;

    static final long DATA = 4L << 20;

    private RoomyArrays() {}

    /** The members (kept past the array's close) and the array's reference image. */
    record Made(List<MemberDisk> members, byte[] image) {}

    static Made make(int disks, long seed) throws IOException {
        List<MemberDisk> members = new ArrayList<>();
        for (int i = 0; i < disks; i++) {
            members.add(new Kept(MEMBER, "m" + i));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK)
                        .algorithm(Raid5Algorithm.LEFT_SYMMETRIC)
                        .memberDataBytes(DATA)
                        .assumeClean(true)
                        .build(),
                members)) {
            return new Made(members, LoadGenerator.fillRandom(array, seed));
        }
    }

    /** A new blank member for a grow, or none for the other reshapes {@link #start} names. */
    static List<MemberDisk> added(String what) {
        return what.contains("grow") ? List.of(new Kept(MEMBER, "new0")) : List.of();
    }

    /** The reshape {@code what} names: a grow by {@code added}, a shrink to 3 members, or the chunk doubled. */
    static OfflineReshape start(String what, List<MemberDisk> members, List<MemberDisk> added) throws IOException {
        if (what.contains("grow")) {
            return OfflineReshape.grow(members, added);
        }
        return switch (what) {
            case "shrink" -> OfflineReshape.shrink(members, 3, DATA / CHUNK * CHUNK * 2);
            case "chunk change" -> OfflineReshape.change(members, 2 * CHUNK, null);
            default -> throw new IllegalArgumentException(what);
        };
    }
}
