package org.raidfive.bench;

import java.util.Locale;

/** fio's {@code --rw} patterns. */
public enum RwMode {
    READ("read", false, 100),
    WRITE("write", false, 0),
    RANDREAD("randread", true, 100),
    RANDWRITE("randwrite", true, 0),
    RANDRW("randrw", true, -1);

    private final String fioName;
    private final boolean random;
    private final int fixedReadPercent;

    RwMode(String fioName, boolean random, int fixedReadPercent) {
        this.fioName = fioName;
        this.random = random;
        this.fixedReadPercent = fixedReadPercent;
    }

    public String fioName() {
        return fioName;
    }

    public boolean isRandom() {
        return random;
    }

    /** Percentage of reads: fixed for every pattern but randrw, whose mix is {@code rwmixread}. */
    public int readPercent(int rwmixread) {
        return fixedReadPercent >= 0 ? fixedReadPercent : rwmixread;
    }

    public static RwMode parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (RwMode m : values()) {
            if (m.fioName.equals(n)) {
                return m;
            }
        }
        throw new IllegalArgumentException(
                "unknown --rw '" + name + "'; valid: read, write, randread, randwrite, randrw");
    }

    @Override
    public String toString() {
        return fioName;
    }
}
