package org.raidfive.cli;

import java.io.IOException;

/**
 * A network member (an NBD URI) that cannot be reached: no server, a refused connection, an unknown
 * export, a failed handshake. Bad input, like a missing member file: exit 2 (4 for {@code detail}),
 * one line naming the URI and why.
 */
final class MemberUnreachableException extends IOException {
    private static final long serialVersionUID = 1L;

    MemberUnreachableException(String spec, IOException cause) {
        super(spec + ": cannot reach the NBD export: " + reason(spec, cause), cause);
    }

    /** The client's message without a leading "cannot connect to URI: " or "URI: " that repeats the spec. */
    private static String reason(String spec, IOException cause) {
        String m = cause.getMessage() == null ? cause.toString() : cause.getMessage();
        for (String prefix : new String[] {"cannot connect to ", ""}) {
            if (m.startsWith(prefix)) {
                String rest = m.substring(prefix.length());
                int colon = rest.indexOf(": ");
                if (colon > 0 && (rest.startsWith("nbd://") || rest.startsWith("nbd+unix://"))) {
                    return (prefix.isEmpty() ? "" : "cannot connect: ") + rest.substring(colon + 2);
                }
            }
        }
        return m;
    }
}
