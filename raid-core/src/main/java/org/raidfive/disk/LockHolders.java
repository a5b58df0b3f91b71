package org.raidfive.disk;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Who holds a file lock, from Linux's {@code /proc/locks} (which lists every POSIX lock with its
 * owner's pid and the file's device and inode), so that "in use" can say by whom. Best effort:
 * null where {@code /proc} is not there or does not tell.
 */
final class LockHolders {
    private static final int MAX_COMMAND = 120;

    private LockHolders() {}

    /** A lock holder: its pid and command line. */
    record Holder(long pid, String command) {
        @Override
        public String toString() {
            return "pid " + pid + (command.isEmpty() ? "" : ": " + command);
        }
    }

    static Holder find(Path file) {
        try {
            long dev = ((Number) Files.getAttribute(file, "unix:dev")).longValue();
            long ino = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
            // glibc's gnu_dev_major/minor; /proc/locks prints "MAJOR:MINOR:INODE", the first two in hex.
            long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
            long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
            String id = String.format("%02x:%02x:%d", major, minor, ino);
            for (String line : Files.readAllLines(Path.of("/proc/locks"), StandardCharsets.US_ASCII)) {
                String[] f = line.trim().split("\\s+");
                // "1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; waiters have "->" after the number.
                if (f.length >= 6 && !f[1].equals("->") && f[5].equals(id)) {
                    long pid = Long.parseLong(f[4]);
                    return new Holder(pid, command(pid));
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc, no unix attribute view, a format we do not know: say nothing about the holder
        }
        return null;
    }

    /** The holder's command line, with a Java launcher's {@code java ... -jar raid.jar} shown as {@code raid}. */
    static String command(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            List<String> args = new ArrayList<>();
            int start = 0;
            for (int i = 0; i < raw.length; i++) {
                if (raw[i] == 0) {
                    args.add(new String(raw, start, i - start, StandardCharsets.UTF_8));
                    start = i + 1;
                }
            }
            int jar = args.indexOf("-jar");
            if (jar >= 0 && jar + 1 < args.size() && args.get(jar + 1).endsWith("raid.jar")) {
                args = new ArrayList<>(args.subList(jar + 1, args.size()));
                args.set(0, "raid");
            }
            String text = String.join(" ", args);
            return text.length() > MAX_COMMAND ? text.substring(0, MAX_COMMAND) + "..." : text;
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
