package org.raidfive.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What the numbers were measured on: CPU model, cores, memory, JDK, and the load at the start. */
public record Machine(String cpuModel, int cores, long memoryBytes, String jdk, String loadAverage) {

    public static Machine here() {
        return new Machine(
                readCpuModel(),
                Runtime.getRuntime().availableProcessors(),
                readMemoryBytes(),
                System.getProperty("java.vm.name") + " " + Runtime.version(),
                readLoadAverage());
    }

    private static String readCpuModel() {
        for (String line : lines("/proc/cpuinfo")) {
            if (line.startsWith("model name")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return System.getProperty("os.arch");
    }

    private static long readMemoryBytes() {
        for (String line : lines("/proc/meminfo")) {
            if (line.startsWith("MemTotal:")) {
                String[] f = line.trim().split("\\s+");
                return Long.parseLong(f[1]) * 1024;
            }
        }
        return Runtime.getRuntime().maxMemory();
    }

    /** The 1, 5 and 15 minute load averages (others compiling on a shared machine show here). */
    public static String readLoadAverage() {
        List<String> l = lines("/proc/loadavg");
        if (l.isEmpty()) {
            return String.format(
                    "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
        String[] f = l.get(0).split("\\s+");
        return f[0] + " " + f[1] + " " + f[2];
    }

    private static List<String> lines(String path) {
        try {
            return Files.readAllLines(Path.of(path));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
