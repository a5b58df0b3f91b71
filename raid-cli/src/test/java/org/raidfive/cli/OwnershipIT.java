package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Members are owned, across real processes: while {@code raid serve} holds an array every command
 * that reads or writes data or changes metadata is refused (exit 2, one line naming the holder's
 * pid), detail and examine still work and name the holder; after {@code kill -9} of the holder the
 * members are usable at once. Plus the other ways an operator loses data: a file system that fills
 * under two members (ulimit -f), brought back by {@code raid assemble --force}; a --socket that
 * names a member; create on a file system too small; a FIFO member.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OwnershipIT {
    @TempDir
    Path dir;

    private static final List<String> M = List.of("a.img", "b.img", "c.img", "d.img");

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    private RaidLauncher.Result ok(String... args) {
        RaidLauncher.Result r = RaidLauncher.run(dir, args);
        assertEquals(0, r.exit(), r.all());
        return r;
    }

    private void create() throws Exception {
        ok(with(List.of("create", "--size", "16M", "--chunk", "64K"), M));
        Files.write(dir.resolve("in.bin"), MemberFiles.random(1 << 20, 5));
        ok(with(List.of("write", "--offset", "0", "--input", "in.bin"), M));
    }

    @Test
    void aServedArrayRefusesOtherWritersAndItsKillFreesTheMembers() throws Exception {
        create();
        Served serve = Served.start(dir, with(List.of("--port", "0"), M));
        long pid = serve.process().pid();
        try {
            for (String[] args : List.of(
                    with(List.of("write", "--offset", "0", "--input", "in.bin"), M),
                    with(List.of("fail", "--member", "c.img"), M),
                    with(List.of("read", "--offset", "0", "--length", "4K", "--output", "x.bin"), M),
                    with(List.of("serve", "--port", "0"), M),
                    with(List.of("rebuild"), M))) {
                RaidLauncher.Result r = RaidLauncher.run(dir, args);
                assertEquals(2, r.exit(), r.all());
                assertEquals(1, r.messages().size(), r.all());
                String line = r.messages().get(0);
                assertTrue(line.contains("is in use by another process (pid " + pid + ": raid serve"), r.all());
                assertTrue(line.contains("raidfive:0"), "names the array: " + r.all());
                assertFalse(r.stderr().contains("\tat "), r.all());
            }
            byte[] before = Files.readAllBytes(dir.resolve("b.img"));
            RaidLauncher.Result zero = RaidLauncher.run(dir, "zero-superblock", "d.img", "b.img");
            assertEquals(2, zero.exit(), zero.all());
            assertEquals(1, zero.messages().size(), zero.all());
            assertTrue(zero.messages().get(0).contains("is in use by another process (pid " + pid), zero.all());
            assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(dir.resolve("b.img"))), "nothing written");
            RaidLauncher.Result detail = RaidLauncher.run(dir, with(List.of("detail"), M));
            assertEquals(0, detail.exit(), detail.all());
            assertTrue(detail.out().contains("Held By : another process (pid " + pid + ": raid serve"), detail.out());
            RaidLauncher.Result examine = ok("examine", "a.img");
            assertTrue(examine.stderr().contains("a.img is in use by another process (pid " + pid), examine.all());
            assertTrue(examine.out().contains("Array UUID"), examine.out());
        } finally {
            serve.process().destroyForcibly(); // SIGKILL: no clean close, the kernel drops the locks
            assertTrue(serve.process().waitFor(30, TimeUnit.SECONDS));
        }
        ok(with(List.of("write", "--offset", "1M", "--input", "in.bin"), M)); // at once
        RaidLauncher.Result check = ok(with(List.of("check"), M));
        assertTrue(check.out().contains("0 mismatched sectors"), check.all());
    }

    @Test
    void twoMembersThatHitAFileSizeLimitAreBroughtBackByForcedAssembly() throws Exception {
        create();
        // Members are sparse 16 MiB files; a 4 KiB write near the array's end lands ~15 MiB into two of
        // them. Under a 12 MiB file-size limit both writes fail with EFBIG: two members out, FAILED.
        Files.write(dir.resolve("late.bin"), MemberFiles.random(4096, 6));
        long size =
                LifecycleIT.jsonLong(ok(with(List.of("detail", "--json"), M)).out(), "arraySize");
        long at = size - 4096;
        RaidLauncher.Result limited = RaidLauncher.run(
                dir,
                null,
                List.of("bash", "-c", "ulimit -f " + (12 << 10) + "; exec \"$0\" \"$@\""),
                with(List.of("write", "--offset", Long.toString(at), "--input", "late.bin"), M));
        assertTrue(limited.exit() != 0, limited.all());
        RaidLauncher.Result failed = RaidLauncher.run(dir, with(List.of("detail"), M));
        assertEquals(2, failed.exit(), failed.all());
        Map<Path, String> before =
                MemberFiles.snapshot(M.stream().map(dir::resolve).toList());
        RaidLauncher.Result plain = RaidLauncher.run(dir, with(List.of("assemble"), M));
        assertEquals(2, plain.exit(), plain.all());
        assertTrue(plain.stderr().contains("--force") || plain.stderr().contains("force"), plain.all());
        MemberFiles.assertUnchanged(before, "refused assemble");
        RaidLauncher.Result forced = RaidLauncher.run(dir, with(List.of("assemble", "--force"), M));
        assertEquals(0, forced.exit(), forced.all());
        assertTrue(forced.stderr().contains("forcing event count in "), forced.all());
        assertTrue(forced.stderr().contains("has been started with 4 drives (out of 4)"), forced.all());
        ok(with(List.of("rebuild"), M)); // the resync the forced assembly asked for
        RaidLauncher.Result read =
                ok(with(List.of("read", "--offset", "0", "--length", "1M", "--output", "back.bin"), M));
        assertTrue(
                java.util.Arrays.equals(
                        Files.readAllBytes(dir.resolve("in.bin")), Files.readAllBytes(dir.resolve("back.bin"))),
                "every byte written before the fault reads back: " + read.all());
        assertTrue(ok(with(List.of("check"), M)).out().contains("0 mismatched sectors"));
        assertEquals(0, RaidLauncher.run(dir, with(List.of("detail"), M)).exit());
    }

    @Test
    void serveNeverReplacesWhatIsNotAStaleSocketAndRefusalsWriteNothing() throws Exception {
        create();
        Map<Path, String> before =
                MemberFiles.snapshot(M.stream().map(dir::resolve).toList());
        RaidLauncher.Result onMember = RaidLauncher.run(dir, with(List.of("serve", "--socket", "a.img"), M));
        assertEquals(2, onMember.exit(), onMember.all());
        assertTrue(onMember.messages().get(0).contains("a regular file"), onMember.all());
        RaidLauncher.Result badBind =
                RaidLauncher.run(dir, with(List.of("serve", "--bind", "192.0.2.1", "--insecure"), M));
        assertEquals(2, badBind.exit(), badBind.all());
        assertTrue(badBind.messages().get(0).contains("cannot listen"), badBind.all());
        RaidLauncher.Result empty = RaidLauncher.run(dir, new byte[0], with(List.of("write", "--offset", "0"), M));
        assertEquals(2, empty.exit(), empty.all());
        assertTrue(empty.messages().get(0).contains("empty"), empty.all());
        MemberFiles.assertUnchanged(before, "refused commands");
        try (Served live =
                Served.start(dir, "--backend", "memory", "--disks", "3", "--size", "8M", "--socket", "live.sock")) {
            RaidLauncher.Result second = RaidLauncher.run(dir, with(List.of("serve", "--socket", "live.sock"), M));
            assertEquals(2, second.exit(), second.all());
            assertTrue(second.messages().get(0).contains("already served"), second.all());
            assertTrue(live.process().isAlive());
        }
        MemberFiles.assertUnchanged(before, "refused commands");
    }

    @Test
    void createChecksFreeSpaceUnlessSparseAndAFifoIsRefusedAtOnce() throws Exception {
        long free = Files.getFileStore(dir).getUsableSpace();
        String huge = Long.toString((free / 3 + (1L << 30)) >> 20) + "M"; // 4 of them cannot be written in full
        RaidLauncher.Result refused = RaidLauncher.run(dir, with(List.of("create", "--size", huge), M));
        assertEquals(2, refused.exit(), refused.all());
        assertTrue(refused.messages().get(0).contains("short by"), refused.all());
        for (String m : M) {
            assertFalse(Files.exists(dir.resolve(m)), "nothing created");
        }
        ok(with(List.of("create", "--sparse", "--size", huge), M));
        for (String m : M) {
            Files.delete(dir.resolve(m));
        }
        assertEquals(
                0,
                new ProcessBuilder("mkfifo", dir.resolve("pipe").toString())
                        .start()
                        .waitFor());
        long start = System.nanoTime();
        RaidLauncher.Result fifo = RaidLauncher.run(dir, "examine", "pipe");
        assertEquals(2, fifo.exit(), fifo.all());
        assertTrue(fifo.messages().get(0).contains("FIFO"), fifo.all());
        RaidLauncher.Result detail = RaidLauncher.run(dir, "detail", "pipe", "b.img", "c.img");
        assertTrue(detail.exit() != 0 && detail.messages().get(0).contains("FIFO"), detail.all());
        assertTrue(System.nanoTime() - start < 60_000_000_000L, "no command blocks on a FIFO");
    }
}
