package org.raidfive.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.raidfive.array.ArrayConfigException;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.AssembleOptions;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.array.OfflineReshape;
import org.raidfive.array.Raid5Array;
import org.raidfive.disk.FaultyDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.md.Superblock;

/**
 * A reshape that adds a member, handed between Linux md and raidfive mid-way, both ways, against
 * the real kernel in md-vm.
 *
 * <p>md to raidfive: {@code mdadm --grow --raid-devices=4} on md's 3-member array (no backup file:
 * mdadm moves the data offset down), throttled and stopped after a few seconds, so the members
 * record a reshape in progress. On the host raidfive continues it from md's recorded position
 * ({@link OfflineReshape#resume}) to the end, and reads md's data back at the new size. md then
 * assembles the 4 members, its check finds 0 mismatches and the whole array, read through md, is
 * md's data followed by zeros.
 *
 * <p>The same reshape, finished by each: a copy of md's stopped members is finished by md in the
 * second boot; every member's data area (data and parity) is then the same bytes as raidfive left.
 *
 * <p>raidfive to md: raidfive's 3-member array with a write-intent bitmap, filled, grown by one
 * member and stopped after three batches (the position checkpointed as md's reshape_position). md assembles it, continues the
 * reshape in the kernel to its end, finds 0 mismatches, and reads back raidfive's data followed by
 * zeros.
 *
 * <p>Chunk changes, both ways: md changes its 3-member array's chunk from 64K to 128K ({@code mdadm
 * --grow --chunk=128}), throttled and stopped mid-way; raidfive finishes it, md then checks 0
 * mismatches, and a copy finished by md itself leaves the same data areas (md's interrupted chunk
 * change does not keep all of its data, in either's hands: see the test). raidfive's
 * own 64K -> 128K change, on members laid out as mdadm lays them, chooses the same new offset as
 * mdadm did, stops after two batches, takes writes across its position ({@link OfflineReshape#write}:
 * 1 MiB straddling it, 64 random ranges), is marked clean, and md finishes it: check 0, raidfive's
 * data with those writes.
 *
 * <p>Degraded, raidfive to md: a member fails under raidfive's grow (its reads fail from the first
 * batch), is recorded faulty, and the reshape goes on degraded and stops after three batches. md
 * assembles the three members left, continues the degraded reshape to its end, rebuilds a spare
 * added then into the failed slot, finds 0 mismatches and reads raidfive's data. raidfive's shrink
 * (4 -> 3 members, md's backwards reshape) stopped after two batches, then written to and left
 * dirty (as a crash leaves it), is finished by md the same way, the freed member left as md's spare,
 * and md reads the data with those writes.
 *
 * <p>A member added and the chunk changed in one reshape, both ways: md's {@code mdadm --grow
 * --raid-devices=4 --chunk=128} (3 -> 4 members, 64K -> 128K), stopped mid-way, is read by
 * raidfive mid-way and finished by raidfive (md's check 0, md reads what raidfive read), and a copy
 * finished by md leaves the same data areas; raidfive's grow 3 -> 4 with 128K chunks and the
 * parity-last layout ({@link OfflineReshape#grow(List, List, int, Raid5Algorithm)}), stopped after
 * two batches and written across its position, is finished by md: 4 members, 128K, parity-last,
 * check 0, raidfive's data.
 *
 * <p>Degraded, md to raidfive: a member fails ({@code mdadm --fail}) in the middle of md's grow,
 * md carries the reshape on degraded and is stopped; given every member, raidfive refuses the one
 * md failed (its events are behind), and given the members md kept (as mdadm --assemble takes them)
 * it resumes the reshape without it (recorded faulty by md), finishes it and reads md's data; md then assembles the members left,
 * rebuilds a spare into the failed slot, checks 0 mismatches and reads the same data.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class ReshapeInteropIT {
    private static final long MEMBER_BYTES = 16L << 20;
    private static final int MIB = 1 << 20;
    private static final int CHUNK_KIB = 64;
    private static final int FILLED_MIB = 28;

    private Workbench bench;
    private byte[] data;
    private final List<Path> md = new ArrayList<>();
    private final List<Path> ours = new ArrayList<>();
    /** A copy of md's members as md stopped its reshape, which md itself finishes in the second boot. */
    private final List<Path> mdCopy = new ArrayList<>();
    /** raidfive's array whose grow lost a member, and the spare md rebuilds into its slot. */
    private final List<Path> degraded = new ArrayList<>();

    /** md's chunk change (finished by raidfive), a copy md finishes, and raidfive's chunk change. */
    private final List<Path> mdChunk = new ArrayList<>();

    private final List<Path> mdChunkCopy = new ArrayList<>();
    private final List<Path> ourChunk = new ArrayList<>();
    private Path mdChunkDump;
    private Path ourChunkDump;
    private Superblock mdChunkStopped;
    private int ourChunkNewOffset;
    private long ourChunkStoppedAt;
    /** The data with raidfive's writes mid-reshape (then marked clean). */
    private byte[] ourChunkData;

    private byte[] mdChunkReadByRaidfive;

    /** md's grow 3 -> 4 with a chunk change (finished by raidfive), and a copy md finishes. */
    private final List<Path> mdGrowChunk = new ArrayList<>();

    private final List<Path> mdGrowChunkCopy = new ArrayList<>();
    private Path mdGrowChunkDump;
    private Superblock mdGrowChunkStopped;
    private byte[] mdGrowChunkReadMidWay;
    private byte[] mdGrowChunkReadByRaidfive;

    /** raidfive's grow 3 -> 4 with a new chunk and layout, stopped mid-way for md to finish. */
    private final List<Path> ourGrowChunk = new ArrayList<>();

    private Path ourGrowChunkDump;
    private long ourGrowChunkStoppedAt;
    /** Its data with raidfive's writes mid-reshape (then marked clean). */
    private byte[] ourGrowChunkData;

    /** md's grow that lost member 1 mid-way (finished by raidfive), and the spare md rebuilds then. */
    private final List<Path> mdDegraded = new ArrayList<>();

    private Path mdDegradedSpare;
    private Path mdDegradedDump;
    private Superblock mdDegradedStopped;
    private String mdDegradedMissing;
    /** What resuming with the failed member given too says: it is behind the others. */
    private String mdDegradedStaleRefusal;

    private byte[] mdDegradedReadByRaidfive;

    /** raidfive's shrink 4 -> 3 (members with room after their data), stopped mid-way for md to finish. */
    private final List<Path> ourShrink = new ArrayList<>();

    private Path ourShrinkDump;
    /** The shrink's data with raidfive's writes mid-reshape; the members are left dirty, as by a crash. */
    private byte[] ourShrinkData;

    private long ourShrinkStoppedAt;
    private long ourShrinkStart;
    private long ourShrinkSize;

    private Path degradedSpare;
    private Path degradedDump;
    private String degradedMissing;
    private long degradedStoppedAt;

    private Path mdDump;
    private Path oursDump;
    private Map<String, GuestReport> first;
    private Map<String, GuestReport> second;
    private long mdStoppedAt;
    private long oursStoppedAt;
    private long mdOldOffset;
    private byte[] mdReadByRaidfive;
    /** md's stopped grow and chunk change as {@link OfflineReshape#readOnly} reads them, before raidfive goes on. */
    private byte[] mdReadMidWay;

    private byte[] mdChunkReadMidWay;

    @BeforeAll
    void handOverBothWays() throws Exception {
        MdVm vm = MdVm.locate();
        bench = Workbench.of("reshape");
        data = new byte[FILLED_MIB * MIB];
        new Random(0x5e5a9eL).nextBytes(data);
        Path dataImage = bench.dataImage("data", data);
        md.addAll(bench.images("md", 4, MEMBER_BYTES));
        ours.addAll(bench.images("ours", 4, MEMBER_BYTES));
        mdDump = bench.image("mddump", 48L * MIB);
        oursDump = bench.image("oursdump", 48L * MIB);

        GuestScript a = new GuestScript("reshape-md");
        String d = a.disk(dataImage);
        List<String> m = a.disks(md);
        a.call("md_create_opts", "mdgrow", "md0", 2, "--chunk=" + CHUNK_KIB, "--raid-devices=3", m.subList(0, 3));
        a.call("md_fill", "mdgrow", "md0", d, 0, FILLED_MIB);
        a.call("md_grow_offset_stalled", "mdgrow", "md0", m.get(3), 400, 3);
        mdChunk.addAll(bench.images("mdchunk", 3, MEMBER_BYTES));
        List<String> mc = a.disks(mdChunk);
        a.call("md_create_opts", "mdchunk", "md4", 2, "--chunk=" + CHUNK_KIB, "--raid-devices=3", mc);
        a.call("md_fill", "mdchunk", "md4", d, 0, FILLED_MIB);
        // md records a chunk change's position only every 10 seconds: stop it after one
        a.call("md_reshape_stalled", "mdchunk", "md4", 300, 12, "--chunk=" + 2 * CHUNK_KIB);
        mdGrowChunk.addAll(bench.images("mdgrowchunk", 4, MEMBER_BYTES));
        List<String> mg = a.disks(mdGrowChunk);
        a.call("md_create_opts", "mdgrowchunk", "md8", 2, "--chunk=" + CHUNK_KIB, "--raid-devices=3", mg.subList(0, 3));
        a.call("md_fill", "mdgrowchunk", "md8", d, 0, FILLED_MIB);
        a.call("md_add", "mdgrowchunk", "md8", mg.get(3));
        a.call("md_reshape_stalled", "mdgrowchunk", "md8", 300, 12, "--raid-devices=4", "--chunk=" + 2 * CHUNK_KIB);
        mdDegraded.addAll(bench.images("mddegraded", 4, MEMBER_BYTES));
        List<String> md2 = a.disks(mdDegraded);
        a.call(
                "md_create_opts",
                "mddegraded",
                "md11",
                2,
                "--chunk=" + CHUNK_KIB,
                "--raid-devices=3",
                md2.subList(0, 3));
        a.call("md_fill", "mddegraded", "md11", d, 0, FILLED_MIB);
        a.call("md_grow_offset_stalled", "mddegraded", "md11", md2.get(3), 400, 3, md2.get(1));
        first = BootRunner.run(
                vm,
                List.of(a),
                false,
                Duration.ofMinutes(6),
                bench.dir(),
                List.of("mdgrow", "mdchunk", "mdgrowchunk", "mddegraded"));

        // md -> raidfive, degraded: md's grow lost member 1; raidfive finishes it without that member.
        mdDegradedStopped = ExamineCheck.decode(mdDegraded.get(0));
        List<MemberDisk> all = Workbench.open(mdDegraded);
        mdDegradedStaleRefusal = assertThrows(ArrayConfigException.class, () -> OfflineReshape.resume(all))
                .getMessage();
        for (MemberDisk disk : all) {
            disk.close();
        }
        // as mdadm --assemble leaves it out: the members md kept, the failed one not given
        List<MemberDisk> mdDegradedDisks =
                Workbench.open(List.of(mdDegraded.get(0), mdDegraded.get(2), mdDegraded.get(3)));
        mdDegradedMissing = resume(mdDegradedDisks);
        mdDegradedReadByRaidfive = readAll(mdDegradedDisks);
        for (MemberDisk disk : mdDegradedDisks) {
            disk.close();
        }
        mdDegradedSpare = bench.image("mddegradedspare", MEMBER_BYTES);
        mdDegradedDump = bench.image("mddegradeddump", 48L * MIB);

        // md -> raidfive: continue md's reshape here (and keep a copy for md to finish).
        mdCopy.addAll(bench.images("mdcopy", 4, MEMBER_BYTES));
        mdGrowChunkDump = bench.image("mdgrowchunkdump", 48L * MIB);
        copy(md, mdCopy);
        Superblock sb = ExamineCheck.decode(md.get(0));
        mdStoppedAt = sb.reshapePosition();
        mdOldOffset = sb.dataOffset();
        List<MemberDisk> mdDisks = Workbench.open(md);
        mdReadMidWay = readMidWay(mdDisks);
        resume(mdDisks);
        mdReadByRaidfive = readAll(mdDisks);

        // md -> raidfive, a chunk change: finished here, and a copy kept for md to finish.
        mdChunkCopy.addAll(bench.images("mdchunkcopy", 3, MEMBER_BYTES));
        copy(mdChunk, mdChunkCopy);
        mdChunkStopped = ExamineCheck.decode(mdChunk.get(0));
        List<MemberDisk> mdChunkDisks = Workbench.open(mdChunk);
        mdChunkReadMidWay = readMidWay(mdChunkDisks);
        resume(mdChunkDisks);
        mdChunkReadByRaidfive = readAll(mdChunkDisks);

        // md -> raidfive, a grow with a chunk change: finished here, and a copy kept for md to finish.
        mdGrowChunkCopy.addAll(bench.images("mdgrowchunkcopy", 4, MEMBER_BYTES));
        copy(mdGrowChunk, mdGrowChunkCopy);
        mdGrowChunkStopped = ExamineCheck.decode(mdGrowChunk.get(0));
        List<MemberDisk> mdGrowChunkDisks = Workbench.open(mdGrowChunk);
        mdGrowChunkReadMidWay = readMidWay(mdGrowChunkDisks);
        resume(mdGrowChunkDisks);
        mdGrowChunkReadByRaidfive = readAll(mdGrowChunkDisks);

        // raidfive -> md, a grow with a new chunk and layout, stopped after two batches.
        ourGrowChunk.addAll(bench.images("ourgrowchunk", 4, MEMBER_BYTES));
        ourGrowChunkDump = bench.image("ourgrowchunkdump", 48L * MIB);
        List<MemberDisk> ourGrowChunkDisks = Workbench.openNew(ourGrowChunk, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK_KIB * 1024)
                        .assumeClean(true)
                        .build(),
                ourGrowChunkDisks.subList(0, 3))) {
            array.write(0, ByteBuffer.wrap(data), 0, data.length);
        }
        ourGrowChunkDisks = Workbench.open(ourGrowChunk);
        AtomicInteger growChunkBatches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.grow(
                ourGrowChunkDisks.subList(0, 3),
                ourGrowChunkDisks.subList(3, 4),
                2 * CHUNK_KIB * 1024,
                Raid5Algorithm.PARITY_LAST)) {
            assertFalse(r.run(() -> growChunkBatches.get() == 2, p -> growChunkBatches.incrementAndGet()));
            ourGrowChunkStoppedAt = r.position();
            ourGrowChunkData = writeAcross(r, data, 0x9c4aL);
            r.markClean();
        }
        for (MemberDisk disk : ourGrowChunkDisks) {
            disk.close();
        }

        // raidfive -> md, a chunk change of raidfive's, stopped after two batches.
        ourChunk.addAll(bench.images("ourchunk", 3, MEMBER_BYTES));
        mdChunkDump = bench.image("mdchunkdump", 48L * MIB);
        ourChunkDump = bench.image("ourchunkdump", 48L * MIB);
        List<MemberDisk> ourChunkDisks = Workbench.openNew(ourChunk, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK_KIB * 1024)
                        .assumeClean(true)
                        .build(),
                ourChunkDisks)) {
            array.write(0, ByteBuffer.wrap(data), 0, data.length);
        }
        ourChunkDisks = Workbench.open(ourChunk);
        AtomicInteger chunkBatches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.change(ourChunkDisks, 2 * CHUNK_KIB * 1024, null)) {
            assertFalse(r.run(() -> chunkBatches.get() == 2, p -> chunkBatches.incrementAndGet()));
            ourChunkStoppedAt = r.position();
            ourChunkData = writeAcross(r, data, 0xc4a7L);
            r.markClean();
        }
        ourChunkNewOffset = ExamineCheck.decode(ourChunk.get(0)).newOffset();
        for (MemberDisk disk : ourChunkDisks) {
            disk.close();
        }

        // raidfive -> md: raidfive's array, grown part-way.
        List<MemberDisk> oursDisks = Workbench.openNew(ours, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK_KIB * 1024)
                        .assumeClean(true)
                        .consistencyPolicy(ConsistencyPolicy.BITMAP)
                        .build(),
                oursDisks.subList(0, 3))) {
            array.write(0, ByteBuffer.wrap(data), 0, data.length);
        }
        oursDisks = Workbench.open(ours);
        AtomicInteger batches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.grow(oursDisks.subList(0, 3), oursDisks.subList(3, 4))) {
            assertFalse(r.run(() -> batches.get() == 3, p -> batches.incrementAndGet()));
            oursStoppedAt = r.position();
        }
        for (MemberDisk disk : oursDisks) {
            disk.close();
        }

        // raidfive -> md, degraded: slot 1 fails in the first batch of the grow.
        degraded.addAll(bench.images("degraded", 4, MEMBER_BYTES));
        degradedSpare = bench.image("degradedspare", MEMBER_BYTES);
        degradedDump = bench.image("degradeddump", 48L * MIB);
        List<MemberDisk> degradedDisks = Workbench.openNew(degraded, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK_KIB * 1024)
                        .assumeClean(true)
                        .build(),
                degradedDisks.subList(0, 3))) {
            array.write(0, ByteBuffer.wrap(data), 0, data.length);
        }
        degradedDisks = Workbench.open(degraded);
        long dataStart = ExamineCheck.decode(degraded.get(1)).dataOffset() * 512;
        List<MemberDisk> given = new ArrayList<>(degradedDisks.subList(0, 3));
        given.set(1, new FaultyDisk(given.get(1)).failReads(dataStart, dataStart + 4096));
        AtomicInteger degradedBatches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.grow(given, degradedDisks.subList(3, 4))) {
            assertFalse(r.run(() -> degradedBatches.get() == 3, p -> degradedBatches.incrementAndGet()));
            degradedMissing = r.missingMember();
            degradedStoppedAt = r.position();
        }
        for (MemberDisk disk : degradedDisks) {
            disk.close();
        }

        // raidfive -> md, a shrink: 8 MiB of data on 16 MiB members, 4 -> 3, stopped after two batches.
        ourShrink.addAll(bench.images("ourshrink", 4, MEMBER_BYTES));
        ourShrinkDump = bench.image("ourshrinkdump", 48L * MIB);
        List<MemberDisk> shrinkDisks = Workbench.openNew(ourShrink, MEMBER_BYTES);
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(CHUNK_KIB * 1024)
                        .memberDataBytes(8L * MIB)
                        .assumeClean(true)
                        .build(),
                shrinkDisks)) {
            array.write(0, ByteBuffer.wrap(data), 0, (int) Math.min(data.length, array.size()));
        }
        shrinkDisks = Workbench.open(ourShrink);
        ourShrinkSize = 8L * MIB * 2;
        AtomicInteger shrinkBatches = new AtomicInteger();
        try (OfflineReshape r = OfflineReshape.shrink(shrinkDisks, 3, ourShrinkSize)) {
            ourShrinkStart = r.position();
            assertFalse(r.run(() -> shrinkBatches.get() == 2, p -> shrinkBatches.incrementAndGet()));
            ourShrinkStoppedAt = r.position();
            ourShrinkData = writeAcross(r, Arrays.copyOf(data, (int) ourShrinkSize), 0x5412L);
        } // not marked clean: md continues the dirty reshape and resyncs after it
        for (MemberDisk disk : shrinkDisks) {
            disk.close();
        }

        GuestScript b = new GuestScript("reshape-both");
        b.call("md_assemble", "mdgrow", "md0", b.disks(md));
        b.call("md_check", "mdgrow", "md0");
        b.call("md_report", "mdgrow", "md0");
        b.call("md_dump", "mdgrow", "md0", b.disk(mdDump));
        b.call("md_stop", "mdgrow", "md0");
        b.call("md_assemble", "mdcopy", "md2", b.disks(mdCopy));
        b.call("md_stop", "mdcopy", "md2");
        b.call("md_assemble", "ours", "md1", b.disks(ours));
        b.call("md_check", "ours", "md1");
        b.call("md_report", "ours", "md1");
        b.call("md_dump", "ours", "md1", b.disk(oursDump));
        b.call("md_stop", "ours", "md1");
        List<String> deg = b.disks(degraded);
        b.call("md_assemble", "degraded", "md3", List.of(deg.get(0), deg.get(2), deg.get(3)));
        b.call("md_add", "degraded", "md3", b.disk(degradedSpare));
        b.call("md_check", "degraded", "md3");
        b.call("md_report", "degraded", "md3");
        b.call("md_dump", "degraded", "md3", b.disk(degradedDump));
        b.call("md_stop", "degraded", "md3");
        b.call("md_assemble", "mdgrowchunk", "md8", b.disks(mdGrowChunk));
        b.call("md_check", "mdgrowchunk", "md8");
        b.call("md_report", "mdgrowchunk", "md8");
        b.call("md_dump", "mdgrowchunk", "md8", b.disk(mdGrowChunkDump));
        b.call("md_stop", "mdgrowchunk", "md8");
        GuestScript c = new GuestScript("reshape-chunk"); // a boot of its own: md-vm takes 26 images at most
        c.call("md_assemble", "mdchunk", "md4", c.disks(mdChunk));
        c.call("md_check", "mdchunk", "md4");
        c.call("md_report", "mdchunk", "md4");
        c.call("md_dump", "mdchunk", "md4", c.disk(mdChunkDump));
        c.call("md_stop", "mdchunk", "md4");
        c.call("md_assemble", "mdchunkcopy", "md5", c.disks(mdChunkCopy));
        c.call("md_stop", "mdchunkcopy", "md5");
        c.call("md_assemble", "ourchunk", "md6", c.disks(ourChunk));
        c.call("md_check", "ourchunk", "md6");
        c.call("md_report", "ourchunk", "md6");
        c.call("md_dump", "ourchunk", "md6", c.disk(ourChunkDump));
        c.call("md_stop", "ourchunk", "md6");
        c.call("md_assemble", "ourshrink", "md7", c.disks(ourShrink));
        c.call("md_check", "ourshrink", "md7");
        c.call("md_report", "ourshrink", "md7");
        c.call("md_dump", "ourshrink", "md7", c.disk(ourShrinkDump));
        c.call("md_stop", "ourshrink", "md7");
        c.call("md_assemble", "mdgrowchunkcopy", "md9", c.disks(mdGrowChunkCopy));
        c.call("md_stop", "mdgrowchunkcopy", "md9");
        c.call("md_assemble", "ourgrowchunk", "md10", c.disks(ourGrowChunk));
        c.call("md_check", "ourgrowchunk", "md10");
        c.call("md_report", "ourgrowchunk", "md10");
        c.call("md_dump", "ourgrowchunk", "md10", c.disk(ourGrowChunkDump));
        c.call("md_stop", "ourgrowchunk", "md10");
        GuestScript e = new GuestScript("reshape-degraded");
        List<String> dd = e.disks(mdDegraded);
        e.call("md_assemble", "mddegraded", "md11", List.of(dd.get(0), dd.get(2), dd.get(3)));
        e.call("md_add", "mddegraded", "md11", e.disk(mdDegradedSpare));
        e.call("md_check", "mddegraded", "md11");
        e.call("md_report", "mddegraded", "md11");
        e.call("md_dump", "mddegraded", "md11", e.disk(mdDegradedDump));
        e.call("md_stop", "mddegraded", "md11");
        second = BootRunner.run(
                vm,
                List.of(b, c, e),
                false,
                Duration.ofMinutes(6),
                bench.dir(),
                List.of(
                        "mdgrow",
                        "ours",
                        "mdcopy",
                        "degraded",
                        "mdchunk",
                        "mdchunkcopy",
                        "ourchunk",
                        "ourshrink",
                        "mdgrowchunk",
                        "mdgrowchunkcopy",
                        "ourgrowchunk",
                        "mddegraded"));
        System.out.println("md stopped its reshape at " + mdStoppedAt + ", raidfive at " + oursStoppedAt + "\n"
                + first.get("mdgrow").describe("mdgrow") + "\n"
                + second.get("mdgrow").describe("mdgrow") + "\n"
                + second.get("ours").describe("ours") + "\n"
                + second.get("degraded").describe("degraded") + "\n"
                + first.get("mdchunk").describe("mdchunk") + "\n"
                + second.get("mdchunk").describe("mdchunk") + "\n"
                + second.get("ourchunk").describe("ourchunk") + "\n"
                + second.get("ourshrink").describe("ourshrink") + "\n"
                + first.get("mdgrowchunk").describe("mdgrowchunk") + "\n"
                + second.get("mdgrowchunk").describe("mdgrowchunk") + "\n"
                + second.get("ourgrowchunk").describe("ourgrowchunk") + "\n"
                + first.get("mddegraded").describe("mddegraded") + "\n"
                + second.get("mddegraded").describe("mddegraded"));
    }

    @AfterAll
    void cleanUp() {
        if (bench != null) {
            bench.deleteImages();
        }
    }

    /** Each image of {@code from} copied over the same place in {@code to}. */
    private static void copy(List<Path> from, List<Path> to) throws Exception {
        for (int i = 0; i < from.size(); i++) {
            Files.copy(from.get(i), to.get(i), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** The array of a reshape stopped mid-way, as raidfive reads it there ({@link OfflineReshape#readOnly}). */
    private static byte[] readMidWay(List<MemberDisk> disks) throws Exception {
        try (OfflineReshape r = OfflineReshape.readOnly(disks)) {
            byte[] b = new byte[(int) r.reshapingArrayBytes()];
            r.read(0, ByteBuffer.wrap(b), 0, b.length);
            return b;
        }
    }

    /** raidfive resumes the reshape recorded on {@code disks} and runs it to its end; returns the member it ran without, if any. */
    private static String resume(List<MemberDisk> disks) throws Exception {
        try (OfflineReshape r = OfflineReshape.resume(disks)) {
            String missing = r.missingMember();
            assertTrue(r.run(() -> false, p -> {}));
            return missing;
        }
    }

    /** The whole array, assembled read-only. */
    private static byte[] readAll(List<MemberDisk> disks) throws Exception {
        try (Raid5Array array = Raid5Array.assemble(disks, AssembleOptions.DEFAULT.withReadOnly(true))) {
            byte[] b = new byte[(int) array.size()];
            array.read(0, ByteBuffer.wrap(b), 0, b.length);
            return b;
        }
    }

    /** md's data, then zeros, to the array's new size. */
    /**
     * Writes through raidfive mid-reshape: 1 MiB across the position (part in each geometry) and 64
     * random ranges; returns {@code before} with them, which is then what the array must hold.
     */
    private static byte[] writeAcross(OfflineReshape r, byte[] before, long seed) throws Exception {
        byte[] after = Arrays.copyOf(before, (int) r.reshapingArrayBytes());
        Random random = new Random(seed);
        int at = (int) Math.max(0, Math.min(after.length - MIB, r.position() * 512 - MIB / 2));
        List<int[]> ranges = new ArrayList<>(List.of(new int[] {at, MIB}));
        for (int i = 0; i < 64; i++) {
            int len = (1 + random.nextInt(64)) * 512;
            ranges.add(new int[] {random.nextInt((after.length - len) / 512 + 1) * 512, len});
        }
        for (int[] range : ranges) {
            byte[] bytes = new byte[range[1]];
            random.nextBytes(bytes);
            r.write(range[0], ByteBuffer.wrap(bytes), 0, bytes.length);
            System.arraycopy(bytes, 0, after, range[0], bytes.length);
        }
        return after;
    }

    private byte[] expected(long size) {
        return Arrays.copyOf(data, (int) size);
    }

    private static byte[] head(Path image, long bytes) throws Exception {
        byte[] b = new byte[(int) bytes];
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "r")) {
            f.readFully(b);
        }
        return b;
    }

    @Test
    void raidfiveFinishesTheReshapeMdStartedAndMdAgrees() throws Exception {
        Map<String, String> g = first.get("mdgrow").result("mdgrow");
        assertEquals("0", g.get("grow_rc"), first.get("mdgrow").describe("mdgrow"));
        assertTrue(mdStoppedAt > 0, "md stopped mid-way: reshape_position " + mdStoppedAt);
        long newSize = 3L * ((MEMBER_BYTES / 512 - mdOldOffset) * 512 / (CHUNK_KIB * 1024) * CHUNK_KIB * 1024);
        assertTrue(mdStoppedAt * 512 < newSize, "md had not finished: " + mdStoppedAt);
        assertEquals(newSize, mdReadByRaidfive.length, "raidfive's size after the reshape");
        long oldSize = 2L * ((MEMBER_BYTES / 512 - mdOldOffset) * 512 / (CHUNK_KIB * 1024) * CHUNK_KIB * 1024);
        assertEquals(oldSize, mdReadMidWay.length, "the array's size mid-reshape: md keeps the old one");
        assertTrue(mdStoppedAt * 512 < Math.min(oldSize, data.length), "the data crosses md's position");
        assertArrayEquals(expected(oldSize), mdReadMidWay, "raidfive reads md's grow mid-way at " + mdStoppedAt);
        assertArrayEquals(expected(newSize), mdReadByRaidfive, "raidfive reads md's data after finishing the reshape");
        Map<String, String> after = second.get("mdgrow").result("mdgrow");
        assertEquals("0", after.get("assemble_rc"), second.get("mdgrow").describe("mdgrow"));
        assertEquals("4", after.get("raid_disks"));
        assertEquals(
                Long.toString(newSize), after.get("size"), second.get("mdgrow").describe("mdgrow"));
        assertEquals("0", after.get("mismatch"), "md's check after raidfive's reshape");
        assertArrayEquals(expected(newSize), head(mdDump, newSize), "md reads its data through raidfive's reshape");
    }

    /** The same reshape, stopped by md at the same position, finished by raidfive and by md: the same bytes. */
    @Test
    void raidfiveAndMdFinishingTheSameReshapeLeaveTheSameDataAreas() throws Exception {
        Map<String, String> g = second.get("mdcopy").result("mdcopy");
        assertEquals("0", g.get("assemble_rc"), second.get("mdcopy").describe("mdcopy"));
        for (int i = 0; i < 4; i++) {
            Superblock byUs = ExamineCheck.decode(md.get(i));
            Superblock byMd = ExamineCheck.decode(mdCopy.get(i));
            assertFalse(byMd.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md finished: " + byMd);
            assertEquals(byMd.dataOffset(), byUs.dataOffset(), "member " + i + "'s data offset");
            assertEquals(byMd.dataSize(), byUs.dataSize(), "member " + i + "'s data size");
            assertEquals(byMd.raidDisks(), byUs.raidDisks());
            long from = byMd.dataOffset() * 512;
            long to = from + byMd.size() * 512;
            byte[] ours = range(md.get(i), from, to);
            byte[] theirs = range(mdCopy.get(i), from, to);
            for (int at = 0; at < ours.length; at += 512) {
                if (!Arrays.equals(ours, at, at + 512, theirs, at, at + 512)) {
                    throw new AssertionError("member " + i + " differs at data sector " + at / 512);
                }
            }
        }
    }

    private static byte[] range(Path image, long from, long to) throws Exception {
        byte[] b = new byte[(int) (to - from)];
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "r")) {
            f.seek(from);
            f.readFully(b);
        }
        return b;
    }

    @Test
    void mdFinishesTheReshapeRaidfiveStartedAndReadsItsData() throws Exception {
        assertTrue(oursStoppedAt > 0, "raidfive stopped mid-way: " + oursStoppedAt);
        Map<String, String> g = second.get("ours").result("ours");
        assertEquals("0", g.get("assemble_rc"), second.get("ours").describe("ours"));
        assertEquals("4", g.get("raid_disks"), second.get("ours").describe("ours"));
        long size = Long.parseLong(g.get("size"));
        assertTrue(size > data.length, "grown: " + size);
        assertEquals("0", g.get("mismatch"), "md's check after md finished raidfive's reshape");
        assertArrayEquals(expected(size), head(oursDump, size), "md reads raidfive's data after the reshape");
        Superblock sb = ExamineCheck.decode(ours.get(3));
        assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md finished: " + sb);
        assertEquals(4, sb.raidDisks());
        assertTrue(g.get("bitmap").contains("Internal"), "md kept the bitmap: " + g.get("bitmap"));
    }

    @Test
    void mdFinishesADegradedReshapeRaidfiveStartedAndRebuildsTheFailedSlot() throws Exception {
        String slot1 = degraded.get(1).getFileName().toString();
        assertTrue(degradedMissing != null && degradedMissing.endsWith(slot1), "failed: " + degradedMissing);
        assertTrue(degradedStoppedAt > 0, "raidfive stopped mid-way: " + degradedStoppedAt);
        String said = second.get("degraded").describe("degraded");
        Map<String, String> g = second.get("degraded").result("degraded");
        assertEquals("0", g.get("assemble_rc"), said);
        assertEquals("0", g.get("add_rc"), said);
        assertEquals("4", g.get("raid_disks"), said);
        assertEquals("0", g.get("degraded"), "the spare took the failed slot: " + said);
        assertEquals("0", g.get("mismatch"), "md's check after md finished the degraded reshape: " + said);
        long size = Long.parseLong(g.get("size"));
        assertTrue(size > data.length, "grown: " + size);
        assertArrayEquals(expected(size), head(degradedDump, size), "md reads raidfive's data");
    }

    /**
     * md's own chunk change, interrupted by mdadm --stop, is finished by raidfive and by md (a copy):
     * both leave the same bytes in every member's data area, and md's check of raidfive's finish finds
     * 0 mismatches. What they leave is not all of md's data: md-vm shows md writing rows past the
     * position it records before the stop, over old data a resume from that position reads (md's own
     * finish loses the same rows), so the data itself is compared only where md kept it, before the
     * recorded position.
     */
    @Test
    void raidfiveFinishesMdsChunkChangeAsMdDoes() throws Exception {
        Map<String, String> g = first.get("mdchunk").result("mdchunk");
        assertEquals("0", g.get("grow_rc"), first.get("mdchunk").describe("mdchunk"));
        assertTrue(mdChunkStopped.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md stopped mid-way");
        assertEquals(2 * CHUNK_KIB * 2, mdChunkStopped.newChunk());
        long size = mdChunkReadByRaidfive.length;
        int kept = (int) (mdChunkStopped.reshapePosition() * 512);
        assertArrayEquals(
                Arrays.copyOf(data, kept),
                Arrays.copyOf(mdChunkReadByRaidfive, kept),
                "md's data below the position md recorded");
        assertEquals(size, mdChunkReadMidWay.length, "the array's size mid-reshape");
        assertArrayEquals(
                Arrays.copyOf(data, kept),
                Arrays.copyOf(mdChunkReadMidWay, kept),
                "raidfive reads md's chunk change mid-way, in the new geometry below the position md recorded");
        assertArrayEquals(
                mdChunkReadByRaidfive,
                mdChunkReadMidWay,
                "read mid-way (the old geometry from the position up) as after raidfive's finish");
        Map<String, String> after = second.get("mdchunk").result("mdchunk");
        String said = second.get("mdchunk").describe("mdchunk");
        assertEquals("0", after.get("assemble_rc"), said);
        assertEquals("0", after.get("mismatch"), "md's check after raidfive finished md's chunk change: " + said);
        assertEquals("128K", after.get("chunk"), said);
        assertEquals(Long.toString(size), after.get("size"), said);
        assertArrayEquals(mdChunkReadByRaidfive, head(mdChunkDump, size), "md reads what raidfive read");
        for (int i = 0; i < 3; i++) {
            Superblock byUs = ExamineCheck.decode(mdChunk.get(i));
            Superblock byMd = ExamineCheck.decode(mdChunkCopy.get(i));
            assertFalse(byMd.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md finished: " + byMd);
            assertEquals(byMd.dataOffset(), byUs.dataOffset(), "member " + i + "'s data offset");
            assertEquals(byMd.chunkSectors(), byUs.chunkSectors());
            long from = byMd.dataOffset() * 512;
            long to = from + byMd.size() * 512;
            assertArrayEquals(
                    range(mdChunkCopy.get(i), from, to),
                    range(mdChunk.get(i), from, to),
                    "member " + i + "'s data area, md's finish and raidfive's");
        }
    }

    @Test
    void mdFinishesRaidfivesChunkChangeAndTheOffsetIsMdadms() throws Exception {
        assertEquals(mdChunkStopped.newOffset(), ourChunkNewOffset, "the new offset mdadm chose and raidfive chose");
        assertTrue(ourChunkStoppedAt > 0, "raidfive stopped mid-way: " + ourChunkStoppedAt);
        Map<String, String> g = second.get("ourchunk").result("ourchunk");
        String said = second.get("ourchunk").describe("ourchunk");
        assertEquals("0", g.get("assemble_rc"), said);
        assertEquals("0", g.get("mismatch"), "md's check after md finished raidfive's chunk change: " + said);
        assertEquals("128K", g.get("chunk"), said);
        long size = Long.parseLong(g.get("size"));
        assertArrayEquals(
                Arrays.copyOf(ourChunkData, (int) size),
                head(ourChunkDump, size),
                "md reads raidfive's data, with what raidfive wrote mid-reshape");
        assertFalse(ExamineCheck.decode(ourChunk.get(0)).hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE));
    }

    /**
     * raidfive's shrink (4 -> 3 members, md's backwards reshape: delta_disks -1, the offset moving up),
     * stopped mid-way, is finished by md: 3 raid disks, the smaller size, md's check 0, and md reads
     * the data raidfive kept; the freed member is a spare.
     */
    @Test
    void mdFinishesRaidfivesShrinkAndReadsItsData() throws Exception {
        assertTrue(
                ourShrinkStoppedAt > 0 && ourShrinkStoppedAt < ourShrinkStart,
                "raidfive stopped mid-way: " + ourShrinkStoppedAt + " of " + ourShrinkStart);
        Map<String, String> g = second.get("ourshrink").result("ourshrink");
        String said = second.get("ourshrink").describe("ourshrink");
        assertEquals("0", g.get("assemble_rc"), said);
        assertEquals("3", g.get("raid_disks"), said);
        assertEquals(Long.toString(ourShrinkSize), g.get("size"), said);
        assertEquals("0", g.get("mismatch"), "md's check after md finished raidfive's shrink: " + said);
        assertEquals("1", g.get("spare_devices"), "the freed member is md's spare: " + said);
        assertArrayEquals(
                ourShrinkData,
                head(ourShrinkDump, ourShrinkSize),
                "md reads raidfive's data, with what raidfive wrote mid-reshape (and left dirty)");
        for (int i = 0; i < 3; i++) {
            Superblock sb = ExamineCheck.decode(ourShrink.get(i));
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md finished: " + sb);
            assertEquals(3, sb.raidDisks());
        }
    }

    /**
     * md's grow 3 -> 4 with 64K -> 128K chunks, stopped mid-way: raidfive reads it mid-way (the new
     * geometry below md's position, the old above) and finishes it; md then checks 0 mismatches and
     * reads what raidfive read, and a copy finished by md itself leaves the same data areas.
     */
    @Test
    void raidfiveFinishesMdsGrowWithAChunkChangeAsMdDoes() throws Exception {
        String said = first.get("mdgrowchunk").describe("mdgrowchunk");
        Map<String, String> g = first.get("mdgrowchunk").result("mdgrowchunk");
        assertEquals("0", g.get("grow_rc"), said);
        assertTrue(mdGrowChunkStopped.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md stopped mid-way: " + said);
        assertEquals(1, mdGrowChunkStopped.deltaDisks());
        assertEquals(2 * CHUNK_KIB * 2, mdGrowChunkStopped.newChunk());
        long oldSize = mdGrowChunkReadMidWay.length;
        assertTrue(
                mdGrowChunkStopped.reshapePosition() * 512 < Math.min(oldSize, data.length),
                "the data crosses md's position " + mdGrowChunkStopped.reshapePosition());
        assertArrayEquals(
                Arrays.copyOf(data, (int) oldSize),
                mdGrowChunkReadMidWay,
                "raidfive reads md's grow with a chunk change mid-way at " + mdGrowChunkStopped.reshapePosition());
        long size = mdGrowChunkReadByRaidfive.length;
        assertTrue(size > oldSize, "grown: " + size);
        assertArrayEquals(expected(size), mdGrowChunkReadByRaidfive, "raidfive reads md's data after finishing");
        Map<String, String> after = second.get("mdgrowchunk").result("mdgrowchunk");
        String saidAfter = second.get("mdgrowchunk").describe("mdgrowchunk");
        assertEquals("0", after.get("assemble_rc"), saidAfter);
        assertEquals("4", after.get("raid_disks"), saidAfter);
        assertEquals("128K", after.get("chunk"), saidAfter);
        assertEquals(Long.toString(size), after.get("size"), saidAfter);
        assertEquals("0", after.get("mismatch"), "md's check after raidfive finished md's grow: " + saidAfter);
        assertArrayEquals(expected(size), head(mdGrowChunkDump, size), "md reads what raidfive read");
        assertEquals(
                "0", second.get("mdgrowchunkcopy").result("mdgrowchunkcopy").get("assemble_rc"));
        for (int i = 0; i < 4; i++) {
            Superblock byUs = ExamineCheck.decode(mdGrowChunk.get(i));
            Superblock byMd = ExamineCheck.decode(mdGrowChunkCopy.get(i));
            assertFalse(byMd.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md finished: " + byMd);
            assertEquals(byMd.dataOffset(), byUs.dataOffset(), "member " + i + "'s data offset");
            assertEquals(byMd.dataSize(), byUs.dataSize(), "member " + i + "'s data size");
            assertEquals(byMd.chunkSectors(), byUs.chunkSectors());
            assertEquals(byMd.raidDisks(), byUs.raidDisks());
            long from = byMd.dataOffset() * 512;
            long to = from + byMd.size() * 512;
            assertArrayEquals(
                    range(mdGrowChunkCopy.get(i), from, to),
                    range(mdGrowChunk.get(i), from, to),
                    "member " + i + "'s data area, md's finish and raidfive's");
        }
    }

    /**
     * raidfive's grow 3 -> 4 that also changes the chunk (64K -> 128K) and the layout (to
     * parity-last), stopped after two batches and written across its position, is finished by md.
     */
    @Test
    void mdFinishesRaidfivesGrowWithANewChunkAndLayout() throws Exception {
        assertTrue(ourGrowChunkStoppedAt > 0, "raidfive stopped mid-way: " + ourGrowChunkStoppedAt);
        Map<String, String> g = second.get("ourgrowchunk").result("ourgrowchunk");
        String said = second.get("ourgrowchunk").describe("ourgrowchunk");
        assertEquals("0", g.get("assemble_rc"), said);
        assertEquals("4", g.get("raid_disks"), said);
        assertEquals("128K", g.get("chunk"), said);
        assertEquals("parity-last", g.get("layout"), said);
        assertEquals("0", g.get("mismatch"), "md's check after md finished raidfive's grow: " + said);
        long size = Long.parseLong(g.get("size"));
        assertTrue(size > ourGrowChunkData.length, "grown: " + size);
        assertArrayEquals(
                Arrays.copyOf(ourGrowChunkData, (int) size),
                head(ourGrowChunkDump, size),
                "md reads raidfive's data, with what raidfive wrote mid-reshape");
        for (int i = 0; i < 4; i++) {
            Superblock sb = ExamineCheck.decode(ourGrowChunk.get(i));
            assertFalse(sb.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md finished: " + sb);
            assertEquals(4, sb.raidDisks());
            assertEquals(2 * CHUNK_KIB * 2, sb.chunkSectors());
        }
    }

    /**
     * md's grow 3 -> 4 that lost member 1 mid-way ({@code mdadm --fail}, md going on degraded), stopped:
     * raidfive resumes it without that member, finishes it and reads md's data; md then assembles
     * the three left, rebuilds a spare into the failed slot, checks 0 mismatches and reads the same.
     */
    @Test
    void raidfiveFinishesMdsDegradedGrowAndMdRebuildsTheFailedSlot() throws Exception {
        String said = first.get("mddegraded").describe("mddegraded");
        Map<String, String> g = first.get("mddegraded").result("mddegraded");
        assertEquals("0", g.get("grow_rc"), said);
        assertEquals("0", g.get("fail_rc"), said);
        assertTrue(mdDegradedStopped.hasFeature(Superblock.MD_FEATURE_RESHAPE_ACTIVE), "md stopped mid-way: " + said);
        String slot1 = mdDegraded.get(1).getFileName().toString();
        assertTrue(
                mdDegradedStaleRefusal.contains(slot1)
                        && mdDegradedStaleRefusal.contains("events behind")
                        && mdDegradedStaleRefusal.contains("leave it out"),
                "given too, the member md failed is refused, named, to be left out as mdadm does: "
                        + mdDegradedStaleRefusal);
        assertEquals("slot 1", mdDegradedMissing, "raidfive resumes without the member md failed");
        long size = mdDegradedReadByRaidfive.length;
        assertTrue(size > data.length, "grown: " + size);
        assertArrayEquals(expected(size), mdDegradedReadByRaidfive, "raidfive reads md's data after finishing");
        Map<String, String> after = second.get("mddegraded").result("mddegraded");
        String saidAfter = second.get("mddegraded").describe("mddegraded");
        assertEquals("0", after.get("assemble_rc"), saidAfter);
        assertEquals("0", after.get("add_rc"), saidAfter);
        assertEquals("4", after.get("raid_disks"), saidAfter);
        assertEquals("0", after.get("degraded"), "the spare took the failed slot: " + saidAfter);
        assertEquals(Long.toString(size), after.get("size"), saidAfter);
        assertEquals("0", after.get("mismatch"), "md's check after raidfive finished md's degraded grow: " + saidAfter);
        assertArrayEquals(expected(size), head(mdDegradedDump, size), "md reads what raidfive read");
    }
}
