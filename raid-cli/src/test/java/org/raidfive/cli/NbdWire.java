package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NBD spoken byte by byte (fixed newstyle handshake, NBD_OPT_GO, simple replies), with no client
 * library in between, so a test can send what a well-behaved client never would. Constants from
 * the protocol (NetworkBlockDevice/nbd doc/proto.md).
 */
final class NbdWire implements AutoCloseable {
    static final long NBDMAGIC = 0x4e42444d41474943L;
    static final long IHAVEOPT = 0x49484156454F5054L;
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    static final int REQUEST_MAGIC = 0x25609513;
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int OPT_GO = 7;
    static final int REP_ACK = 1;
    static final int REP_INFO = 3;
    static final int REP_ERR_UNKNOWN = 0x80000006;
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int EPERM = 1;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;

    private static final Pattern TCP = Pattern.compile("^nbd://([^:/]+):(\\d+)/(.*)$");

    private final SocketChannel channel;
    long size = -1;
    int transmissionFlags = -1;

    private NbdWire(SocketChannel channel) {
        this.channel = channel;
    }

    /** Connects to an {@code nbd://host:port/name} URI's host and port and reads the greeting. */
    static NbdWire connect(String uri) throws IOException {
        Matcher m = TCP.matcher(uri);
        if (!m.matches()) {
            throw new IllegalArgumentException("not an nbd://host:port/name URI: " + uri);
        }
        NbdWire w = new NbdWire(SocketChannel.open(new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2)))));
        ByteBuffer greeting = w.readExactly(18);
        assertEquals(NBDMAGIC, greeting.getLong(), "NBDMAGIC");
        assertEquals(IHAVEOPT, greeting.getLong(), "IHAVEOPT");
        w.write(ByteBuffer.allocate(4).putInt(3).flip()); // FIXED_NEWSTYLE | NO_ZEROES
        return w;
    }

    /** Connects without reading anything (to see whether the server hangs up at once). */
    static NbdWire connectRaw(String uri) throws IOException {
        return connectRaw(uri, null);
    }

    /**
     * Connects from {@code source} (a loopback address such as 127.0.0.2, so one test can be
     * several client addresses; null for any) without reading anything.
     */
    static NbdWire connectRaw(String uri, String source) throws IOException {
        Matcher m = TCP.matcher(uri);
        if (!m.matches()) {
            throw new IllegalArgumentException("not an nbd://host:port/name URI: " + uri);
        }
        SocketChannel channel = SocketChannel.open();
        try {
            if (source != null) {
                channel.bind(new InetSocketAddress(source, 0));
            }
            channel.connect(new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2))));
        } catch (IOException e) {
            channel.close();
            throw e;
        }
        return new NbdWire(channel);
    }

    /** Like {@link #connect(String)}, from {@code source}. */
    static NbdWire connectFrom(String uri, String source) throws IOException {
        NbdWire w = connectRaw(uri, source);
        try {
            w.greeting();
            w.write(ByteBuffer.allocate(4).putInt(3).flip()); // FIXED_NEWSTYLE | NO_ZEROES
        } catch (IOException | RuntimeException | Error e) {
            w.close();
            throw e;
        }
        return w;
    }

    /** Reads and checks the server's greeting. */
    void greeting() throws IOException {
        ByteBuffer greeting = readExactly(18);
        assertEquals(NBDMAGIC, greeting.getLong(), "NBDMAGIC");
        assertEquals(IHAVEOPT, greeting.getLong(), "IHAVEOPT");
    }

    /** NBD_OPT_GO for {@code name}: the type of the final reply (REP_ACK, or an error). */
    int go(String name) throws IOException {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer data = ByteBuffer.allocate(4 + bytes.length + 2)
                .putInt(bytes.length)
                .put(bytes)
                .putShort((short) 0);
        write(ByteBuffer.allocate(16)
                .putLong(IHAVEOPT)
                .putInt(OPT_GO)
                .putInt(data.capacity())
                .flip());
        write(data.flip());
        while (true) {
            ByteBuffer header = readExactly(20);
            assertEquals(OPTION_REPLY_MAGIC, header.getLong(), "option reply magic");
            header.getInt();
            int type = header.getInt();
            ByteBuffer payload = readExactly(header.getInt());
            if (type == REP_INFO && payload.getShort(0) == 0) {
                size = payload.getLong(2);
                transmissionFlags = Short.toUnsignedInt(payload.getShort(10));
            } else if (type != REP_INFO) {
                return type;
            }
        }
    }

    void request(int flags, int type, long cookie, long offset, long length, byte[] payload) throws IOException {
        write(ByteBuffer.allocate(28)
                .putInt(REQUEST_MAGIC)
                .putShort((short) flags)
                .putShort((short) type)
                .putLong(cookie)
                .putLong(offset)
                .putInt((int) length)
                .flip());
        if (payload != null) {
            write(ByteBuffer.wrap(payload));
        }
    }

    /** A simple reply: {error, cookie}. */
    long[] reply() throws IOException {
        ByteBuffer r = readExactly(16);
        assertEquals(SIMPLE_REPLY_MAGIC, r.getInt(), "simple reply magic");
        int error = r.getInt();
        return new long[] {error, r.getLong()};
    }

    void write(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            channel.write(b);
        }
    }

    ByteBuffer readExactly(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new EOFException(
                        "the server closed the connection after " + b.position() + " of " + n + " bytes");
            }
        }
        return b.flip();
    }

    /** True once the server has closed the connection (end of stream or reset). */
    boolean closedByServer() {
        try {
            return channel.read(ByteBuffer.allocate(1)) < 0;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
