package org.raidfive.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.raidfive.array.OfflineReshape;
import org.raidfive.array.Raid5Array;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code raid read}: bytes out of the array, from a read-only assembly (degraded arrays reconstruct). */
@Command(
        header = "Read bytes out of the array (to a file or stdout).",
        name = "read",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Read --length bytes at --offset from the array to --output FILE or stdout.",
            "Offset and length must be multiples of 512. Assembles read-only: the member files are not changed; "
                    + "a degraded array reconstructs the missing member's data from parity. An array stopped "
                    + "mid-reshape (raid grow, or Linux md) is read as md maps it at the recorded position: "
                    + "the part already moved in the new geometry, the rest in the old."
        })
final class ReadCommand extends Verb {
    @Option(
            names = "--offset",
            required = true,
            paramLabel = "BYTES",
            converter = SizeConverter.class,
            description = "Array offset to read from; a multiple of 512 (K, M, G suffixes).")
    long offset;

    @Option(
            names = "--length",
            required = true,
            paramLabel = "BYTES",
            converter = SizeConverter.class,
            description = "Bytes to read; a multiple of 512.")
    long length;

    @Option(
            names = "--output",
            paramLabel = "FILE|-",
            defaultValue = "-",
            description = "Where the bytes go (default: stdout).")
    String output;

    @Option(
            names = "--force",
            description = "Start an array that is dirty and degraded anyway (md's --force): data "
                    + "in stripes written at the crash may be wrong (the RAID-5 write hole).")
    boolean force;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.members();
        WriteCommand.checkAligned("--offset", offset);
        WriteCommand.checkAligned("--length", length);
        if (!output.equals("-") && Members.indexOf(members, output) >= 0) {
            throw CliException.usage("--output " + output + " is one of the members");
        }
        if (Members.reshaping(members)) {
            // Stopped mid-reshape: read through md's mapping at the recorded position, writing nothing.
            try (MemberSet set = Members.openAll(members, true);
                    OfflineReshape reshape = OfflineReshape.readOnly(set.disks())) {
                copyOut(reshape.reshapingArrayBytes(), reshape::read);
            }
            return ExitCode.OK;
        }
        try (ArraySession session = session(members, ArraySession.READ_ONLY.withForce(force))) {
            Raid5Array array = session.array();
            copyOut(array.size(), array::read);
        }
        return ExitCode.OK;
    }

    @FunctionalInterface
    private interface Source {
        void read(long offset, ByteBuffer dst, int at, int len) throws IOException;
    }

    private void copyOut(long size, Source array) throws IOException {
        if (offset > size || length > size - offset) {
            throw CliException.usage("reading " + length + " bytes at offset " + offset
                    + " would go beyond the end of the array (size " + size + " bytes)");
        }
        if (output.equals("-")) {
            copy(array, System.out);
            if (System.out.checkError()) {
                throw new IOException("writing to stdout failed (closed pipe?)");
            }
        } else {
            try (OutputStream out = Files.newOutputStream(
                    Members.path(output),
                    StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE)) {
                copy(array, out);
            }
        }
    }

    private void copy(Source array, OutputStream out) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(WriteCommand.BLOCK);
        long done = 0;
        while (done < length) {
            int n = (int) Math.min(WriteCommand.BLOCK, length - done);
            array.read(offset + done, buf, 0, n);
            out.write(buf.array(), 0, n);
            done += n;
        }
        out.flush();
    }
}
