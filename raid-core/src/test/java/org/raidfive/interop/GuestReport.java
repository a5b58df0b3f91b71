package org.raidfive.interop;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a guest script printed, by case: the {@code CASE <case> key=value ...} lines merged into
 * one map per case (later keys win), and the {@code LOG <case> text} lines kept in order.
 */
final class GuestReport {
    private final MdVm.Boot boot;
    private final Map<String, Map<String, String>> results = new LinkedHashMap<>();
    private final Map<String, List<String>> logs = new LinkedHashMap<>();

    private GuestReport(MdVm.Boot boot) {
        this.boot = boot;
    }

    static GuestReport parse(MdVm.Boot boot) {
        GuestReport r = new GuestReport(boot);
        for (String line : boot.lines()) {
            if (line.startsWith("CASE ")) {
                String[] words = line.substring(5).trim().split("\\s+");
                Map<String, String> m = r.results.computeIfAbsent(words[0], k -> new LinkedHashMap<>());
                for (int i = 1; i < words.length; i++) {
                    int eq = words[i].indexOf('=');
                    if (eq > 0) {
                        m.put(words[i].substring(0, eq), words[i].substring(eq + 1));
                    }
                }
            } else if (line.startsWith("LOG ")) {
                String rest = line.substring(4);
                int sp = rest.indexOf(' ');
                String c = sp < 0 ? rest : rest.substring(0, sp);
                r.logs.computeIfAbsent(c, k -> new ArrayList<>()).add(sp < 0 ? "" : rest.substring(sp + 1));
            }
        }
        return r;
    }

    MdVm.Boot boot() {
        return boot;
    }

    boolean has(String c) {
        return results.containsKey(c);
    }

    /** The merged results of case {@code c}; fails, showing the boot, when the guest printed none. */
    Map<String, String> result(String c) {
        Map<String, String> m = results.get(c);
        if (m == null) {
            throw new AssertionError("the guest printed no result for case " + c + "\n" + boot.describe()
                    + "\n--- guest output\n" + String.join("\n", boot.lines()));
        }
        return m;
    }

    List<String> log(String c) {
        return logs.getOrDefault(c, List.of());
    }

    /** Case {@code c} for an assertion message: its results and what mdadm and md said. */
    String describe(String c) {
        return "case " + c + " (boot " + boot.name() + ", console " + boot.log() + ")\n  results: " + results.get(c)
                + "\n  md said:\n    " + String.join("\n    ", log(c));
    }
}
