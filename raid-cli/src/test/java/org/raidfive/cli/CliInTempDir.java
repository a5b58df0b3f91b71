package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;

/** What the in-process CLI tests share: member files in a temporary directory, argument lists, refusals. */
abstract class CliInTempDir {
    @TempDir
    Path dir;

    /** A file of the temporary directory, as a command-line argument. */
    String f(String name) {
        return dir.resolve(name).toString();
    }

    List<String> files(String... names) {
        List<String> out = new ArrayList<>();
        for (String n : names) {
            out.add(f(n));
        }
        return out;
    }

    static String[] args(List<String> head, List<String> members) {
        List<String> all = new ArrayList<>(head);
        all.addAll(members);
        return all.toArray(new String[0]);
    }

    static void ok(Cli.Result r) {
        assertEquals(0, r.exit(), r.all());
    }

    /** A refusal: the exit code, one line on stderr naming the problem, no stack trace. */
    static void assertRefused(Cli.Result r, int exit, String verb, String phrase) {
        assertEquals(exit, r.exit(), r.all());
        List<String> lines = r.errLines();
        assertEquals(1, lines.size(), "one line on stderr:\n" + r.all());
        assertTrue(lines.get(0).startsWith(verb.isEmpty() ? "raid: " : "raid " + verb + ": "), r.all());
        assertTrue(lines.get(0).contains(phrase), "expected '" + phrase + "' in: " + lines.get(0));
        assertFalse(r.err().contains("Exception"), r.all());
    }
}
