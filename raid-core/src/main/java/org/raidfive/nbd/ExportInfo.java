package org.raidfive.nbd;

/**
 * What the server told the client about the export during the handshake. Block sizes the server
 * did not report take the protocol's defaults: minimum 1, preferred 4096, maximum 32 MiB.
 *
 * @param name               the export name the client asked for
 * @param size               size in bytes
 * @param transmissionFlags  NBD_FLAG_* transmission flags (16 bits)
 * @param minimumBlockSize   smallest addressable unit
 * @param preferredBlockSize size for efficient I/O
 * @param maximumBlockSize   largest READ/WRITE payload the server accepts
 */
public record ExportInfo(String name, long size, int transmissionFlags, int minimumBlockSize,
                         int preferredBlockSize, long maximumBlockSize) {

    public boolean readOnly() {
        return has(NbdProtocol.FLAG_READ_ONLY);
    }

    public boolean canFlush() {
        return has(NbdProtocol.FLAG_SEND_FLUSH);
    }

    public boolean canFua() {
        return has(NbdProtocol.FLAG_SEND_FUA);
    }

    public boolean canTrim() {
        return has(NbdProtocol.FLAG_SEND_TRIM);
    }

    public boolean canWriteZeroes() {
        return has(NbdProtocol.FLAG_SEND_WRITE_ZEROES);
    }

    public boolean canMultiConn() {
        return has(NbdProtocol.FLAG_CAN_MULTI_CONN);
    }

    private boolean has(int flag) {
        return (transmissionFlags & flag) != 0;
    }
}
