package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Members that are block devices (loop devices over image files), where the file system reports a
 * size of 0: the CLI must take the device's real size. Needs root and a free loop device; skipped
 * otherwise.
 */
@Timeout(180)
class BlockDeviceIT {
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> MDADM = List.of("/usr/sbin/mdadm", "/sbin/mdadm", "/usr/bin/mdadm");

    @TempDir
    Path dir;

    private final List<String> loops = new ArrayList<>();

    @AfterEach
    void detach() throws Exception {
        for (String loop : loops) {
            Tools.run(dir, TOOL_TIMEOUT, List.of("losetup", "-d", loop));
        }
    }

    private String attach(String image, long bytes) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve(image).toFile(), "rw")) {
            f.setLength(bytes);
        }
        Tools.Result r = Tools.run(
                dir,
                TOOL_TIMEOUT,
                List.of("losetup", "-f", "--show", dir.resolve(image).toString()));
        Assumptions.assumeTrue(r.exit() == 0, "no loop device here (root and /dev/loop-control needed): " + r.output());
        String loop = r.output().trim();
        loops.add(loop);
        return loop;
    }

    @Test
    void anArrayOnLoopDevicesIsCreatedWithoutASizeWrittenReadAndExaminedAsMdadmDoes() throws Exception {
        Tools.assumeInstalled("losetup", "mount");
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            members.add(attach("dev" + i + ".img", 40L << 20));
        }
        List<String> create = new ArrayList<>(List.of("create", "--chunk", "64K"));
        create.addAll(members);
        RaidLauncher.Result created = RaidLauncher.run(dir, create.toArray(new String[0]));
        assertEquals(0, created.exit(), created.all());

        byte[] data = MemberFiles.random(1 << 20, 11);
        List<String> write = new ArrayList<>(List.of("write", "--offset", "65536"));
        write.addAll(members);
        RaidLauncher.Result wrote = RaidLauncher.run(dir, data, write.toArray(new String[0]));
        assertEquals(0, wrote.exit(), wrote.all());
        List<String> read =
                new ArrayList<>(List.of("read", "--offset", "65536", "--length", Integer.toString(data.length)));
        read.addAll(List.of(members.get(2), members.get(0), members.get(1)));
        RaidLauncher.Result back = RaidLauncher.run(dir, read.toArray(new String[0]));
        assertEquals(0, back.exit(), back.all());
        assertArrayEquals(data, back.stdout());

        // The device's size, not the file system's 0: Avail Dev Size and Unused Space as mdadm prints them.
        RaidLauncher.Result examined = RaidLauncher.run(dir, "examine", members.get(0));
        assertEquals(0, examined.exit(), examined.all());
        Map<String, String> ours = MdadmCompatIT.fields(examined.out());
        assertTrue(ours.containsKey("Unused Space"), examined.out());
        long dataOffset = Long.parseLong(ours.get("Data Offset").replace(" sectors", ""));
        assertTrue(
                ours.get("Avail Dev Size").startsWith(((40L << 20) / 512 - dataOffset) + " sectors"),
                examined.out()); // the whole 40 MiB device after the data offset
        String mdadmPath = MDADM.stream()
                .filter(p -> Files.isExecutable(Path.of(p)))
                .findFirst()
                .orElse(null);
        if (mdadmPath != null) {
            Tools.Result mdadm = Tools.run(dir, TOOL_TIMEOUT, List.of(mdadmPath, "--examine", members.get(0)));
            assertEquals(0, mdadm.exit(), mdadm.output());
            assertEquals(
                    MdadmCompatIT.fields(mdadm.output()),
                    ours,
                    "mdadm:\n" + mdadm.output() + "\nraid:\n" + examined.out());
        }
    }

    /**
     * md's exclusive open: while {@code raid serve} holds loop devices, neither another node for the
     * same device ({@code mknod}) nor {@code mkfs.ext4} gets them, and nothing is written to them.
     * On the old code (the lock followed the node's inode) the write through the alias went ahead.
     */
    @Test
    void aServedBlockDeviceIsRefusedThroughAnotherNodeAndToMkfs() throws Exception {
        Tools.assumeInstalled("losetup", "mount");
        Tools.assumeInstalled("mkfs.ext4", "e2fsprogs");
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            members.add(attach("ex" + i + ".img", 40L << 20));
        }
        List<String> create = new ArrayList<>(List.of("create", "--chunk", "64K", "--assume-clean"));
        create.addAll(members);
        RaidLauncher.Result created = RaidLauncher.run(dir, create.toArray(new String[0]));
        assertEquals(0, created.exit(), created.all());
        List<String> aliases = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            long rdev = ((Number) Files.getAttribute(Path.of(members.get(i)), "unix:rdev")).longValue();
            long major = ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
            long minor = (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
            Path alias = dir.resolve("alias" + i);
            Tools.Result made = Tools.run(
                    dir,
                    TOOL_TIMEOUT,
                    List.of("mknod", alias.toString(), "b", Long.toString(major), Long.toString(minor)));
            Assumptions.assumeTrue(made.exit() == 0, "mknod: " + made.output());
            aliases.add(alias.toString());
        }
        try (Served served = Served.start(dir, with(List.of("--port", "0"), members))) {
            List<byte[]> before = images(3);
            List<String> write = new ArrayList<>(List.of("write", "--offset", "0"));
            write.addAll(aliases); // the same devices through other nodes
            RaidLauncher.Result wrote = RaidLauncher.run(dir, new byte[4096], write.toArray(new String[0]));
            assertTrue(wrote.exit() != 0, wrote.all());
            assertTrue(wrote.stderr().contains("in use") && wrote.stderr().contains("raid serve"), wrote.stderr());
            assertEquals(1, wrote.stderr().strip().lines().count(), wrote.stderr());
            Tools.Result mkfs = Tools.run(dir, TOOL_TIMEOUT, List.of("mkfs.ext4", "-F", "-q", members.get(1)));
            assertTrue(mkfs.exit() != 0, "mkfs.ext4 must be refused: " + mkfs.output());
            Tools.Result mkfsAlias = Tools.run(dir, TOOL_TIMEOUT, List.of("mkfs.ext4", "-F", "-q", aliases.get(2)));
            assertTrue(mkfsAlias.exit() != 0, "mkfs.ext4 through the alias must be refused: " + mkfsAlias.output());
            List<byte[]> after = images(3);
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(before.get(i), after.get(i), "ex" + i + ".img changed under refused commands");
            }
        }
        // once the server is gone, the device is free again
        RaidLauncher.Result examined = RaidLauncher.run(dir, "detail", aliases.get(0), aliases.get(1), aliases.get(2));
        assertEquals(0, examined.exit(), examined.all());
    }

    private List<byte[]> images(int n) throws Exception {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Files.readAllBytes(dir.resolve("ex" + i + ".img")));
        }
        return out;
    }

    private static String[] with(List<String> first, List<String> then) {
        List<String> all = new ArrayList<>(first);
        all.addAll(then);
        return all.toArray(new String[0]);
    }
}
