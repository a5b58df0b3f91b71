package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@link OwnedCellsJcstress} with jcstress in a JVM of its own (jcstress forks its own test
 * JVMs), bounded in time ({@code -m quick}; {@code -Draid.jcstress.mode=default} for a longer run),
 * and fails on any forbidden outcome or error; prints each test's observed outcomes.
 */
class OwnedCellsJcstressTest {
    @Test
    void noForbiddenOutcomes(@TempDir Path dir) throws Exception {
        assumeTrue(Membarrier.available(), () -> "membarrier unavailable: " + Membarrier.unavailableReason());
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String mode = System.getProperty("raid.jcstress.mode", "quick");
        Path log = dir.resolve("jcstress.log");
        // One JVM mode (-jvmArgs), SLF4J's notice off its stderr (jcstress counts stderr as an error),
        // and small strides: each state holds a counter with one 128-byte cell per thread slot.
        Process p = new ProcessBuilder(
                        java,
                        "-cp",
                        cp,
                        "org.openjdk.jcstress.Main",
                        "-t",
                        OwnedCellsJcstress.class.getName().replace(".", "\\.") + ".*",
                        "-m",
                        mode,
                        "-v",
                        "-jvmArgs",
                        "-Dslf4j.internal.verbosity=ERROR -Xmx1g",
                        "-hs",
                        "1024",
                        "-strideSize",
                        "16",
                        "-strideCount",
                        "4",
                        "-r",
                        dir.resolve("results").toString())
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        boolean ended = p.waitFor(10, TimeUnit.MINUTES);
        if (!ended) {
            p.destroyForcibly();
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        lines.stream()
                .filter(l -> l.contains("OwnedCellsJcstress")
                        || l.matches("\\s+\\d.*(ACCEPTABLE|FORBIDDEN).*")
                        || l.contains("tests:"))
                .forEach(System.out::println);
        assertTrue(ended, "jcstress did not finish within 10 minutes:\n" + tail);
        assertEquals(0, p.exitValue(), "jcstress failed:\n" + tail);
        assertTrue(lines.stream().anyMatch(l -> l.contains("Failed tests: No matches.")), tail);
        assertTrue(lines.stream().anyMatch(l -> l.contains("Error tests: No matches.")), tail);
        assertTrue(
                lines.stream().anyMatch(l -> l.contains("OwnedCellsJcstress.TryGetLiveAgainstKill")),
                "no test ran:\n" + tail);
    }
}
