package org.raidfive.nbd;

/**
 * Wire constants of the NBD protocol (fixed newstyle handshake, simple replies), as named in
 * {@code doc/proto.md} of the NetworkBlockDevice/nbd repository. Every field is big-endian.
 */
final class NbdProtocol {
    private NbdProtocol() {}

    static final int DEFAULT_PORT = 10809;

    // Handshake magics.
    static final long NBDMAGIC = 0x4e42444d41474943L; // "NBDMAGIC"
    static final long IHAVEOPT = 0x49484156454F5054L; // "IHAVEOPT"
    static final long OLDSTYLE_MAGIC = 0x00420281861253L; // cliserv_magic
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;

    // Handshake flags (server, 16 bits) and client flags (32 bits).
    static final int FLAG_FIXED_NEWSTYLE = 1;
    static final int FLAG_NO_ZEROES = 1 << 1;
    static final int FLAG_C_FIXED_NEWSTYLE = 1;
    static final int FLAG_C_NO_ZEROES = 1 << 1;

    // Transmission flags (16 bits).
    static final int FLAG_HAS_FLAGS = 1;
    static final int FLAG_READ_ONLY = 1 << 1;
    static final int FLAG_SEND_FLUSH = 1 << 2;
    static final int FLAG_SEND_FUA = 1 << 3;
    static final int FLAG_ROTATIONAL = 1 << 4;
    static final int FLAG_SEND_TRIM = 1 << 5;
    static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    static final int FLAG_SEND_DF = 1 << 7;
    static final int FLAG_CAN_MULTI_CONN = 1 << 8;

    // Options.
    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_ABORT = 2;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int OPT_INFO = 6;
    static final int OPT_GO = 7;
    static final int OPT_STRUCTURED_REPLY = 8;
    static final int OPT_LIST_META_CONTEXT = 9;
    static final int OPT_SET_META_CONTEXT = 10;
    static final int OPT_EXTENDED_HEADERS = 11;

    // Option reply types.
    static final int REP_ACK = 1;
    static final int REP_SERVER = 2;
    static final int REP_INFO = 3;
    static final int REP_FLAG_ERROR = 1 << 31;
    static final int REP_ERR_UNSUP = REP_FLAG_ERROR | 1;
    static final int REP_ERR_POLICY = REP_FLAG_ERROR | 2;
    static final int REP_ERR_INVALID = REP_FLAG_ERROR | 3;
    static final int REP_ERR_PLATFORM = REP_FLAG_ERROR | 4;
    static final int REP_ERR_TLS_REQD = REP_FLAG_ERROR | 5;
    static final int REP_ERR_UNKNOWN = REP_FLAG_ERROR | 6;
    static final int REP_ERR_SHUTDOWN = REP_FLAG_ERROR | 7;
    static final int REP_ERR_BLOCK_SIZE_REQD = REP_FLAG_ERROR | 8;
    static final int REP_ERR_TOO_BIG = REP_FLAG_ERROR | 9;

    // NBD_REP_INFO types.
    static final int INFO_EXPORT = 0;
    static final int INFO_NAME = 1;
    static final int INFO_DESCRIPTION = 2;
    static final int INFO_BLOCK_SIZE = 3;

    // Transmission: request and simple reply.
    static final int REQUEST_MAGIC = 0x25609513;
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    static final int REQUEST_HEADER_BYTES = 28;
    static final int SIMPLE_REPLY_BYTES = 16;

    // Commands.
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_TRIM = 4;
    static final int CMD_CACHE = 5;
    static final int CMD_WRITE_ZEROES = 6;
    static final int CMD_BLOCK_STATUS = 7;

    // Command flags.
    static final int CMD_FLAG_FUA = 1;
    static final int CMD_FLAG_NO_HOLE = 1 << 1;
    static final int CMD_FLAG_DF = 1 << 2;
    static final int CMD_FLAG_REQ_ONE = 1 << 3;
    static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    // Error values carried in replies.
    static final int EPERM = 1;
    static final int EIO = 5;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EOVERFLOW = 75;
    static final int ENOTSUP = 95;
    static final int ESHUTDOWN = 108;

    /** Strings are limited to 4096 bytes by the protocol. */
    static final int MAX_STRING_BYTES = 4096;

    static String errorName(int error) {
        switch (error) {
            case 0:
                return "OK";
            case EPERM:
                return "EPERM";
            case EIO:
                return "EIO";
            case ENOMEM:
                return "ENOMEM";
            case EINVAL:
                return "EINVAL";
            case ENOSPC:
                return "ENOSPC";
            case EOVERFLOW:
                return "EOVERFLOW";
            case ENOTSUP:
                return "ENOTSUP";
            case ESHUTDOWN:
                return "ESHUTDOWN";
            default:
                return "error " + error;
        }
    }

    static String optionName(int option) {
        switch (option) {
            case OPT_EXPORT_NAME:
                return "NBD_OPT_EXPORT_NAME";
            case OPT_ABORT:
                return "NBD_OPT_ABORT";
            case OPT_LIST:
                return "NBD_OPT_LIST";
            case OPT_STARTTLS:
                return "NBD_OPT_STARTTLS";
            case OPT_INFO:
                return "NBD_OPT_INFO";
            case OPT_GO:
                return "NBD_OPT_GO";
            case OPT_STRUCTURED_REPLY:
                return "NBD_OPT_STRUCTURED_REPLY";
            case OPT_LIST_META_CONTEXT:
                return "NBD_OPT_LIST_META_CONTEXT";
            case OPT_SET_META_CONTEXT:
                return "NBD_OPT_SET_META_CONTEXT";
            case OPT_EXTENDED_HEADERS:
                return "NBD_OPT_EXTENDED_HEADERS";
            default:
                return "option " + Integer.toUnsignedString(option);
        }
    }

    static String replyName(int reply) {
        switch (reply) {
            case REP_ACK:
                return "NBD_REP_ACK";
            case REP_SERVER:
                return "NBD_REP_SERVER";
            case REP_INFO:
                return "NBD_REP_INFO";
            case REP_ERR_UNSUP:
                return "NBD_REP_ERR_UNSUP";
            case REP_ERR_POLICY:
                return "NBD_REP_ERR_POLICY";
            case REP_ERR_INVALID:
                return "NBD_REP_ERR_INVALID";
            case REP_ERR_PLATFORM:
                return "NBD_REP_ERR_PLATFORM";
            case REP_ERR_TLS_REQD:
                return "NBD_REP_ERR_TLS_REQD";
            case REP_ERR_UNKNOWN:
                return "NBD_REP_ERR_UNKNOWN";
            case REP_ERR_SHUTDOWN:
                return "NBD_REP_ERR_SHUTDOWN";
            case REP_ERR_BLOCK_SIZE_REQD:
                return "NBD_REP_ERR_BLOCK_SIZE_REQD";
            case REP_ERR_TOO_BIG:
                return "NBD_REP_ERR_TOO_BIG";
            default:
                return "reply " + Integer.toUnsignedString(reply);
        }
    }
}
