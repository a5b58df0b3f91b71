package org.raidfive.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.raidfive.array.Raid5Array;
import org.raidfive.bench.Sizes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code raid write}: bytes from a file or stdin into the array. The whole input is checked before
 * the first byte is written: its length must be a multiple of 512 (a short final block is refused,
 * not padded) and it must fit before the array's end. Input from stdin is therefore first spooled
 * to a temporary file (at most the room left in the array, plus one byte to notice an overflow).
 */
@Command(
        header = "Write bytes into the array (from a file or stdin).",
        name = "write",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Write bytes into the array at --offset, from --input FILE or stdin.",
            "Offset and input length must be multiples of 512 (whole sectors): an input whose last block is "
                    + "short is refused, not padded. Nothing is written unless the whole input fits."
        })
final class WriteCommand extends Verb {
    static final int BLOCK = 1 << 20;

    @Option(
            names = "--offset",
            required = true,
            paramLabel = "BYTES",
            converter = SizeConverter.class,
            description = "Array offset to write at; a multiple of 512 (K, M, G suffixes).")
    long offset;

    @Option(
            names = "--input",
            paramLabel = "FILE|-",
            defaultValue = "-",
            description = "Where the bytes come from (default: stdin).")
    String input;

    @Mixin
    ArraySource source;

    /** The members given, or those of --array. */
    List<String> members;

    @Override
    public Integer call() throws Exception {
        members = source.members();
        checkAligned("--offset", offset);
        long arrayBytes;
        try (ArraySession probe = readOnlySession(members)) {
            arrayBytes = probe.array().size();
        }
        if (offset > arrayBytes) {
            throw CliException.usage(
                    "--offset " + offset + " is beyond the end of the array (size " + arrayBytes + " bytes)");
        }
        long room = arrayBytes - offset;
        Path spool = null;
        try {
            Path source;
            if (input.equals("-")) {
                spool = Files.createTempFile("raid-write-", ".spool");
                spoolStdin(spool, room);
                source = spool;
            } else {
                source = Members.existingFile(input);
                if (Members.indexOf(members, input) >= 0) {
                    throw CliException.usage("--input " + input + " is one of the members");
                }
            }
            long length = Files.size(source);
            String what = spool != null ? "the input on stdin" : "--input " + input;
            if (length > room) {
                throw CliException.usage(
                        what + " (" + (spool != null ? "more than " + room : length) + " bytes) at offset " + offset
                                + " would end beyond the array (size " + arrayBytes + " bytes)");
            }
            if (length == 0) {
                throw CliException.usage(what + " is empty: nothing to write (and nothing was written)");
            }
            if (length % 512 != 0) {
                throw CliException.usage(what + " is " + length + " bytes, which ends with a partial 512-byte block ("
                        + (length % 512) + " bytes); raid writes whole sectors only: pad the input to a multiple of "
                        + "512 bytes");
            }
            try (ArraySession session = readWriteSession(members);
                    FileChannel in = FileChannel.open(source, StandardOpenOption.READ)) {
                copy(in, session.array(), length);
            }
            say("wrote " + length + " bytes (" + Sizes.human(length) + ") at offset " + offset);
            return ExitCode.OK;
        } finally {
            if (spool != null) {
                Files.deleteIfExists(spool);
            }
        }
    }

    private void copy(FileChannel in, Raid5Array array, long length) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(BLOCK);
        long done = 0;
        while (done < length) {
            int n = (int) Math.min(BLOCK, length - done);
            buf.clear().limit(n);
            while (buf.hasRemaining()) {
                if (in.read(buf, done + buf.position()) < 0) {
                    throw new IOException("input ended early at byte " + (done + buf.position()));
                }
            }
            array.write(offset + done, buf, 0, n);
            done += n;
        }
    }

    /** Copies stdin to {@code spool}, stopping one byte past {@code room}: more than that cannot be written anyway. */
    private static void spoolStdin(Path spool, long room) throws IOException {
        InputStream stdin = System.in;
        ReadableByteChannel src = Channels.newChannel(stdin);
        try (FileChannel out = FileChannel.open(spool, StandardOpenOption.WRITE)) {
            long limit = room == Long.MAX_VALUE ? room : room + 1;
            long pos = 0;
            ByteBuffer buf = ByteBuffer.allocate(BLOCK);
            while (pos < limit) {
                buf.clear().limit((int) Math.min(BLOCK, limit - pos));
                int n = src.read(buf);
                if (n < 0) {
                    break;
                }
                buf.flip();
                while (buf.hasRemaining()) {
                    pos += out.write(buf, pos);
                }
            }
        }
    }

    static void checkAligned(String option, long value) {
        if (value % 512 != 0) {
            throw CliException.usage(option + " " + value + " is not a multiple of 512: the array is addressed in "
                    + "whole 512-byte sectors");
        }
    }
}
