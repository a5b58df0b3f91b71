package org.raidfive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's library example is a whole program: this takes the first {@code java} block after
 * "## Using the library" as it stands, compiles it against raid-core alone (its classes and its runtime
 * dependencies, not the tests) and runs it in a fresh JVM, checking what the README says it prints.
 */
class ReadmeExampleTest {

    @Test
    void theReadmeExampleCompilesAndRunsAsItStands(@TempDir Path dir) throws Exception {
        String readme = Files.readString(repositoryRoot().resolve("README.md"));
        int section = readme.indexOf("## Using the library");
        assertTrue(section >= 0, "README has no 'Using the library' section");
        Matcher block = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(block.find(section), "no java block in 'Using the library'");
        String source = block.group(1);
        Matcher className = Pattern.compile("public class (\\w+)").matcher(source);
        assertTrue(className.find(), "the example declares no public class");
        Path file = dir.resolve(className.group(1) + ".java");
        Files.writeString(file, source);

        String classPath = libraryClassPath();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int compiled = javac.run(
                null, null, null, "-Xlint:all", "-Werror", "-cp", classPath, "-d", dir.toString(), file.toString());
        assertEquals(0, compiled, "the README example does not compile against raid-core");

        Process run = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        classPath + File.pathSeparator + dir,
                        className.group(1))
                .redirectErrorStream(true)
                .start();
        assertTrue(run.waitFor(120, TimeUnit.SECONDS), "the example did not finish within 120 s");
        String output = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, run.exitValue(), "the example failed:\n" + output);
        for (String line : List.of(
                "degraded read matches: true", "rebuilt, degraded: false", "check found 0 mismatched sectors")) {
            assertTrue(output.contains(line), "the example did not print '" + line + "':\n" + output);
            assertTrue(readme.contains(line), "the README no longer says the example prints '" + line + "'");
        }
    }

    /** raid-core's classes and its runtime dependencies: the test class path without test-only entries. */
    private static String libraryClassPath() {
        String full = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        StringBuilder cp = new StringBuilder();
        for (String entry : full.split(File.pathSeparator)) {
            boolean library = entry.endsWith(File.separator + "classes") && !entry.endsWith("test-classes")
                    || entry.contains("jctools-core")
                    || entry.contains("slf4j-api")
                    || entry.contains("jna-")
                    || entry.contains("netty-");
            if (library) {
                cp.append(cp.length() == 0 ? "" : File.pathSeparator).append(entry);
            }
        }
        return cp.toString();
    }

    private static Path repositoryRoot() throws IOException {
        Path dir = Path.of(System.getProperty("basedir", System.getProperty("user.dir")))
                .toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.exists(p.resolve("README.md")) && Files.exists(p.resolve("raid-core"))) {
                return p;
            }
        }
        throw new IOException("no repository root above " + dir);
    }
}
