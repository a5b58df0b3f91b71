package org.raidfive.stats;

import java.nio.file.Path;

/** Run in another JVM by the tests: prints every counter of a counters file as "scope TAB stat TAB value". */
public final class CountersDumpMain {
    private CountersDumpMain() {}

    public static void main(String[] args) throws Exception {
        try (CountersFile file = CountersFile.open(Path.of(args[0]))) {
            System.out.println("array\tname\t" + file.arrayName());
            System.out.println("array\tpid\t" + file.pid());
            for (CountersFile.Counter c : file.read()) {
                System.out.println(c.scope() + "\t" + c.stat().label() + "\t" + c.value());
            }
        }
    }
}
