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
public record ExportInfo(
        String name,
        long size,
        int transmissionFlags,
        int minimumBlockSize,
        int preferredBlockSize,
        long maximumBlockSize) {

    /** True when the server refuses writes (NBD_FLAG_READ_ONLY). */
    public boolean readOnly() {
        return has(NbdProtocol.FLAG_READ_ONLY);
    }

    /** True when the server takes NBD_CMD_FLUSH. */
    public boolean canFlush() {
        return has(NbdProtocol.FLAG_SEND_FLUSH);
    }

    /** True when the server honours NBD_CMD_FLAG_FUA. */
    public boolean canFua() {
        return has(NbdProtocol.FLAG_SEND_FUA);
    }

    /** True when the server takes NBD_CMD_TRIM. */
    public boolean canTrim() {
        return has(NbdProtocol.FLAG_SEND_TRIM);
    }

    /** True when the server takes NBD_CMD_WRITE_ZEROES. */
    public boolean canWriteZeroes() {
        return has(NbdProtocol.FLAG_SEND_WRITE_ZEROES);
    }

    /** True when the server allows several connections to one export (NBD_FLAG_CAN_MULTI_CONN). */
    public boolean canMultiConn() {
        return has(NbdProtocol.FLAG_CAN_MULTI_CONN);
    }

    private boolean has(int flag) {
        return (transmissionFlags & flag) != 0;
    }
}
