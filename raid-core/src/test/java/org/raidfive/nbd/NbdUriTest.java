package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The examples of doc/uri.md, and the mistakes users make. */
class NbdUriTest {

    @ParameterizedTest(name = "{0} -> export ''{1}''")
    @CsvSource(
            delimiter = '|',
            value = {
                "nbd://example.com/disk           | disk",
                "nbd://example.com/               | ''",
                "nbd://example.com                | ''",
                "nbd://example.com//disk          | /disk",
                "nbd://example.com/hello%20world  | hello world",
                "nbd://example.com/a+b            | a+b",
                "nbd://example.com/%C3%A9t%C3%A9  | été",
            })
    void exportNameIsThePathWithoutItsSlash(String uri, String export) {
        NbdUri parsed = NbdUri.parse(uri);
        assertEquals(export, parsed.exportName());
        assertEquals(NbdUri.Transport.TCP, parsed.transport());
        assertEquals("example.com", parsed.host());
        assertEquals(10809, parsed.port(), "IANA default port");
    }

    @Test
    void hostPortAndIpv6() {
        NbdUri v4 = NbdUri.parse("nbd://127.0.0.1:12345/raid");
        assertEquals("127.0.0.1", v4.host());
        assertEquals(12345, v4.port());
        assertEquals("raid", v4.exportName());
        NbdUri v6 = NbdUri.parse("nbd://[::1]:10810/x");
        assertEquals("::1", v6.host());
        assertEquals(10810, v6.port());
        assertEquals("nbd://[::1]:10810/x", v6.toString());
        assertEquals("h", NbdUri.parse("nbd://user@h:1/").host(), "userinfo is ignored");
        assertEquals("e", NbdUri.parse("NBD://h:1/e").exportName(), "scheme is case-insensitive");
    }

    @Test
    void unixSocket() {
        NbdUri uri = NbdUri.parse("nbd+unix:///disk?socket=/tmp/my%20sock");
        assertEquals(NbdUri.Transport.UNIX, uri.transport());
        assertEquals("disk", uri.exportName());
        assertEquals(Path.of("/tmp/my sock"), uri.socket());
        assertNull(uri.host());
        assertEquals("nbd+unix:///disk?socket=/tmp/my%20sock", uri.toString());
        assertEquals("", NbdUri.parse("nbd+unix://?socket=s").exportName());
        assertEquals(
                Path.of("relative.sock"),
                NbdUri.parse("nbd+unix:///?socket=relative.sock").socket());
    }

    @Test
    void toStringRoundTrips() {
        for (String text : new String[] {"nbd://h:1/a%20b", "nbd://h:10809/", "nbd+unix:////x?socket=/s"}) {
            assertEquals(text, NbdUri.parse(text).toString());
            assertEquals(NbdUri.parse(text), NbdUri.parse(NbdUri.parse(text).toString()));
        }
        assertEquals("/x", NbdUri.parse("nbd+unix:///%2Fx?socket=/s").exportName());
    }

    @Test
    void tlsSchemesAskForTlsAndNameTheCertificates() {
        NbdUri u = NbdUri.parse("nbds://h:1234/x?tls-certificates=/etc/pki/raid");
        assertTrue(u.tls());
        assertEquals(Path.of("/etc/pki/raid"), u.tlsCertificates());
        assertEquals("nbds://h:1234/x?tls-certificates=/etc/pki/raid", u.toString());
        NbdUri unix = NbdUri.parse("nbds+unix:///x?socket=/s&tls-certificates=/c");
        assertTrue(unix.tls() && unix.transport() == NbdUri.Transport.UNIX);
        assertEquals(unix, NbdUri.parse(unix.toString()));
        assertFalse(NbdUri.parse("nbd://h/x").tls());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "nbd://h/x?tls-certificates=/d  | tls-certificates belongs to nbds",
                "nbds://h/x?tls-type=x509       | TLS parameter 'tls-type'",
                "nbd+unix:///x                  | socket=",
                "nbd+unix://host/x?socket=s     | no host",
                "nbd://h/x?socket=s             | nbd+unix",
                "nbd:///x                       | needs a host",
                "nbd://h:0/x                    | port",
                "nbd://h:65536/x                | port",
                "nbd://h:12ab/x                 | port",
                "nbd://h/x?bogus=1              | unknown query parameter 'bogus'",
                "nbd://h/x#frag                 | fragment",
                "nbd://h/%zz                    | percent-escape",
                "nbd://h/%4                     | percent-escape",
                "nbd://h/%C3                    | UTF-8",
                "nbd:h/x                        | '//'",
                "http://h/x                     | scheme",
                "nbd+unix:///x?socket=%00abs    | abstract",
                "nbd://h/a%00b                  | NUL",
                "nbd://[::1/x                   | IPv6",
            })
    void badUrisAreRejectedWithTheReason(String uri, String reason) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NbdUri.parse(uri));
        assertTrue(e.getMessage().contains(reason), e.getMessage());
        assertTrue(e.getMessage().contains(uri), "message names the URI: " + e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"nbd://h/x", "NBD://h", "nbd+unix:///x?socket=s", "nbds://h", "nbds+unix:///?socket=s"})
    void isNbdUriRecognisesTheSchemes(String text) {
        assertTrue(NbdUri.isNbdUri(text));
        assertTrue(NbdDisk.isNbdUri(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/dev/sdb", "disk.img", "C:\\disk.img", "file:///x", "nbdx://h", "", "nbd"})
    void isNbdUriRejectsFiles(String text) {
        assertFalse(NbdUri.isNbdUri(text));
    }

    @Test
    void isNbdUriOfNullIsFalse() {
        assertFalse(NbdUri.isNbdUri(null));
    }
}
