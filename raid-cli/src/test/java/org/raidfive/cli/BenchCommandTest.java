package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Timeout(120)
class BenchCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cmd = new CommandLine(new BenchCommand());
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        return cmd.execute(args);
    }

    @Test
    void badValuesPrintOneLineAndExitTwo() {
        assertEquals(2, run("--bs", "1000"));
        assertEquals(
                "raid bench: --bs 1000 must be a multiple of 512 bytes, at most 1g",
                err.toString().trim());
        assertEquals(2, run("--runtime", "soon"));
        assertTrue(err.toString().contains("--runtime 'soon' is not a time"));
        assertEquals(2, run("--chart", "out.gif"));
        assertEquals(2, run("--no-such-option"));
    }

    @Test
    void aShortRunPrintsFioStyleLinesAndWritesJsonAndChart(@TempDir Path tmp) throws Exception {
        Path json = tmp.resolve("r.json");
        Path chart = tmp.resolve("r.svg");
        int code = run(
                "--rw",
                "randread",
                "--size",
                "8m",
                "--chunk",
                "64k",
                "--numjobs",
                "2",
                "--runtime",
                "200ms",
                "--ramp",
                "50ms",
                "--warmup",
                "0",
                "--target",
                "raw,array",
                "--counters",
                "both",
                "--json",
                json.toString(),
                "--chart",
                chart.toString());
        assertEquals(0, code, err.toString());
        String text = out.toString();
        assertTrue(
                text.startsWith(
                        "raid bench: rw=randread bs=4k iodepth=1 numjobs=2 size=8m runtime=200ms ramp=50ms warmup=0s"),
                text);
        assertTrue(text.contains("array atomic   run 1/1: read: IOPS="), text);
        assertTrue(text.contains("ratio array percpu / raw: median"), text);
        assertTrue(Files.readString(json).contains("\"summaries\""));
        assertTrue(Files.readString(chart).startsWith("<svg"));
        assertEquals(0, run("--help"));
        assertTrue(out.toString().contains("--counters"));
    }
}
