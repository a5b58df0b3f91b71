package org.raidfive.nbd;

/** TLS on an NBD server (NBD_OPT_STARTTLS), as qemu-nbd and nbdkit name the choice. */
public enum TlsMode {
    /** No TLS: NBD_OPT_STARTTLS is answered "unsupported". */
    OFF,
    /** Clients may upgrade with NBD_OPT_STARTTLS, or stay in plain text. */
    ON,
    /** Clients must upgrade before anything else: every other option is refused with NBD_REP_ERR_TLS_REQD. */
    REQUIRE
}
