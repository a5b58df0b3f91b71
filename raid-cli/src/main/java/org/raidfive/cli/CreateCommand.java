package org.raidfive.cli;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.raidfive.array.ArraySpec;
import org.raidfive.array.ArrayStatus;
import org.raidfive.array.ConsistencyPolicy;
import org.raidfive.array.Raid5Array;
import org.raidfive.array.SyncProgress;
import org.raidfive.bench.Sizes;
import org.raidfive.disk.MemberDisk;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;
import org.raidfive.md.DataOffset;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code raid create}: new member files (sparse, all zeros, so parity already holds and no initial
 * resync is needed) or, with {@code --force}, files that already hold data (then the initial resync
 * runs in the foreground). NBD exports ({@code nbd://...}) are members as they are, at their size:
 * they cannot be created, so {@code --size} is refused with them, and parity is computed by the
 * initial resync unless {@code --assume-clean}.
 */
@Command(
        header = "Create an array on member files.",
        name = "create",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Create a RAID-5 array on the MEMBER files, writing an md v1.2 superblock to each.",
            "Absent files are created sparse with --size bytes. A file that already holds data (an md "
                    + "superblock or any non-zero byte in its first 64 KiB) is refused unless --force; then parity is "
                    + "computed by an initial resync in the foreground.",
            "A MEMBER may be an NBD export (nbd://HOST[:PORT]/EXPORT or nbd+unix:///EXPORT?socket=PATH): it is used "
                    + "at its size (no --size), and the initial resync computes parity unless --assume-clean.",
            "The word missing in place of a MEMBER leaves that slot empty, as mdadm does: the array starts degraded "
                    + "(no resync: there is nothing to compare parity with) until a spare is added and rebuilt; a spare "
                    + "given with --spare is rebuilt at once. (A file named missing is ./missing.)"
        })
final class CreateCommand extends Verb {
    @Option(
            names = "--chunk",
            paramLabel = "SIZE",
            defaultValue = "512K",
            converter = SizeConverter.class,
            description = "Chunk size: a power of two from 4K to 1G (default: ${DEFAULT-VALUE}).")
    long chunk;

    @Option(
            names = "--layout",
            paramLabel = "NAME",
            defaultValue = "left-symmetric",
            description =
                    "Parity layout, as mdadm names it: left-asymmetric (la), right-asymmetric (ra), "
                            + "left-symmetric (ls), right-symmetric (rs), parity-first, parity-last (default: ${DEFAULT-VALUE}).")
    String layout;

    @Option(
            names = "--size",
            paramLabel = "SIZE",
            converter = SizeConverter.class,
            description = "Size of each member file to create when absent (sparse), e.g. 64M or 1G.")
    Long size;

    @Option(names = "--name", paramLabel = "NAME", description = "Array name (md's set_name, at most 32 bytes).")
    String arrayName;

    @Option(names = "--spare", paramLabel = "FILE", description = "A hot spare (repeatable); created like the members.")
    List<String> spares = new ArrayList<>();

    @Option(names = "--force", description = "Overwrite files that already hold data (the initial resync then runs).")
    boolean force;

    @Option(
            names = "--sparse",
            description = "Create (or extend) member files sparse even when their file systems "
                    + "could not hold them written in full: writes then fail with ENOSPC once a file system fills.")
    boolean sparse;

    @Option(
            names = "--assume-clean",
            description = "Skip the initial resync even on reused files: only right when "
                    + "parity already matches (e.g. the files are all zeros).")
    boolean assumeClean;

    @Option(
            names = "--consistency-policy",
            paramLabel = "POLICY",
            converter = PolicyConverter.class,
            description = "How parity survives a crash, as mdadm names it: resync (a dirty array resyncs; dirty and "
                    + "degraded needs --force), bitmap (md's internal write-intent bitmap: a dirty array resyncs only "
                    + "the chunks written, a returning member recovers only those) or ppl (md's partial parity log: "
                    + "no write hole). Default as mdadm 4.2: bitmap when each member holds more than 100 GiB, else "
                    + "resync.")
    ConsistencyPolicy policy;

    @Option(
            names = "--bitmap",
            paramLabel = "internal|none",
            description = "mdadm's spelling: internal is --consistency-policy bitmap, none is resync.")
    String bitmap;

    @Option(
            names = "--bitmap-chunk",
            paramLabel = "SIZE",
            converter = SizeConverter.class,
            description = "Member data per bitmap bit (a power of two, at least what the bitmap's room allows; "
                    + "mdadm's default: 64M or more).")
    Long bitmapChunk;

    @Parameters(
            paramLabel = "MEMBER",
            arity = "1..*",
            description = "Member files, in slot order; missing for an " + "empty slot.")
    List<String> members;

    /** mdadm's word for an empty slot in {@code --create}. */
    static final String MISSING = "missing";

    @Override
    public Integer call() throws Exception {
        if (bitmap != null) {
            ConsistencyPolicy asked = GrowCommand.bitmapPolicy(bitmap);
            if (policy != null && policy != asked) {
                throw CliException.usage(
                        "--bitmap " + bitmap + " contradicts --consistency-policy " + policy.mdadmName());
            }
            policy = asked;
        }
        if (bitmapChunk != null && policy != ConsistencyPolicy.BITMAP) {
            throw CliException.usage("--bitmap-chunk needs a bitmap (--bitmap internal)");
        }
        ArraySpec.Builder builder = ArraySpec.builder()
                .algorithm(Raid5Algorithm.parse(layout))
                .chunkSize(chunk)
                .consistencyPolicy(policy);
        try {
            builder.bitmapChunk(bitmapChunk == null ? 0 : bitmapChunk);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--bitmap-chunk: " + e.getMessage());
        }
        if (arrayName != null) {
            builder.name(arrayName);
        }
        if (members.size() < Raid5Layout.MIN_DISKS) {
            throw CliException.usage(
                    "RAID-5 needs at least " + Raid5Layout.MIN_DISKS + " members, got " + members.size());
        }
        List<String> present = new ArrayList<>();
        int missing = -1;
        for (int i = 0; i < members.size(); i++) {
            if (!members.get(i).equals(MISSING)) {
                present.add(members.get(i));
            } else if (missing >= 0) {
                throw CliException.usage("RAID-5 runs with at most one member missing: slots " + missing + " and " + i
                        + " are both missing");
            } else {
                missing = i;
            }
        }
        List<String> all = new ArrayList<>(present);
        all.addAll(spares);
        Members.checkDistinct(all);
        if (size != null) {
            for (String m : all) {
                if (Members.isNbd(m)) {
                    throw CliException.usage("--size creates and sizes member files, but " + m + " is an NBD export, "
                            + "whose size its server sets: leave out --size (every member must then exist)");
                }
            }
        }

        // Everything is checked before the first file is created or changed.
        List<String> absent = new ArrayList<>();
        boolean reusedData = false;
        long smallest = Long.MAX_VALUE;
        for (int i = 0; i < all.size(); i++) {
            String m = all.get(i);
            if (!Members.exists(m)) {
                if (size == null) {
                    throw CliException.usage(m + " does not exist; give --size to create the member files");
                }
                absent.add(m);
            } else {
                Members.checkExists(m);
                String data = Members.dataFound(m);
                if (data != null) {
                    if (!force) {
                        throw CliException.usage(data + "; use --force to overwrite it");
                    }
                    reusedData = true;
                }
            }
            if (i < present.size()) {
                long bytes = Members.exists(m) ? Math.max(Members.size(m), size == null ? 0 : size) : size;
                smallest = Math.min(smallest, bytes);
            }
        }
        if (size != null && !sparse) {
            checkFreeSpace(all, size);
        }
        if (smallest / 512 > 0) {
            long offset = DataOffset.forNewMember(smallest / 512, (int) (chunk / 512), policy == ConsistencyPolicy.PPL);
            if (smallest / 512 - offset < chunk / 512) {
                throw CliException.usage("members of " + smallest + " bytes are too small: data would start at sector "
                        + offset + ", leaving no whole " + Sizes.chunk((int) chunk) + " chunk");
            }
        } else {
            throw CliException.usage("members of " + smallest + " bytes are too small");
        }
        // Fresh sparse files read as zeros, so parity holds; any other file needs the initial resync.
        boolean clean = assumeClean || (!reusedData && absent.containsAll(present)) || missing >= 0;
        ArraySpec arraySpec = builder.assumeClean(clean).build();

        List<MemberDisk> disks = new ArrayList<>();
        List<MemberDisk> spareDisks = new ArrayList<>();
        boolean ok = false;
        try {
            for (int i = 0; i < all.size(); i++) {
                String m = all.get(i);
                MemberDisk d = size != null ? Members.createOrExtend(m, size) : Members.open(m);
                (i < present.size() ? disks : spareDisks).add(d);
            }
            if (missing >= 0) {
                disks.add(missing, null); // Raid5Array.create's empty slot
            }
            try (Raid5Array array = Raid5Array.create(arraySpec, disks, spareDisks)) {
                ok = true;
                ArrayStatus s = array.status();
                say("created " + s.name() + " (UUID " + s.uuid() + "): raid5 " + s.layout() + ", chunk "
                        + Sizes.chunk(s.chunkSize()) + ", " + s.raidDisks() + " members"
                        + (spareDisks.isEmpty() ? "" : " + " + spareDisks.size() + " spare") + ", "
                        + Sizes.human(s.arrayBytes()) + " (" + s.arrayBytes() + " bytes), consistency policy "
                        + array.consistencyPolicy().mdadmName());
                if (missing >= 0 && spareDisks.isEmpty()) {
                    say("slot " + missing + " is missing: the array runs degraded; add a member with raid add --spare "
                            + "FILE " + join(present) + " and rebuild it with raid rebuild");
                } else if (missing >= 0) {
                    say("slot " + missing + " is missing: rebuilding it onto " + spares.get(0));
                    followPass(
                            array,
                            "rebuild",
                            "the array exists, degraded; finish the rebuild with: raid rebuild " + join(all));
                } else if (!clean) {
                    say("computing parity (initial resync)");
                    followPass(
                            array,
                            "initial resync",
                            "the array exists; finish its initial resync with: raid rebuild " + join(all));
                } else {
                    say(
                            assumeClean
                                    ? "parity assumed clean (--assume-clean)"
                                    : "new sparse members read as zeros: parity already holds, no resync needed");
                }
            }
        } finally {
            MemberSet.closeQuietly(disks);
            MemberSet.closeQuietly(spareDisks);
            if (!ok) {
                for (String m : absent) {
                    deleteQuietly(m);
                }
            }
        }
        return ExitCode.OK;
    }

    /** Shows the pass create started until it ends; stopped or failed is an error naming {@code what}. */
    private void followPass(Raid5Array array, String what, String resumeHint) throws Exception {
        SyncProgress p;
        try (SigintGuard guard = SigintGuard.install(array, array, err(), "create", resumeHint)) {
            p = Progress.on(err()).follow(array, guard::stopped);
            if (guard.stopped()) {
                RebuildCommand.awaitShutdown();
            }
        }
        if (p != null && !p.complete()) {
            throw new CliException(
                    ExitCode.PROBLEM, what + " stopped: " + (p.error() == null ? "incomplete" : p.error()));
        }
    }

    /**
     * Refuses, naming the shortfall, member files that their file systems could not hold once
     * written in full: a sparse file takes no room now, but a full file system later fails writes on
     * several members at once (and with them the array).
     */
    static void checkFreeSpace(List<String> specs, long size) throws IOException {
        Map<FileStore, Long> need = new LinkedHashMap<>();
        Map<FileStore, List<String>> who = new HashMap<>();
        for (String m : specs) {
            if (Members.isNbd(m)) {
                continue;
            }
            Path p = Members.path(m).toAbsolutePath();
            long current = Files.exists(p) ? Files.size(p) : 0;
            if (Files.exists(p) && !Files.isRegularFile(p)) {
                continue; // a block device has its size
            }
            FileStore store = Files.getFileStore(Files.exists(p) ? p : p.getParent());
            need.merge(store, Math.max(0, size - current), Long::sum);
            who.computeIfAbsent(store, k -> new ArrayList<>()).add(m);
        }
        for (var e : need.entrySet()) {
            long free = e.getKey().getUsableSpace();
            if (e.getValue() > free) {
                throw CliException.usage(String.join(", ", who.get(e.getKey())) + " would need up to "
                        + Sizes.human(e.getValue()) + " (" + e.getValue() + " bytes) once written in full, but their "
                        + "file system (" + e.getKey() + ") has " + Sizes.human(free) + " free: short by "
                        + Sizes.human(e.getValue() - free) + "; free some space, give a smaller --size, or --sparse to "
                        + "create them anyway (writes then fail when the file system fills)");
            }
        }
    }

    private static void deleteQuietly(String spec) {
        try {
            Files.deleteIfExists(Members.path(spec));
        } catch (IOException e) {
            // best effort: the file was ours and empty
        }
    }
}
