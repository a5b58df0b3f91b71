package org.raidfive.array;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.FileDisk;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;
import org.raidfive.md.Superblock;

/**
 * An open array owns its members: a second array on the same storage is refused, in this process
 * and in another (a real subprocess), before it writes anything; once the holder closes, or is
 * killed with SIGKILL, the members are free at once. As a second line of defence, an array never
 * writes a superblock that would take a member's events backwards.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MemberOwnershipTest {
    private static final long MEMBER = 4L << 20;
    private static final AssembleOptions READ_ONLY =
            AssembleOptions.DEFAULT.withReadOnly(true).withStartSync(false);

    @TempDir
    Path dir;

    private List<Path> makeArray(String prefix, int n) throws IOException {
        List<Path> paths = new ArrayList<>();
        List<MemberDisk> disks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Path p = dir.resolve(prefix + i + ".img");
            paths.add(p);
            disks.add(FileDisk.createOrExtend(p, MEMBER, false));
        }
        try (Raid5Array array = Raid5Array.create(
                ArraySpec.builder()
                        .chunkSize(64 * 1024)
                        .assumeClean(true)
                        .name("own:0")
                        .build(),
                disks)) {
            array.write(0, ByteBuffer.wrap(new byte[8192]), 0, 8192);
        }
        return paths;
    }

    private static List<MemberDisk> open(List<Path> paths, boolean readOnly) throws IOException {
        List<MemberDisk> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(readOnly ? FileDisk.openReadOnly(p) : FileDisk.open(p));
        }
        return out;
    }

    /**
     * A member file's bytes, read through {@link FileDisk} (which shares this process's descriptor):
     * opening and closing a claimed file another way, e.g. {@code Files.readAllBytes}, would drop
     * this process's POSIX lock on it, the documented limit of the OS lock.
     */
    static byte[] bytesOf(Path p) throws IOException {
        try (FileDisk d = FileDisk.openReadOnly(p)) {
            byte[] b = new byte[(int) d.size()];
            d.read(0, ByteBuffer.wrap(b), 0, b.length);
            return b;
        }
    }

    private static List<byte[]> contents(List<Path> paths) throws IOException {
        List<byte[]> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(bytesOf(p));
        }
        return out;
    }

    private static void assertUnchanged(List<byte[]> before, List<Path> paths) throws IOException {
        for (int i = 0; i < paths.size(); i++) {
            assertArrayEquals(before.get(i), bytesOf(paths.get(i)), paths.get(i) + " was written");
        }
    }

    private static void closeAll(List<MemberDisk> disks) throws IOException {
        for (MemberDisk d : disks) {
            d.close();
        }
    }

    @Test
    void secondArrayInTheSameProcessIsRefusedAndWritesNothing() throws Exception {
        List<Path> paths = makeArray("a", 4);
        List<MemberDisk> first = open(paths, false);
        try (Raid5Array holder = Raid5Array.assemble(first, AssembleOptions.DEFAULT.withStartSync(false))) {
            List<byte[]> before = contents(paths);
            for (boolean readOnly : new boolean[] {false, true}) {
                List<MemberDisk> second = open(paths, readOnly);
                IOException e = assertThrows(
                        IOException.class,
                        () -> Raid5Array.assemble(
                                second,
                                AssembleOptions.DEFAULT.withReadOnly(readOnly).withStartSync(false)));
                assertTrue(e.getMessage().contains("in use") && e.getMessage().contains("own:0"), e.getMessage());
                closeAll(second); // closing the second opens must not drop the holder's OS locks
            }
            assertUnchanged(before, paths);
            assertEquals(0, holder.size() % 512);
            holder.write(0, ByteBuffer.wrap(new byte[4096]), 0, 4096); // the holder still works
            Process other = hold(paths, false);
            try {
                assertTrue(readLine(other).startsWith("FAILED"), "another process is still refused");
            } finally {
                other.destroyForcibly().waitFor();
            }
        }
        // Closed: free at once, for a writer.
        List<MemberDisk> again = open(paths, false);
        try (Raid5Array array = Raid5Array.assemble(again, AssembleOptions.DEFAULT.withStartSync(false))) {
            assertFalse(array.isDegraded());
        }
    }

    @Test
    void readOnlyArraysShareMembersButExcludeAWriter() throws Exception {
        List<Path> paths = makeArray("s", 3);
        try (Raid5Array r1 = Raid5Array.assemble(open(paths, true), READ_ONLY);
                Raid5Array r2 = Raid5Array.assemble(open(paths, true), READ_ONLY)) {
            List<MemberDisk> writer = open(paths, false);
            IOException e = assertThrows(IOException.class, () -> Raid5Array.assemble(writer));
            assertTrue(e.getMessage().contains("in use"), e.getMessage());
            closeAll(writer);
            assertEquals(r1.size(), r2.size());
        }
    }

    @Test
    void memoryMemberCannotJoinTwoArrays() throws Exception {
        List<MemoryDisk> disks = List.of(new MemoryDisk(MEMBER), new MemoryDisk(MEMBER), new MemoryDisk(MEMBER));
        try (Raid5Array a = Raid5Array.create(
                ArraySpec.builder().chunkSize(64 * 1024).assumeClean(true).build(), disks)) {
            IOException e = assertThrows(
                    IOException.class,
                    () -> Raid5Array.create(
                            ArraySpec.builder()
                                    .chunkSize(64 * 1024)
                                    .assumeClean(true)
                                    .build(),
                            List.of(disks.get(0), new MemoryDisk(MEMBER), new MemoryDisk(MEMBER))));
            assertTrue(e.getMessage().contains("in use"), e.getMessage());
            IOException spare = assertThrows(IOException.class, () -> a.addSpare(disks.get(1)));
            assertTrue(spare.getMessage().contains(disks.get(1).name()), spare.getMessage());
        }
    }

    @Test
    void anotherProcessHoldingTheArrayIsNamedAndItsKillFreesTheMembers() throws Exception {
        List<Path> paths = makeArray("p", 4);
        Process holder = hold(paths, false);
        try {
            String line = readLine(holder);
            assertTrue(line.startsWith("HOLDING "), line);
            long pid = Long.parseLong(line.substring(8).trim());
            List<byte[]> before = contents(paths);
            for (boolean readOnly : new boolean[] {false, true}) {
                List<MemberDisk> mine = open(paths, readOnly);
                IOException e = assertThrows(
                        IOException.class,
                        () -> Raid5Array.assemble(
                                mine,
                                AssembleOptions.DEFAULT.withReadOnly(readOnly).withStartSync(false)));
                assertTrue(
                        e.getMessage().contains("another process")
                                && e.getMessage().contains("pid " + pid),
                        e.getMessage());
                closeAll(mine);
            }
            assertUnchanged(before, paths);
        } finally {
            holder.destroyForcibly(); // SIGKILL: the kernel drops its locks
            assertTrue(holder.waitFor(30, TimeUnit.SECONDS));
        }
        List<MemberDisk> after = open(paths, false);
        try (Raid5Array array = Raid5Array.assemble(after, AssembleOptions.DEFAULT.withStartSync(false))) {
            assertFalse(array.isDegraded(), "usable at once after the holder was killed");
        }
    }

    @Test
    void readOnlyHolderInAnotherProcessLetsReadersInButNotWriters() throws Exception {
        List<Path> paths = makeArray("q", 3);
        Process holder = hold(paths, true);
        try {
            assertTrue(readLine(holder).startsWith("HOLDING "));
            try (Raid5Array reader = Raid5Array.assemble(open(paths, true), READ_ONLY)) {
                assertTrue(reader.isReadOnly());
            }
            List<MemberDisk> writer = open(paths, false);
            IOException e = assertThrows(IOException.class, () -> Raid5Array.assemble(writer));
            assertTrue(e.getMessage().contains("another process"), e.getMessage());
            closeAll(writer);
        } finally {
            holder.getOutputStream().close(); // a clean stop this time
            assertTrue(holder.waitFor(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aSuperblockWithNewerEventsOnDiskIsNeverOverwritten() throws Exception {
        List<Path> paths = makeArray("e", 3);
        List<MemberDisk> disks = open(paths, false);
        try (Raid5Array array = Raid5Array.assemble(disks, AssembleOptions.DEFAULT.withStartSync(false))) {
            // Someone bypasses ownership (another tool) and moves member 1's superblock ahead.
            long events = bumpEvents(paths.get(1), 1000);
            IOException e = assertThrows(IOException.class, () -> array.fail(disks.get(2)));
            assertTrue(array.isFailed(), "stopped rather than overwrite newer metadata: " + e.getMessage());
            assertEquals(events, readSuperblock(paths.get(1)).events(), "the newer superblock was kept");
        }
    }

    static Superblock readSuperblock(Path p) throws Exception {
        try (FileDisk d = FileDisk.openReadOnly(p)) {
            return SuperblockIo.read(d);
        }
    }

    /** Rewrites a member's superblock with {@code by} more events, raw, with a correct checksum. */
    static long bumpEvents(Path p, long by) throws Exception {
        Superblock sb = readSuperblock(p);
        sb.events(sb.events() + by);
        ByteBuffer buf = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        sb.encode(buf);
        buf.clear();
        try (FileChannel c = FileChannel.open(p, StandardOpenOption.WRITE)) {
            c.write(buf, Superblock.SUPERBLOCK_OFFSET);
        }
        return sb.events();
    }

    private static Process hold(List<Path> paths, boolean readOnly) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-cp",
                System.getProperty("java.class.path"),
                HolderMain.class.getName(),
                readOnly ? "ro" : "rw"));
        for (Path p : paths) {
            cmd.add(p.toString());
        }
        return new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    private static String readLine(Process p) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
        String line = in.readLine();
        return line == null ? "EOF" : line;
    }

    /** {@link ArrayHolder}, reporting a refusal as one line instead of a stack trace. */
    public static final class HolderMain {
        public static void main(String[] args) throws Exception {
            try {
                ArrayHolder.main(args);
            } catch (IOException e) {
                System.out.println("FAILED " + e.getMessage());
            }
        }
    }
}
