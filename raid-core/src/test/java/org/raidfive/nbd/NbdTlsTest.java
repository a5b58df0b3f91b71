package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.MemoryDisk;

/**
 * NBD_OPT_STARTTLS between raidfive's server and client: a PKCS#12 server key made with the JDK's
 * keytool, its certificate as the client's ca-cert.pem; pipelined I/O from several threads over
 * TLS reads back what was written; a plain client is refused by a TLS-only server; a client that
 * does not trust the certificate fails the handshake.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NbdTlsTest {
    @TempDir
    static Path dir;

    static Path p12;
    static Path trust;
    static Path untrusted;

    private static void keytool(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
    }

    @BeforeAll
    static void credentials() throws Exception {
        p12 = dir.resolve("server.p12");
        keytool(
                "-genkeypair",
                "-alias",
                "srv",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=dns:localhost,ip:127.0.0.1",
                "-validity",
                "2",
                "-keystore",
                p12.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                "secret",
                "-keypass",
                "secret");
        trust = Files.createDirectories(dir.resolve("trust"));
        keytool(
                "-exportcert",
                "-rfc",
                "-alias",
                "srv",
                "-keystore",
                p12.toString(),
                "-storepass",
                "secret",
                "-file",
                trust.resolve("ca-cert.pem").toString());
        Path other = dir.resolve("other.p12");
        keytool(
                "-genkeypair",
                "-alias",
                "o",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=ip:127.0.0.1",
                "-validity",
                "2",
                "-keystore",
                other.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                "secret",
                "-keypass",
                "secret");
        untrusted = Files.createDirectories(dir.resolve("untrusted"));
        keytool(
                "-exportcert",
                "-rfc",
                "-alias",
                "o",
                "-keystore",
                other.toString(),
                "-storepass",
                "secret",
                "-file",
                untrusted.resolve("ca-cert.pem").toString());
    }

    @Test
    void aKeyThatIsNotTheCertificatesIsRefusedAtStart() throws Exception {
        java.security.KeyStore mine = java.security.KeyStore.getInstance("PKCS12");
        try (java.io.InputStream in = Files.newInputStream(p12)) {
            mine.load(in, "secret".toCharArray());
        }
        java.security.KeyStore theirs = java.security.KeyStore.getInstance("PKCS12");
        try (java.io.InputStream in = Files.newInputStream(dir.resolve("other.p12"))) {
            theirs.load(in, "secret".toCharArray());
        }
        java.security.PrivateKey key = (java.security.PrivateKey) mine.getKey("srv", "secret".toCharArray());
        TlsCredentials.checkPair(key, mine.getCertificate("srv"), Path.of("key.pem"), Path.of("cert.pem"));
        IOException e = assertThrows(
                IOException.class,
                () -> TlsCredentials.checkPair(
                        key, theirs.getCertificate("o"), Path.of("key.pem"), Path.of("cert.pem")));
        assertTrue(e.getMessage().contains("is not the private key of cert.pem"), e.getMessage());
    }

    private static NbdServer server(TlsMode mode, RequestExecution execution) throws IOException {
        return NbdServer.start(
                new MemoryDisk(32 << 20),
                NbdServerConfig.builder()
                        .port(0)
                        .requestExecution(execution)
                        .tls(mode, TlsCredentials.server(p12, "secret".toCharArray()))
                        .build());
    }

    @Test
    void pipelinedIoOverTlsReadsBackWhatWasWritten() throws Exception {
        for (RequestExecution execution : RequestExecution.values()) {
            try (NbdServer s = server(TlsMode.REQUIRE, execution);
                    NbdDisk d = NbdDisk.open("nbds://127.0.0.1:" + s.port() + "/raid?tls-certificates=" + trust)) {
                assertTrue(s.uri().startsWith("nbds://"), s.uri());
                ExecutorService pool = Executors.newFixedThreadPool(4);
                List<Future<?>> jobs = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int thread = t;
                    jobs.add(pool.submit(() -> {
                        Random r = new Random(thread);
                        for (int i = 0; i < 200; i++) {
                            int len = 4096 * (1 + r.nextInt(64));
                            long at = (thread * (8L << 20)) + 4096L * r.nextInt(1024);
                            byte[] data = new byte[len];
                            r.nextBytes(data);
                            d.write(at, ByteBuffer.wrap(data), 0, len);
                            ByteBuffer back = ByteBuffer.allocate(len);
                            d.read(at, back, 0, len);
                            assertArrayEquals(data, back.array());
                        }
                        return null;
                    }));
                }
                for (Future<?> f : jobs) {
                    f.get();
                }
                pool.shutdown();
                d.flush();
            }
        }
    }

    @Test
    void optionalTlsServesBothAndRequiredTlsRefusesPlainText() throws Exception {
        try (NbdServer s = server(TlsMode.ON, RequestExecution.WORKER_POOL);
                NbdDisk plain = NbdDisk.open("nbd://127.0.0.1:" + s.port() + "/raid");
                NbdDisk tls = NbdDisk.open("nbds://127.0.0.1:" + s.port() + "/raid?tls-certificates=" + trust)) {
            assertEquals(plain.size(), tls.size());
        }
        try (NbdServer s = server(TlsMode.REQUIRE, RequestExecution.WORKER_POOL)) {
            IOException e =
                    assertThrows(IOException.class, () -> NbdDisk.open("nbd://127.0.0.1:" + s.port() + "/raid"));
            assertTrue(e.getMessage().contains("TLS"), e.getMessage());
            IOException bad = assertThrows(
                    IOException.class,
                    () -> NbdDisk.open("nbds://127.0.0.1:" + s.port() + "/raid?tls-certificates=" + untrusted));
            assertTrue(bad.getMessage().contains("TLS handshake failed"), bad.getMessage());
        }
    }
}
