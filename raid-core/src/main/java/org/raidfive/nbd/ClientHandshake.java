package org.raidfive.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

/**
 * The client side of the fixed newstyle handshake: NBD_OPT_GO asking for NBD_INFO_BLOCK_SIZE,
 * falling back to NBD_OPT_EXPORT_NAME when the server answers NBD_REP_ERR_UNSUP (or does not
 * speak fixed newstyle at all). No other option is sent: we use simple replies only.
 */
final class ClientHandshake {
    /** Bound on an option reply's data before we would allocate it. */
    private static final int MAX_REPLY_BYTES = 64 * 1024;

    private static final int DEFAULT_MAX_BLOCK = 32 << 20;

    private final ChannelInput in;
    private final SocketChannel socket;
    private WritableByteChannel out;
    private final String exportName;
    private final String where;
    /** A TLS engine when the URI asked for TLS (nbds): STARTTLS first, no fall-back. */
    private final SSLEngine tlsEngine;

    private TlsChannel tls;

    ClientHandshake(ChannelInput in, SocketChannel socket, String exportName, String where, SSLEngine tlsEngine) {
        this.in = in;
        this.socket = socket;
        this.out = socket;
        this.exportName = exportName;
        this.where = where;
        this.tlsEngine = tlsEngine;
    }

    /** The TLS channel after STARTTLS, or null. */
    TlsChannel tls() {
        return tls;
    }

    /** NBD_OPT_STARTTLS and the TLS handshake; refused or failing, the connection cannot go on. */
    private void startTls() throws IOException {
        sendOption(NbdProtocol.OPT_STARTTLS, ByteBuffer.allocate(0));
        long magic = in.readLong();
        int option = in.readInt();
        int type = in.readInt();
        long length = Integer.toUnsignedLong(in.readInt());
        if (magic != NbdProtocol.OPTION_REPLY_MAGIC || option != NbdProtocol.OPT_STARTTLS || length > MAX_REPLY_BYTES) {
            throw new IOException(where + ": malformed reply to NBD_OPT_STARTTLS");
        }
        byte[] message = in.readBytes((int) length);
        if (type != NbdProtocol.REP_ACK) {
            throw new IOException(where + " refused TLS (" + NbdProtocol.replyName(type)
                    + (message.length > 0 ? ": " + new String(message, StandardCharsets.UTF_8) : "") + ")");
        }
        try {
            tls = TlsChannel.handshake(socket, tlsEngine, in.switchTo(socket));
        } catch (SSLException e) {
            throw new IOException(where + ": TLS handshake failed: " + e.getMessage(), e);
        }
        in.switchTo(tls);
        out = tls;
    }

    ExportInfo run() throws IOException {
        long magic = in.readLong();
        if (magic != NbdProtocol.NBDMAGIC) {
            throw new IOException(where + " is not an NBD server (greeting 0x" + Long.toHexString(magic) + ")");
        }
        long style = in.readLong();
        if (style == NbdProtocol.OLDSTYLE_MAGIC) {
            throw new IOException(where + " speaks the oldstyle NBD handshake, which is not supported");
        }
        if (style != NbdProtocol.IHAVEOPT) {
            throw new IOException(where + ": unexpected handshake magic 0x" + Long.toHexString(style));
        }
        int serverFlags = Short.toUnsignedInt(in.readShort());
        boolean fixed = (serverFlags & NbdProtocol.FLAG_FIXED_NEWSTYLE) != 0;
        boolean noZeroes = (serverFlags & NbdProtocol.FLAG_NO_ZEROES) != 0;
        int clientFlags =
                (fixed ? NbdProtocol.FLAG_C_FIXED_NEWSTYLE : 0) | (noZeroes ? NbdProtocol.FLAG_C_NO_ZEROES : 0);
        writeFully(ByteBuffer.allocate(4).putInt(clientFlags).flip());
        if (tlsEngine != null) {
            if (!fixed) {
                throw new IOException(where + " does not speak the fixed newstyle handshake, so it cannot do TLS");
            }
            startTls();
        }
        if (fixed) {
            ExportInfo info = go();
            if (info != null) {
                return info;
            }
        }
        return exportNameOption(noZeroes);
    }

    /** NBD_OPT_GO; null when the server does not support it. */
    private ExportInfo go() throws IOException {
        byte[] name = exportName.getBytes(StandardCharsets.UTF_8);
        ByteBuffer data = ByteBuffer.allocate(4 + name.length + 2 + 2);
        data.putInt(name.length)
                .put(name)
                .putShort((short) 1)
                .putShort((short) NbdProtocol.INFO_BLOCK_SIZE)
                .flip();
        sendOption(NbdProtocol.OPT_GO, data);
        long size = -1;
        int flags = 0;
        int minimum = 1;
        int preferred = 4096;
        long maximum = DEFAULT_MAX_BLOCK;
        while (true) {
            long magic = in.readLong();
            int option = in.readInt();
            int type = in.readInt();
            long length = Integer.toUnsignedLong(in.readInt());
            if (magic != NbdProtocol.OPTION_REPLY_MAGIC || option != NbdProtocol.OPT_GO) {
                throw new IOException(where + ": malformed option reply (magic 0x" + Long.toHexString(magic)
                        + ", option " + option + ")");
            }
            if (length > MAX_REPLY_BYTES) {
                throw new IOException(where + ": option reply of " + length + " bytes is too large");
            }
            ByteBuffer reply = ByteBuffer.wrap(in.readBytes((int) length));
            if (type == NbdProtocol.REP_ACK) {
                if (size < 0) {
                    throw new IOException(where + ": NBD_OPT_GO succeeded without NBD_INFO_EXPORT");
                }
                return new ExportInfo(exportName, size, flags, minimum, preferred, maximum);
            }
            if (type == NbdProtocol.REP_INFO) {
                if (length < 2) {
                    throw new IOException(where + ": NBD_REP_INFO of " + length + " bytes");
                }
                int info = Short.toUnsignedInt(reply.getShort());
                if (info == NbdProtocol.INFO_EXPORT && length == 12) {
                    size = reply.getLong();
                    flags = Short.toUnsignedInt(reply.getShort());
                    if (size < 0) {
                        throw new IOException(where + ": export size " + Long.toUnsignedString(size) + " is too large");
                    }
                } else if (info == NbdProtocol.INFO_BLOCK_SIZE && length == 14) {
                    minimum = reply.getInt();
                    preferred = reply.getInt();
                    maximum = Integer.toUnsignedLong(reply.getInt());
                    if (minimum < 1 || Integer.bitCount(minimum) != 1 || minimum > 65536 || maximum < minimum) {
                        throw new IOException(where + ": invalid block sizes min " + minimum + " max " + maximum);
                    }
                }
                continue; // other information types are ignored, as the protocol requires
            }
            if (type == NbdProtocol.REP_ERR_UNSUP) {
                return null;
            }
            String message = reply.hasRemaining() ? ": " + StandardCharsets.UTF_8.decode(reply) : "";
            if ((type & NbdProtocol.REP_FLAG_ERROR) != 0) {
                throw new IOException(
                        where + " refused export '" + exportName + "': " + NbdProtocol.replyName(type) + message);
            }
            throw new IOException(where + ": unexpected reply " + NbdProtocol.replyName(type) + " to NBD_OPT_GO");
        }
    }

    private ExportInfo exportNameOption(boolean noZeroes) throws IOException {
        sendOption(NbdProtocol.OPT_EXPORT_NAME, ByteBuffer.wrap(exportName.getBytes(StandardCharsets.UTF_8)));
        long size;
        int flags;
        try {
            size = in.readLong();
            flags = Short.toUnsignedInt(in.readShort());
            if (!noZeroes) {
                in.skip(124);
            }
        } catch (EOFException e) {
            throw new IOException(
                    where + " closed the connection after NBD_OPT_EXPORT_NAME '" + exportName + "' (unknown export?)",
                    e);
        }
        if (size < 0) {
            throw new IOException(where + ": export size " + Long.toUnsignedString(size) + " is too large");
        }
        return new ExportInfo(exportName, size, flags, 1, 4096, DEFAULT_MAX_BLOCK);
    }

    private void sendOption(int option, ByteBuffer data) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(16 + data.remaining());
        header.putLong(NbdProtocol.IHAVEOPT)
                .putInt(option)
                .putInt(data.remaining())
                .put(data)
                .flip();
        writeFully(header);
    }

    private void writeFully(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
    }
}
