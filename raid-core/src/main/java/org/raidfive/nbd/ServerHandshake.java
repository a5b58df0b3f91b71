package org.raidfive.nbd;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of the fixed newstyle handshake for one connection: sends the greeting, reads
 * the client flags, then answers options until the client picks the export (NBD_OPT_GO or
 * NBD_OPT_EXPORT_NAME) or leaves.
 *
 * <p>Supported: EXPORT_NAME (honouring NBD_FLAG_C_NO_ZEROES), INFO and GO (NBD_INFO_EXPORT always;
 * NAME, DESCRIPTION and BLOCK_SIZE when requested), LIST (unless the server hides its exports:
 * NBD_REP_ERR_POLICY), ABORT, and STARTTLS when TLS is on; with TLS required every option before
 * STARTTLS but ABORT gets NBD_REP_ERR_TLS_REQD (EXPORT_NAME, which cannot, disconnects). Every
 * other option, known or not,
 * is answered NBD_REP_ERR_UNSUP and negotiation continues. Option lengths are unsigned; data
 * beyond {@link #MAX_OPTION_BYTES} is skipped without being stored (NBD_REP_ERR_TOO_BIG), and a
 * client sending more than {@link #MAX_SKIP_BYTES} with one option is disconnected.
 */
final class ServerHandshake {
    private static final Logger LOG = LoggerFactory.getLogger(ServerHandshake.class);

    /** Largest option payload we read into memory (GO with a 4 KiB name and many info requests fits). */
    static final int MAX_OPTION_BYTES = 64 * 1024;
    /** Largest option payload we are willing to read and discard before hanging up. */
    static final long MAX_SKIP_BYTES = 16L << 20;

    private final ChannelInput in;
    private final SocketChannel socket;
    private WritableByteChannel out;
    private final ServerExport export;
    private final String peer;
    /**
     * Asked once the client has chosen the export, before the reply that tells it so; false (the
     * connection was evicted meanwhile) ends the handshake without that reply.
     */
    private final BooleanSupplier chosen;

    /** The export's size as this connection is told it, taken once (see {@link ServerExport#size}). */
    private final long size;

    private boolean noZeroes;
    /** The TLS channel after NBD_OPT_STARTTLS, else null. */
    private TlsChannel tls;

    ServerHandshake(ChannelInput in, SocketChannel socket, ServerExport export, String peer, BooleanSupplier chosen) {
        this.in = in;
        this.chosen = chosen;
        this.socket = socket;
        this.out = socket;
        this.export = export;
        this.peer = peer;
        this.size = export.size();
    }

    /** The export's size this client was (or will be) told. */
    long size() {
        return size;
    }

    /** The TLS channel the connection goes on with, or null for plain text. */
    TlsChannel tls() {
        return tls;
    }

    /** Returns true when the transmission phase starts, false when the session ends here. */
    boolean run() throws IOException {
        ByteBuffer greeting = ByteBuffer.allocate(18);
        greeting.putLong(NbdProtocol.NBDMAGIC)
                .putLong(NbdProtocol.IHAVEOPT)
                .putShort((short) (NbdProtocol.FLAG_FIXED_NEWSTYLE | NbdProtocol.FLAG_NO_ZEROES))
                .flip();
        writeFully(greeting);
        if (!in.await(4)) {
            return false;
        }
        int clientFlags = in.readInt();
        if ((clientFlags & ~(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES)) != 0) {
            LOG.debug("{}: unknown client flags 0x{}, disconnecting", peer, Integer.toHexString(clientFlags));
            return false;
        }
        noZeroes = (clientFlags & NbdProtocol.FLAG_C_NO_ZEROES) != 0;
        while (true) {
            if (!in.await(16)) {
                return false;
            }
            long magic = in.readLong();
            if (magic != NbdProtocol.IHAVEOPT) {
                LOG.debug("{}: bad option magic 0x{}, disconnecting", peer, Long.toHexString(magic));
                return false;
            }
            int option = in.readInt();
            long length = Integer.toUnsignedLong(in.readInt());
            Boolean outcome = option(option, length);
            if (outcome != null) {
                return outcome;
            }
        }
    }

    /** Handles one option; null means keep negotiating. */
    private Boolean option(int option, long length) throws IOException {
        if (length > MAX_OPTION_BYTES) {
            if (option == NbdProtocol.OPT_EXPORT_NAME || length > MAX_SKIP_BYTES) {
                LOG.debug("{}: {} with {} bytes of data, disconnecting", peer, NbdProtocol.optionName(option), length);
                return false; // EXPORT_NAME cannot be answered with an error
            }
            in.skip(length);
            reply(
                    option,
                    isKnown(option) ? NbdProtocol.REP_ERR_TOO_BIG : NbdProtocol.REP_ERR_UNSUP,
                    NbdProtocol.optionName(option) + " data of " + length + " bytes is too large");
            return null;
        }
        int len = (int) length;
        if (export.closing() && option != NbdProtocol.OPT_ABORT) {
            if (option == NbdProtocol.OPT_EXPORT_NAME) {
                return false;
            }
            in.skip(len);
            reply(option, NbdProtocol.REP_ERR_SHUTDOWN, "server is shutting down");
            return null;
        }
        TlsMode mode = export.config.tls();
        if (mode == TlsMode.REQUIRE
                && tls == null
                && option != NbdProtocol.OPT_STARTTLS
                && option != NbdProtocol.OPT_ABORT) {
            if (option == NbdProtocol.OPT_EXPORT_NAME) {
                LOG.debug("{}: NBD_OPT_EXPORT_NAME before STARTTLS on a TLS-only server, disconnecting", peer);
                return false;
            }
            in.skip(len);
            reply(option, NbdProtocol.REP_ERR_TLS_REQD, "this server requires TLS: send NBD_OPT_STARTTLS first");
            return null;
        }
        switch (option) {
            case NbdProtocol.OPT_STARTTLS:
                if (mode == TlsMode.OFF) {
                    in.skip(len);
                    reply(option, NbdProtocol.REP_ERR_UNSUP, "TLS is not enabled on this server");
                    return null;
                }
                return startTls(len) ? null : Boolean.FALSE;
            case NbdProtocol.OPT_EXPORT_NAME:
                return exportName(in.readString(len));
            case NbdProtocol.OPT_ABORT:
                in.skip(len);
                ack(option);
                return false;
            case NbdProtocol.OPT_LIST:
                list(len);
                return null;
            case NbdProtocol.OPT_INFO:
            case NbdProtocol.OPT_GO:
                return info(option, len) && option == NbdProtocol.OPT_GO ? Boolean.TRUE : null;
            default:
                // STARTTLS, STRUCTURED_REPLY, (LIST_|SET_)META_CONTEXT, EXTENDED_HEADERS, unknown.
                in.skip(len);
                reply(option, NbdProtocol.REP_ERR_UNSUP, NbdProtocol.optionName(option) + " is not supported");
                return null;
        }
    }

    private static boolean isKnown(int option) {
        return option == NbdProtocol.OPT_EXPORT_NAME
                || option == NbdProtocol.OPT_ABORT
                || option == NbdProtocol.OPT_STARTTLS
                || option == NbdProtocol.OPT_LIST
                || option == NbdProtocol.OPT_INFO
                || option == NbdProtocol.OPT_GO;
    }

    private Boolean exportName(String name) throws IOException {
        if (!export.matches(name)) {
            LOG.debug("{}: NBD_OPT_EXPORT_NAME for unknown export '{}', disconnecting", peer, name);
            return false;
        }
        if (!chosen.getAsBoolean()) {
            return false;
        }
        ByteBuffer reply = ByteBuffer.allocate(10 + (noZeroes ? 0 : 124));
        reply.putLong(size).putShort((short) export.transmissionFlags);
        reply.position(reply.capacity()).flip();
        writeFully(reply);
        return true;
    }

    /** NBD_OPT_STARTTLS: ACK, then the TLS handshake; false ends the session (it failed). */
    private boolean startTls(int len) throws IOException {
        if (len != 0 || tls != null) {
            in.skip(len);
            reply(
                    NbdProtocol.OPT_STARTTLS,
                    NbdProtocol.REP_ERR_INVALID,
                    tls != null ? "TLS is already on" : "NBD_OPT_STARTTLS takes no data");
            return true;
        }
        ack(NbdProtocol.OPT_STARTTLS);
        SSLEngine engine = export.config.sslContext().createSSLEngine();
        engine.setUseClientMode(false);
        if (export.config.verifyPeer()) {
            engine.setNeedClientAuth(true);
        }
        try {
            tls = TlsChannel.handshake(socket, engine, in.switchTo(socket));
        } catch (SSLException e) {
            LOG.info("{}: TLS handshake failed, disconnecting: {}", peer, e.getMessage());
            return false;
        }
        in.switchTo(tls);
        out = tls;
        LOG.debug(
                "{}: TLS on ({}, {})",
                peer,
                tls.session().getProtocol(),
                tls.session().getCipherSuite());
        return true;
    }

    private void list(int len) throws IOException {
        if (!export.config.listExports()) {
            in.skip(len);
            reply(NbdProtocol.OPT_LIST, NbdProtocol.REP_ERR_POLICY, "listing exports is disabled on this server");
            return;
        }
        if (len != 0) {
            in.skip(len);
            reply(NbdProtocol.OPT_LIST, NbdProtocol.REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
            return;
        }
        byte[] name = utf8(export.config.exportName());
        byte[] description = utf8(export.config.description());
        ByteBuffer data = ByteBuffer.allocate(4 + name.length + description.length);
        data.putInt(name.length).put(name).put(description).flip();
        reply(NbdProtocol.OPT_LIST, NbdProtocol.REP_SERVER, data);
        ack(NbdProtocol.OPT_LIST);
    }

    /** NBD_OPT_INFO / NBD_OPT_GO; returns true when the export was accepted (ACK sent). */
    private boolean info(int option, int len) throws IOException {
        if (len < 6) {
            in.skip(len);
            reply(option, NbdProtocol.REP_ERR_INVALID, NbdProtocol.optionName(option) + " data too short: " + len);
            return false;
        }
        ByteBuffer data = ByteBuffer.wrap(in.readBytes(len));
        long nameLength = Integer.toUnsignedLong(data.getInt());
        if (nameLength > len - 6) {
            reply(
                    option,
                    NbdProtocol.REP_ERR_INVALID,
                    "export name length " + nameLength + " does not fit in option data of " + len + " bytes");
            return false;
        }
        byte[] nameBytes = new byte[(int) nameLength];
        data.get(nameBytes);
        String name = new String(nameBytes, StandardCharsets.UTF_8);
        int requests = Short.toUnsignedInt(data.getShort());
        if (data.remaining() != 2 * requests) {
            reply(
                    option,
                    NbdProtocol.REP_ERR_INVALID,
                    requests + " information requests need " + 2 * requests + " bytes, option has " + data.remaining());
            return false;
        }
        if (!export.matches(name)) {
            // With listing off (--no-list) the refusal names nothing the client did not send.
            reply(
                    option,
                    NbdProtocol.REP_ERR_UNKNOWN,
                    export.config.listExports()
                            ? "unknown export '" + name + "'; this server exports '" + export.config.exportName() + "'"
                            : "unknown export");
            return false;
        }
        if (option == NbdProtocol.OPT_GO && !chosen.getAsBoolean()) {
            throw new ClosedChannelException(); // evicted before its GO reply
        }
        ByteBuffer info = ByteBuffer.allocate(12);
        info.putShort((short) NbdProtocol.INFO_EXPORT)
                .putLong(size)
                .putShort((short) export.transmissionFlags)
                .flip();
        reply(option, NbdProtocol.REP_INFO, info);
        for (int i = 0; i < requests; i++) {
            int type = Short.toUnsignedInt(data.getShort());
            switch (type) {
                case NbdProtocol.INFO_NAME:
                    infoString(option, NbdProtocol.INFO_NAME, export.config.exportName());
                    break;
                case NbdProtocol.INFO_DESCRIPTION:
                    if (!export.config.description().isEmpty() && export.config.listExports()) {
                        infoString(option, NbdProtocol.INFO_DESCRIPTION, export.config.description());
                    }
                    break;
                case NbdProtocol.INFO_BLOCK_SIZE:
                    ByteBuffer sizes = ByteBuffer.allocate(14);
                    sizes.putShort((short) NbdProtocol.INFO_BLOCK_SIZE)
                            .putInt(export.config.minimumBlockSize())
                            .putInt(Math.max(NbdServerConfig.PREFERRED_BLOCK_SIZE, export.config.minimumBlockSize()))
                            .putInt(export.config.maxRequestBytes())
                            .flip();
                    reply(option, NbdProtocol.REP_INFO, sizes);
                    break;
                default:
                    break; // the server MUST ignore information requests it does not understand
            }
        }
        ack(option);
        if (option == NbdProtocol.OPT_GO) {
            LOG.debug("{}: NBD_OPT_GO export '{}'", peer, name);
        }
        return true;
    }

    private void infoString(int option, int type, String value) throws IOException {
        byte[] bytes = utf8(value);
        ByteBuffer data = ByteBuffer.allocate(2 + bytes.length);
        data.putShort((short) type).put(bytes).flip();
        reply(option, NbdProtocol.REP_INFO, data);
    }

    private void ack(int option) throws IOException {
        reply(option, NbdProtocol.REP_ACK, (ByteBuffer) null);
    }

    private void reply(int option, int type, String message) throws IOException {
        reply(option, type, ByteBuffer.wrap(utf8(message)));
    }

    private void reply(int option, int type, ByteBuffer data) throws IOException {
        int length = data == null ? 0 : data.remaining();
        ByteBuffer header = ByteBuffer.allocate(20 + length);
        header.putLong(NbdProtocol.OPTION_REPLY_MAGIC)
                .putInt(option)
                .putInt(type)
                .putInt(length);
        if (data != null) {
            header.put(data);
        }
        writeFully(header.flip());
    }

    private void writeFully(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
