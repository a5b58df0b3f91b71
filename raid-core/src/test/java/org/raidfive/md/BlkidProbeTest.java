package org.raidfive.md;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second, independent reader: util-linux's libblkid (what udev uses to spot
 * md members). It reads set_uuid, device_uuid and set_name at their offsets.
 * (blkid 2.38's low-level probe does not reject a bad checksum, so mdadm
 * remains the checksum oracle.)
 */
class BlkidProbeTest {
    @TempDir
    Path dir;

    @Test
    void blkidRecognisesOurMemberAsALinuxRaidMember() throws IOException, InterruptedException {
        final Path blkid = Paths.get("/usr/sbin/blkid");
        final Path sbin = Files.isExecutable(blkid) ? blkid : Paths.get("/sbin/blkid");
        Assumptions.assumeTrue(Files.isExecutable(sbin), "blkid (util-linux) is not installed; skipping");

        final Path file = Mdadm.writeMember(dir.resolve("m2.img"), Samples.MEMBER_BYTES, Samples.member(2));
        final Process p = new ProcessBuilder(sbin.toString(), "-p", "-o", "export", file.toString())
                .redirectErrorStream(true)
                .start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "blkid hung");
        assertEquals(0, p.exitValue(), out);
        final Map<String, String> f = new LinkedHashMap<>();
        for (final String line : out.split("\n")) {
            final int eq = line.indexOf('=');
            if (eq > 0) {
                f.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        assertEquals("linux_raid_member", f.get("TYPE"), out);
        assertEquals("1.2", f.get("VERSION"), out);
        assertEquals("rf-testhost:r5", f.get("LABEL"), out);
        assertEquals("0df5eb39-41be-fa48-ee45-b56f52c10d17", f.get("UUID"), out);
        assertArrayEquals(Samples.deviceUuid(2), MdUuid.parse(f.get("UUID_SUB")), out);
    }
}
