package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * ext4 as a user here reaches it: {@code raid serve} on a Unix socket in {@code dir}, nbdfuse
 * making the export a file, a loop device over that file, mounted on {@code dir/mnt}.
 */
final class Ext4Stack implements AutoCloseable {
    final Served served;
    final Process fuse;
    final Path dir;
    final Path fuseDir;
    final Path mnt;
    String loop;
    boolean mounted;
    /** raid serve's exit at a SIGTERM: 0, or 1 when the array is degraded. */
    int stopExit;

    /**
     * Serves {@code serveArgs} (options and members); {@code directIo} puts the loop device in direct
     * I/O mode, so that O_DIRECT writes reach the array at once instead of nbdfuse's page cache.
     */
    Ext4Stack(Path dir, List<String> serveArgs, boolean directIo) throws Exception {
        this.dir = dir;
        fuseDir = Files.createDirectories(dir.resolve("fuse"));
        mnt = Files.createDirectories(dir.resolve("mnt"));
        List<String> args =
                new ArrayList<>(List.of("--socket", dir.resolve("s.sock").toString()));
        args.addAll(serveArgs);
        served = Served.start(dir, args.toArray(new String[0]));
        fuse = Tools.start(dir, List.of("nbdfuse", fuseDir.toString(), served.uri()), dir.resolve("fuse.log"));
        Path file = fuseDir.resolve("nbd");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(file)) {
            assertTrue(
                    System.nanoTime() < deadline && fuse.isAlive(),
                    "nbdfuse did not come up:\n" + Files.readString(dir.resolve("fuse.log")));
            Thread.sleep(50);
        }
        List<String> losetup = new ArrayList<>(List.of("losetup", "-f", "--show"));
        if (directIo) {
            losetup.add("--direct-io=on");
        }
        losetup.add(file.toString());
        loop = Tools.runOk(dir, Duration.ofSeconds(30), losetup.toArray(new String[0]))
                .trim();
    }

    void mount() throws Exception {
        Tools.runOk(dir, Duration.ofSeconds(60), "mount", "-t", "ext4", loop, mnt.toString());
        mounted = true;
    }

    void umount() throws Exception {
        if (mounted) {
            Tools.runOk(dir, Duration.ofSeconds(120), "umount", mnt.toString());
            mounted = false;
        }
    }

    /** e2fsck -fn, which must find nothing; its output. */
    String fsck() throws Exception {
        Tools.Result r = Tools.run(dir, Duration.ofSeconds(120), List.of("e2fsck", "-fn", loop));
        assertEquals(0, r.exit(), "e2fsck -fn " + loop + ":\n" + r.output());
        return r.output();
    }

    /** Takes the stack down below the server (the server itself is stopped or killed by the caller). */
    void detach() throws Exception {
        if (mounted) {
            Tools.run(dir, Duration.ofSeconds(60), List.of("umount", "-l", mnt.toString()));
            mounted = false;
        }
        if (loop != null) {
            Tools.run(dir, Duration.ofSeconds(30), List.of("losetup", "-d", loop));
            loop = null;
        }
        Tools.run(dir, Duration.ofSeconds(30), List.of("fusermount3", "-u", "-z", fuseDir.toString()));
        fuse.destroy();
        fuse.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        try {
            detach();
        } finally {
            if (served.process().isAlive()) {
                assertEquals(stopExit, served.stop("TERM"), served.stderr());
            }
        }
    }
}
