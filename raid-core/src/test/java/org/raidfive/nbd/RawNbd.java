package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Speaks NBD byte by byte over a socket, with nothing of our client in between, so tests can send
 * what a well-behaved client never would.
 */
final class RawNbd implements AutoCloseable {
    final SocketChannel channel;
    int handshakeFlags;

    RawNbd(SocketAddress address) throws IOException {
        channel = SocketChannel.open(address);
    }

    record OptionReply(int option, int type, byte[] data) {
        String text() {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    record Reply(int error, long cookie) {}

    /** Reads the greeting and sends the client flags. */
    void greet(int clientFlags) throws IOException {
        ByteBuffer greeting = readExactly(18);
        assertEquals(NbdProtocol.NBDMAGIC, greeting.getLong(), "NBDMAGIC");
        assertEquals(NbdProtocol.IHAVEOPT, greeting.getLong(), "IHAVEOPT");
        handshakeFlags = Short.toUnsignedInt(greeting.getShort());
        write(ByteBuffer.allocate(4).putInt(clientFlags).flip());
    }

    void sendOption(int option, byte[] data) throws IOException {
        sendOptionHeader(option, data.length);
        write(ByteBuffer.wrap(data));
    }

    void sendOptionHeader(int option, long length) throws IOException {
        write(ByteBuffer.allocate(16)
                .putLong(NbdProtocol.IHAVEOPT)
                .putInt(option)
                .putInt((int) length)
                .flip());
    }

    OptionReply readOptionReply() throws IOException {
        ByteBuffer header = readExactly(20);
        assertEquals(NbdProtocol.OPTION_REPLY_MAGIC, header.getLong(), "option reply magic");
        int option = header.getInt();
        int type = header.getInt();
        int length = header.getInt();
        if (length < 0 || length > 1 << 20) {
            fail("option reply length " + Integer.toUnsignedString(length));
        }
        byte[] data = new byte[length];
        readExactly(length).get(data);
        return new OptionReply(option, type, data);
    }

    static byte[] goData(String name, int... infos) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer data = ByteBuffer.allocate(4 + bytes.length + 2 + 2 * infos.length);
        data.putInt(bytes.length).put(bytes).putShort((short) infos.length);
        for (int info : infos) {
            data.putShort((short) info);
        }
        return data.array();
    }

    /** Fixed newstyle greeting then NBD_OPT_GO for {@code name}; returns [size, flags]. */
    long[] go(String name) throws IOException {
        greet(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES);
        sendOption(NbdProtocol.OPT_GO, goData(name));
        long size = -1;
        long flags = -1;
        while (true) {
            OptionReply reply = readOptionReply();
            if (reply.type() == NbdProtocol.REP_ACK) {
                return new long[] {size, flags};
            }
            assertEquals(
                    NbdProtocol.REP_INFO, reply.type(), "reply type to GO: " + NbdProtocol.replyName(reply.type()));
            ByteBuffer data = ByteBuffer.wrap(reply.data());
            if (data.getShort() == NbdProtocol.INFO_EXPORT) {
                size = data.getLong();
                flags = Short.toUnsignedInt(data.getShort());
            }
        }
    }

    void sendRequest(int flags, int type, long cookie, long offset, long length) throws IOException {
        write(requestHeader(flags, type, cookie, offset, length));
    }

    static ByteBuffer requestHeader(int flags, int type, long cookie, long offset, long length) {
        return ByteBuffer.allocate(28)
                .putInt(NbdProtocol.REQUEST_MAGIC)
                .putShort((short) flags)
                .putShort((short) type)
                .putLong(cookie)
                .putLong(offset)
                .putInt((int) length)
                .flip();
    }

    void write(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    Reply readReply() throws IOException {
        ByteBuffer header = readExactly(16);
        assertEquals(NbdProtocol.SIMPLE_REPLY_MAGIC, header.getInt(), "simple reply magic");
        return new Reply(header.getInt(), header.getLong());
    }

    ByteBuffer readExactly(int n) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(n);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                throw new EOFException(
                        "server closed the connection after " + buffer.position() + " of " + n + " bytes");
            }
        }
        return buffer.flip();
    }

    /** True if the server has closed the connection (read returns end of stream). */
    boolean closedByServer() throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        try {
            return channel.read(one) < 0;
        } catch (IOException e) {
            return true; // connection reset
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
