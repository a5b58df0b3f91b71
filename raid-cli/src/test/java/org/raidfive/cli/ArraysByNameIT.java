package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Arrays by name, through the real launcher: {@code assemble --scan} finds two arrays among other
 * files and prints ARRAY lines that, saved at the default config path, let every verb take
 * {@code --array NAME} (or the UUID) instead of the member list; fail and re-add then name just the
 * member. {@code examine --scan} and {@code detail --scan} print the lines mdadm prints. {@code raid
 * stop} ends a running serve found by its array or its socket. Bad names and mixed forms are one
 * line each, exit 2.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ArraysByNameIT {
    @TempDir
    Path dir;

    private RaidLauncher.Result raid(String... args) {
        return RaidLauncher.run(dir, args);
    }

    /** {@code raid ARGS} with the default config looked up under {@code dir/xdg}, not the user's. */
    private RaidLauncher.Result byName(byte[] stdin, String... args) {
        return RaidLauncher.run(
                dir, stdin, List.of("env", "XDG_CONFIG_HOME=" + dir.resolve("xdg"), "RAID_CONFIG="), args);
    }

    private RaidLauncher.Result byName(String... args) {
        return byName(null, args);
    }

    private static RaidLauncher.Result ok(RaidLauncher.Result r) {
        assertEquals(0, r.exit(), r.all());
        return r;
    }

    private static List<String> arrayLines(String out) {
        List<String> lines = new ArrayList<>();
        for (String l : out.split("\n")) {
            if (l.startsWith("ARRAY ")) {
                lines.add(l);
            }
        }
        return lines;
    }

    @Test
    void assembleScanWritesAConfigThatEveryVerbReadsByName() throws Exception {
        Files.createDirectories(dir.resolve("disks"));
        ok(raid("create", "--size", "16M", "--chunk", "64K", "--name", "it:vol0", "disks/a0", "disks/a1", "disks/a2"));
        ok(raid(
                "create",
                "--size",
                "16M",
                "--chunk",
                "64K",
                "--name",
                "it:vol1",
                "disks/b0",
                "disks/b1",
                "disks/b2",
                "disks/b3"));
        Files.write(dir.resolve("disks/junk"), MemberFiles.random(100_000, 3));

        RaidLauncher.Result scan = ok(raid("assemble", "--scan", "disks/*"));
        List<String> lines = arrayLines(scan.out());
        assertEquals(2, lines.size(), scan.all());
        assertTrue(
                lines.get(0).startsWith("ARRAY /dev/md/vol0  level=raid5 metadata=1.2 num-devices=3 UUID="),
                scan.out());
        String vol0Devices = dir.resolve("disks/a0") + "," + dir.resolve("disks/a1") + "," + dir.resolve("disks/a2");
        assertTrue(scan.out().contains("\n   devices=" + vol0Devices + "\n"), scan.out());
        String uuid0 = lines.get(0).replaceAll(".* UUID=(\\S+) .*", "$1");
        Path conf = dir.resolve("xdg/raidfive/raid.conf");
        Files.createDirectories(conf.getParent());
        Files.writeString(conf, "# made by raid assemble --scan\n" + scan.out());

        byte[] data = MemberFiles.random(1 << 20, 21);
        ok(byName(data, "write", "--array", "vol0", "--offset", "128K"));
        RaidLauncher.Result read = ok(byName("read", "--array", uuid0, "--offset", "128K", "--length", "1M"));
        assertArrayEquals(data, read.stdout(), "read by UUID what was written by name");
        RaidLauncher.Result detail = ok(byName("detail", "--array", "it:vol1"));
        assertTrue(detail.out().contains("Name : it:vol1"), detail.out());
        assertTrue(detail.out().contains("Raid Devices : 4"), detail.out());

        // The member named once: fail, then re-add, with the array by name.
        RaidLauncher.Result fail = ok(byName("fail", "--array", "vol0", "--member", "disks/a1"));
        assertTrue(fail.stderr().contains("raid detail --array vol0"), fail.all());
        RaidLauncher.Result degraded = byName("detail", "--array", "vol0");
        assertEquals(1, degraded.exit(), degraded.all());
        assertTrue(degraded.out().contains("faulty (stale)"), degraded.out());
        ok(byName("re-add", "--array", "vol0", "--member", "disks/a1"));
        ok(byName("detail", "--array", "vol0"));
        ok(byName("check", "--array", "vol0"));
        assertArrayEquals(
                data,
                ok(byName("read", "--array", "vol0", "--offset", "128K", "--length", "1M"))
                        .stdout());

        // mdadm's scan lines, from superblocks and from the config; and mdadm's own where it is installed.
        List<String> examined =
                arrayLines(ok(raid("examine", "--scan", "disks/a0", "disks/b2")).out());
        List<String> detailed = arrayLines(ok(byName("detail", "--scan")).out());
        assertEquals(new TreeSet<>(examined), new TreeSet<>(detailed));
        assertEquals(
                List.of(lines.get(0).replace("level=raid5 ", "").replace("num-devices=3 ", "")),
                arrayLines(ok(byName("detail", "--brief", "--array", "vol0")).out()));
        String mdadm = Tools.mdadm();
        if (mdadm != null) {
            Process p = new ProcessBuilder(mdadm, "--examine", "--scan", "disks/a0", "disks/b2")
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
            String theirs = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(new TreeSet<>(arrayLines(theirs)), new TreeSet<>(examined), theirs);
        }

        // Refusals: one line, exit 2.
        for (String[] bad : List.<String[]>of(
                new String[] {"detail", "--array", "nope"},
                new String[] {"detail", "--array", "vol0", "disks/a0"},
                new String[] {"detail"},
                new String[] {"detail", "--array", "vol0", "--config", "missing.conf"})) {
            RaidLauncher.Result r = byName(bad);
            assertEquals(2, r.exit(), r.all());
            assertEquals(1, r.messages().size(), r.all());
            assertFalse(r.stderr().contains("\tat "), r.all());
        }
        assertTrue(byName("detail", "--array", "nope").stderr().contains("has no such ARRAY (it names vol0, vol1)"));
    }

    @Test
    void stopEndsARunningServeFoundByItsArrayOrItsSocket() throws Exception {
        ok(raid("create", "--size", "16M", "--chunk", "64K", "--name", "it:served", "s0.img", "s1.img", "s2.img"));
        Files.writeString(dir.resolve("my.conf"), "DEVICE s*.img\nARRAY served\n  name=it:served\n");
        Path sock = dir.resolve("nbd.sock");
        for (boolean bySocket : new boolean[] {false, true}) {
            try (Served served =
                    Served.start(dir, "--array", "served", "--config", "my.conf", "--socket", sock.toString())) {
                RaidLauncher.Result stop = bySocket
                        ? raid("stop", "--socket", sock.toString())
                        : raid("stop", "--array", "served", "--config", "my.conf");
                assertEquals(0, stop.exit(), stop.all() + "\n--- serve\n" + served.stderr());
                assertTrue(
                        stop.stderr()
                                .contains("stopping pid " + served.process().pid()),
                        stop.all());
                assertTrue(served.process().waitFor(10, TimeUnit.SECONDS), "raid serve has exited");
                assertTrue(served.awaitLine("closed clean", 10), served.stderr());
            }
            RaidLauncher.Result detail = ok(raid("detail", "s0.img", "s1.img", "s2.img"));
            assertTrue(detail.out().contains("State : clean\n"), detail.out());
        }
        RaidLauncher.Result nothing = raid("stop", "s0.img", "s1.img", "s2.img");
        assertEquals(2, nothing.exit(), nothing.all());
        assertTrue(nothing.stderr().contains("nothing to stop"), nothing.all());
        RaidLauncher.Result noSocket = raid("stop", "--socket", sock.toString());
        assertEquals(2, noSocket.exit(), noSocket.all());
    }

    @Test
    void detailSaysRecoveryPendingUntilRebuildRunsIt() throws Exception {
        ok(raid("create", "--size", "16M", "--chunk", "64K", "p0.img", "p1.img", "p2.img"));
        ok(raid("fail", "--member", "p1.img", "p0.img", "p1.img", "p2.img"));
        ok(raid("add", "--spare", "p3.img", "p0.img", "p2.img"));
        RaidLauncher.Result pending = raid("detail", "p0.img", "p2.img", "p3.img");
        assertEquals(1, pending.exit(), pending.all());
        assertTrue(
                pending.out().contains("State : clean, degraded, recovering (PENDING) (run raid rebuild)\n"),
                pending.out());
        // only the State line says it: no member row claims a recovery that is not running
        assertEquals(1, pending.out().split("recovering", -1).length - 1, pending.out());
        ok(raid("rebuild", "p0.img", "p2.img", "p3.img"));
        RaidLauncher.Result done = ok(raid("detail", "p0.img", "p2.img", "p3.img"));
        assertTrue(done.out().contains("State : clean\n"), done.out());
    }
}
