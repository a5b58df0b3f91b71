package org.raidfive.interop;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs a suite's boots, two at a time (each keeps a host core busy: on a 2-core CI machine two
 * side by side take about as long as one), and maps every case to the report of the boot that ran
 * it. A boot that md-vm could not run, or that timed out, fails the suite with its last console
 * lines.
 */
final class BootRunner {
    static final int PARALLEL_BOOTS = Integer.getInteger("raidfive.interop.parallel", 2);

    private BootRunner() {}

    static Map<String, GuestReport> run(
            MdVm vm,
            List<GuestScript> scripts,
            boolean snapshot,
            Duration timeout,
            Path dir,
            Collection<String> expectedCases)
            throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(PARALLEL_BOOTS, scripts.size())));
        try {
            List<Future<MdVm.Boot>> futures = new ArrayList<>();
            for (GuestScript s : scripts) {
                futures.add(pool.submit(() -> vm.boot(s.name(), s.text(), s.images(), snapshot, timeout, dir)));
            }
            Map<String, GuestReport> byCase = new LinkedHashMap<>();
            for (Future<MdVm.Boot> f : futures) {
                MdVm.Boot boot;
                try {
                    boot = f.get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Error err) {
                        throw err;
                    }
                    throw new AssertionError("md-vm boot failed", e.getCause());
                }
                System.out.printf(
                        "md-vm %s: %d images, exit %d, %d s%n",
                        boot.name(),
                        scripts.stream()
                                .filter(s -> s.name().equals(boot.name()))
                                .findFirst()
                                .orElseThrow()
                                .images()
                                .size(),
                        boot.exitCode(),
                        boot.elapsed().toSeconds());
                if (boot.exitCode() != 0) {
                    throw new AssertionError("the guest script did not run to its end: " + boot.describe()
                            + "\n--- guest output\n" + String.join("\n", boot.lines()));
                }
                GuestReport report = GuestReport.parse(boot);
                for (String c : expectedCases) {
                    if (report.has(c)) {
                        byCase.put(c, report);
                    }
                }
            }
            for (String c : expectedCases) {
                if (!byCase.containsKey(c)) {
                    throw new AssertionError("no boot reported case " + c);
                }
            }
            return byCase;
        } finally {
            pool.shutdownNow();
        }
    }
}
