package org.raidfive.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The choice of cells is made once per JVM, at start: each case runs in a fresh JVM ({@link #main})
 * that reports what it chose, why, and whether a striped counter, a reference and the semaphore
 * count right on it (a quiesce-style switch after four threads' gets and puts).
 */
class MembarrierChoiceTest {
    @Test
    void linuxWithMembarrierTakesOwnedCells() throws Exception {
        assumeTrue(Membarrier.available(), () -> "membarrier unavailable here: " + Membarrier.unavailableReason());
        List<String> out = runJvm();
        assertEquals("available=true", out.get(0), String.join("\n", out));
        assertEquals("owned=true", out.get(1), String.join("\n", out));
        assertEquals("count=0 held=4000", out.get(2), String.join("\n", out));
        assertEquals("cells=owned cells, membarrier(2)", out.get(4), String.join("\n", out));
    }

    @Test
    void turnedOffItFallsBackToSharedCellsAndSaysWhy() throws Exception {
        List<String> out = runJvm("-D" + Membarrier.PROPERTY + "=false");
        assertEquals("available=false", out.get(0), String.join("\n", out));
        assertEquals("owned=false", out.get(1), String.join("\n", out));
        assertEquals("count=0 held=4000", out.get(2), String.join("\n", out));
        assertTrue(out.get(3).contains("turned off by -D" + Membarrier.PROPERTY + "=false"), out.get(3));
        assertTrue(out.get(4).startsWith("cells=shared cells: turned off by -D" + Membarrier.PROPERTY), out.get(4));
    }

    @Test
    void syscallNumbersAreLinuxX8664AndArm64Only() {
        assertEquals(324, Membarrier.syscallNumber("Linux", "amd64"));
        assertEquals(283, Membarrier.syscallNumber("Linux", "aarch64"));
        assertEquals(-1, Membarrier.syscallNumber("Mac OS X", "aarch64"));
        assertEquals(-1, Membarrier.syscallNumber("Linux", "riscv64"));
    }

    private static List<String> runJvm(String... flags) throws Exception {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(List.of(flags));
        cmd.addAll(List.of("-cp", cp, MembarrierChoiceTest.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), text);
        List<String> lines = new ArrayList<>();
        for (String l : text.split("\n")) {
            if (!l.startsWith("SLF4J")) {
                lines.add(l);
            }
        }
        return lines;
    }

    /** The child: what was chosen, and four threads counting through it. */
    public static void main(String[] args) throws Exception {
        System.out.println("available=" + Membarrier.available());
        PercpuRef c = PercpuRef.inflightCounter(CounterMode.PERCPU);
        PercpuRwSemaphore sem = new PercpuRwSemaphore();
        System.out.println("owned=" + (c.ownedCells() && sem.ownedCells()));
        PercpuRef held = PercpuRef.inflightCounter(CounterMode.PERCPU);
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                for (int k = 0; k < 1000; k++) {
                    sem.readLock();
                    c.get();
                    held.get();
                    c.put();
                    sem.readUnlock();
                }
            });
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        sem.writeLock();
        c.switchToAtomicSync();
        held.switchToAtomicSync();
        System.out.println("count=" + c.count() + " held=" + held.count());
        sem.writeUnlock();
        System.out.println("reason=" + Membarrier.unavailableReason());
        System.out.println("cells=" + CounterMode.PERCPU.cells());
    }
}
