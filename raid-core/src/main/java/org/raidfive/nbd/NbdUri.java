package org.raidfive.nbd;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * An NBD URI as specified by {@code doc/uri.md} of the NetworkBlockDevice/nbd repository:
 * {@code nbd://host[:port][/exportname]} (port defaults to 10809) and
 * {@code nbd+unix:///[exportname]?socket=PATH}. The export name is the percent-decoded path
 * without its leading {@code /} ({@code nbd://h//disk} names {@code /disk}; no path names the
 * empty default export). Immutable.
 *
 * <p>TLS: {@code nbds://} and {@code nbds+unix://} ask for NBD_OPT_STARTTLS (required: no
 * fall-back to plain text), with {@code tls-certificates=DIR} naming where {@code ca-cert.pem}
 * (and a client's {@code client-cert.pem}/{@code client-key.pem}) are, as libnbd reads it.
 *
 * <p>Rejected with an {@link IllegalArgumentException} that says why: TLS query parameters on a
 * plain URI or other than {@code tls-certificates}, a missing host for TCP, an
 * authority or missing {@code socket} for Unix sockets, abstract-namespace sockets, unknown query
 * parameters, fragments, bad ports and bad percent-encoding.
 */
public final class NbdUri {
    /** How the URI reaches the server: TCP ({@code nbd://}) or a Unix socket ({@code nbd+unix://}). */
    public enum Transport {
        /** {@code nbd://host:port/export} */
        TCP,
        /** {@code nbd+unix:///export?socket=path} */
        UNIX
    }

    private final Transport transport;
    private final String host;
    private final int port;
    private final Path socket;
    private final String exportName;
    private final boolean tls;
    private final Path tlsCertificates;

    private NbdUri(Transport transport, String host, int port, Path socket, String exportName) {
        this.transport = transport;
        this.host = host;
        this.port = port;
        this.socket = socket;
        this.exportName = exportName;
        this.tls = false;
        this.tlsCertificates = null;
    }

    /** {@code plain} with TLS required, trusting {@code certificates} (null: the JDK's trust store). */
    private NbdUri(NbdUri plain, Path certificates) {
        this.transport = plain.transport;
        this.host = plain.host;
        this.port = plain.port;
        this.socket = plain.socket;
        this.exportName = plain.exportName;
        this.tls = true;
        this.tlsCertificates = certificates;
    }

    /** This URI with TLS required, trusting {@code certificates/ca-cert.pem} (null: the JDK's trust store). */
    public NbdUri withTls(Path certificates) {
        return new NbdUri(this, certificates);
    }

    /** True for {@code nbds} schemes: the client must switch to TLS before anything else. */
    public boolean tls() {
        return tls;
    }

    /** The {@code tls-certificates} directory, or null. */
    public Path tlsCertificates() {
        return tlsCertificates;
    }

    /** {@code nbd://host:port/exportName}. */
    public static NbdUri tcp(String host, int port, String exportName) {
        Objects.requireNonNull(host, "host");
        if (host.isEmpty()) {
            throw new IllegalArgumentException("NBD host must not be empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("NBD port must be 1 to 65535, got " + port);
        }
        return new NbdUri(Transport.TCP, host, port, null, checkName(exportName));
    }

    /** {@code nbd+unix:///exportName?socket=socket}. */
    public static NbdUri unix(String exportName, Path socket) {
        Objects.requireNonNull(socket, "socket");
        return new NbdUri(Transport.UNIX, null, -1, socket, checkName(exportName));
    }

    /**
     * True when {@code text} names an NBD URI by its scheme ({@code nbd:}, {@code nbd+unix:},
     * {@code nbds:}, {@code nbds+unix:}, any case), so a command line can route it to
     * {@link NbdDisk} instead of a file. {@link #parse} may still reject it.
     */
    public static boolean isNbdUri(String text) {
        if (text == null) {
            return false;
        }
        int colon = text.indexOf(':');
        if (colon < 0) {
            return false;
        }
        String scheme = text.substring(0, colon).toLowerCase(Locale.ROOT);
        return scheme.equals("nbd") || scheme.equals("nbd+unix") || scheme.equals("nbds") || scheme.equals("nbds+unix");
    }

    /** Parses an NBD URI, or throws {@link IllegalArgumentException} naming what is wrong. */
    public static NbdUri parse(String text) {
        Objects.requireNonNull(text, "uri");
        int colon = text.indexOf(':');
        if (colon < 0 || !isNbdUri(text)) {
            throw bad(text, "scheme must be nbd:// or nbd+unix://");
        }
        String scheme = text.substring(0, colon).toLowerCase(Locale.ROOT);
        boolean tls = scheme.startsWith("nbds");
        if (tls) {
            scheme = scheme.equals("nbds") ? "nbd" : "nbd+unix";
        }
        String rest = text.substring(colon + 1);
        if (!rest.startsWith("//")) {
            throw bad(text, "expected '//' after '" + scheme + ":'");
        }
        rest = rest.substring(2);
        int hash = rest.indexOf('#');
        if (hash >= 0) {
            throw bad(text, "fragments ('#...') are not allowed");
        }
        String query = null;
        int question = rest.indexOf('?');
        if (question >= 0) {
            query = rest.substring(question + 1);
            rest = rest.substring(0, question);
        }
        int slash = rest.indexOf('/');
        String authority = slash >= 0 ? rest.substring(0, slash) : rest;
        String exportName = slash >= 0 ? decode(text, rest.substring(slash + 1)) : "";
        String socketParam = null;
        Path certificates = null;
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&", -1)) {
                int eq = pair.indexOf('=');
                String key = decode(text, eq >= 0 ? pair.substring(0, eq) : pair);
                String value = eq >= 0 ? decode(text, pair.substring(eq + 1)) : "";
                if (key.equals("socket")) {
                    if (socketParam != null) {
                        throw bad(text, "the socket parameter is given twice");
                    }
                    socketParam = value;
                } else if (key.equals("tls-certificates")) {
                    if (!tls) {
                        throw bad(text, "tls-certificates belongs to nbds:// or nbds+unix:// URIs");
                    }
                    certificates = Path.of(value);
                } else if (key.startsWith("tls-")) {
                    throw bad(text, "TLS parameter '" + key + "' is not supported (only tls-certificates=)");
                } else {
                    throw bad(text, "unknown query parameter '" + key + "' (only socket= is understood)");
                }
            }
        }
        if (scheme.equals("nbd+unix")) {
            if (!authority.isEmpty()) {
                throw bad(text, "a Unix socket URI has no host: write nbd+unix:///export?socket=PATH");
            }
            if (socketParam == null || socketParam.isEmpty()) {
                throw bad(text, "nbd+unix needs ?socket=PATH");
            }
            if (socketParam.charAt(0) == '\0') {
                throw bad(text, "abstract-namespace Unix sockets are not supported");
            }
            NbdUri u = unix(checkName(text, exportName), Path.of(socketParam));
            return tls ? u.withTls(certificates) : u;
        }
        if (socketParam != null) {
            throw bad(text, "socket= belongs to nbd+unix:// URIs, not nbd://");
        }
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            authority = authority.substring(at + 1); // userinfo is only for TLS authentication
        }
        String host;
        String portText = null;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) {
                throw bad(text, "unterminated IPv6 literal");
            }
            host = authority.substring(1, close);
            String after = authority.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw bad(text, "unexpected '" + after + "' after the IPv6 literal");
                }
                portText = after.substring(1);
            }
        } else {
            int portColon = authority.lastIndexOf(':');
            host = portColon >= 0 ? authority.substring(0, portColon) : authority;
            portText = portColon >= 0 ? authority.substring(portColon + 1) : null;
        }
        host = decode(text, host);
        if (host.isEmpty()) {
            throw bad(text, "nbd:// needs a host, e.g. nbd://127.0.0.1:10809/export");
        }
        int port = NbdProtocol.DEFAULT_PORT;
        if (portText != null && !portText.isEmpty()) {
            if (!portText.chars().allMatch(c -> c >= '0' && c <= '9') || portText.length() > 5) {
                throw bad(text, "port '" + portText + "' is not a number from 1 to 65535");
            }
            port = Integer.parseInt(portText);
            if (port < 1 || port > 65535) {
                throw bad(text, "port " + port + " is not from 1 to 65535");
            }
        }
        NbdUri u = tcp(host, port, checkName(text, exportName));
        return tls ? u.withTls(certificates) : u;
    }

    /** TCP or Unix socket. */
    public Transport transport() {
        return transport;
    }

    /** Host for TCP, null for a Unix socket. */
    public String host() {
        return host;
    }

    /** Port for TCP, -1 for a Unix socket. */
    public int port() {
        return port;
    }

    /** Socket path for a Unix socket, null for TCP. */
    public Path socket() {
        return socket;
    }

    /** The export's name (empty for the server's default export). */
    public String exportName() {
        return exportName;
    }

    /** The address to connect to; for TCP the host name is resolved now. */
    public SocketAddress socketAddress() {
        return transport == Transport.UNIX ? UnixDomainSocketAddress.of(socket) : new InetSocketAddress(host, port);
    }

    /** The canonical text: {@code nbd://host:port/export} or {@code nbd+unix:///export?socket=path}. */
    @Override
    public String toString() {
        String s = tls ? "nbds" : "nbd";
        String certs = tlsCertificates == null ? "" : "tls-certificates=" + encode(tlsCertificates.toString(), true);
        if (transport == Transport.UNIX) {
            return s + "+unix:///" + encode(exportName, true) + "?socket=" + encode(socket.toString(), true)
                    + (certs.isEmpty() ? "" : "&" + certs);
        }
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : encode(host, false);
        return s + "://" + h + ":" + port + "/" + encode(exportName, true) + (certs.isEmpty() ? "" : "?" + certs);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NbdUri && o.toString().equals(toString());
    }

    @Override
    public int hashCode() {
        return toString().hashCode();
    }

    private static String checkName(String name) {
        return checkName(null, name);
    }

    private static String checkName(String text, String name) {
        Objects.requireNonNull(name, "exportName");
        if (name.indexOf('\0') >= 0) {
            throw text == null
                    ? new IllegalArgumentException("export name must not contain NUL")
                    : bad(text, "export name must not contain NUL");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > NbdProtocol.MAX_STRING_BYTES) {
            String why = "export name longer than " + NbdProtocol.MAX_STRING_BYTES + " bytes";
            throw text == null ? new IllegalArgumentException(why) : bad(text, why);
        }
        return name;
    }

    private static IllegalArgumentException bad(String text, String why) {
        return new IllegalArgumentException("bad NBD URI '" + text + "': " + why);
    }

    /** RFC 3986 percent-decoding (a '+' stays a '+'), then strict UTF-8. */
    private static String decode(String text, String part) {
        if (part.indexOf('%') < 0) {
            return part;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(part.length());
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (c == '%') {
                if (i + 2 >= part.length()) {
                    throw bad(text, "truncated percent-escape in '" + part + "'");
                }
                int hi = Character.digit(part.charAt(i + 1), 16);
                int lo = Character.digit(part.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw bad(text, "bad percent-escape '" + part.substring(i, i + 3) + "'");
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else {
                byte[] utf8 = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                if (Character.isHighSurrogate(c) && i + 1 < part.length()) {
                    utf8 = part.substring(i, i + 2).getBytes(StandardCharsets.UTF_8);
                    i++;
                }
                bytes.write(utf8, 0, utf8.length);
            }
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw bad(text, "percent-escapes in '" + part + "' are not valid UTF-8");
        }
    }

    /** Percent-encodes all but unreserved characters (and '/' when {@code keepSlash}). */
    private static String encode(String s, boolean keepSlash) {
        StringBuilder out = new StringBuilder(s.length());
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            boolean plain = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '-'
                    || c == '.'
                    || c == '_'
                    || c == '~'
                    || (keepSlash && c == '/');
            if (plain) {
                out.append((char) c);
            } else {
                out.append('%')
                        .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return out.toString();
    }
}
