package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.layout.Raid5Algorithm;
import org.raidfive.layout.Raid5Layout;

/**
 * The operator's whole story through the real launcher, on member files: create, write random data,
 * read it back, fail a member, read degraded, add a spare, rebuild, scrub, corrupt parity on disk,
 * find it, repair it.
 */
@Timeout(300)
class LifecycleIT {
    @TempDir
    Path dir;

    private RaidLauncher.Result raid(String... args) {
        return RaidLauncher.run(dir, args);
    }

    private RaidLauncher.Result raid(byte[] stdin, String... args) {
        return RaidLauncher.run(dir, stdin, args);
    }

    private static RaidLauncher.Result ok(RaidLauncher.Result r) {
        assertEquals(0, r.exit(), r.all());
        return r;
    }

    private static String[] with(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    @Test
    void createWriteFailRebuildScrubRepair() throws Exception {
        List<String> m = List.of("a.img", "b.img", "c.img", "d.img");
        ok(raid(with(List.of("create", "--size", "32M", "--chunk", "128K", "--name", "it:life"), m)));

        byte[] data = MemberFiles.random(6 << 20, 42);
        String sha = MemberFiles.sha256(data);
        ok(raid(data, with(List.of("write", "--offset", "1M"), m)));
        RaidLauncher.Result read = ok(raid(with(
                List.of("read", "--offset", "1M", "--length", "6M"), List.of("d.img", "b.img", "a.img", "c.img"))));
        assertEquals(sha, MemberFiles.sha256(read.stdout()), "read back what was written (members in another order)");

        RaidLauncher.Result detail = ok(raid(with(List.of("detail"), m)));
        assertTrue(detail.out().contains("State : clean\n"), detail.out());
        assertTrue(detail.out().contains("Name : it:life"), detail.out());

        ok(raid(with(List.of("fail", "--member", "c.img"), m)));
        List<String> rest = List.of("a.img", "b.img", "d.img");
        RaidLauncher.Result degraded = raid(with(List.of("detail"), rest));
        assertEquals(1, degraded.exit(), degraded.all());
        assertTrue(degraded.out().contains("State : clean, degraded"), degraded.out());
        RaidLauncher.Result degradedRead = ok(raid(with(List.of("read", "--offset", "1M", "--length", "6M"), rest)));
        assertEquals(sha, MemberFiles.sha256(degradedRead.stdout()), "degraded read reconstructs the failed member");

        ok(raid(with(List.of("add", "--spare", "e.img"), rest)));
        List<String> now = List.of("a.img", "b.img", "d.img", "e.img");
        RaidLauncher.Result rebuild = ok(raid(with(List.of("rebuild"), now)));
        assertTrue(rebuild.stderr().contains("recover: 100.0%"), rebuild.all());
        ok(raid(with(List.of("detail"), now)));
        RaidLauncher.Result check = ok(raid(with(List.of("check"), now)));
        assertTrue(check.out().contains(": 0 mismatched sectors"), check.all());
        assertEquals(
                sha,
                MemberFiles.sha256(ok(raid(with(
                                List.of("read", "--offset", "1M", "--length", "6M"),
                                List.of("e.img", "a.img", "b.img"))))
                        .stdout()),
                "the rebuilt member holds the data");

        // Corrupt one parity byte of stripe 0 on disk: find the member in the parity slot and its data offset.
        RaidLauncher.Result exam = ok(raid("examine", "--json", "a.img"));
        long dataOffset = jsonLong(exam.out(), "dataOffsetSectors") * 512;
        long usedDev = jsonLong(exam.out(), "usedDevSectors") * 512;
        int chunk = (int) jsonLong(exam.out(), "chunkSizeKiB") * 1024;
        Raid5Layout layout = new Raid5Layout(Raid5Algorithm.parse(jsonString(exam.out(), "layout")), 4, chunk, usedDev);
        int paritySlot = layout.paritySlot(0);
        String parityMember = null;
        for (String f : now) {
            if (jsonString(ok(raid("examine", "--json", f)).out(), "deviceRole")
                    .equals("Active device " + paritySlot)) {
                parityMember = f;
            }
        }
        assertTrue(parityMember != null, "a member holds slot " + paritySlot);
        MemberFiles.flipByte(dir.resolve(parityMember), dataOffset + 1234);

        RaidLauncher.Result found = raid(with(List.of("check", "--json"), now));
        assertEquals(1, found.exit(), found.all());
        assertTrue(jsonLong(found.out(), "mismatchSectors") > 0, found.out());
        RaidLauncher.Result repair = ok(raid(with(List.of("repair"), now)));
        assertTrue(repair.out().contains(" 8 mismatched sectors"), repair.all());
        RaidLauncher.Result clean = ok(raid(with(List.of("check"), now)));
        assertTrue(clean.out().contains(": 0 mismatched sectors"), clean.all());
        byte[] after = ok(raid(with(List.of("read", "--offset", "1M", "--length", "6M"), now)))
                .stdout();
        assertArrayEquals(data, after);
    }

    static long jsonLong(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": (-?\\d+)").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return Long.parseLong(m.group(1));
    }

    static String jsonString(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": \"([^\"]*)\"").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return m.group(1);
    }
}
