package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code raid serve} with TLS and access control, proved with real clients and certificates this
 * test makes (openssl): nbdinfo and nbdcopy over {@code nbds://}, qemu-img with tls-creds-x509; a
 * client without the CA, without a client certificate where one is required, or in plain text is
 * refused; {@code --allow} refuses other addresses; {@code --no-list} hides the export; a bind
 * beyond this host needs TLS or {@code --insecure}. And raidfive's own NBD client over TLS: an
 * array of nbdkit {@code --tls=require} exports.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TlsIT {
    private static final Duration T = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    Path server;
    Path client;
    Path clientNoCert;
    Path otherCa;

    /** A CA, a server certificate for localhost/127.0.0.1, a client certificate, and a second CA. */
    @BeforeEach
    void certificates() throws Exception {
        Tools.assumeInstalled("openssl", "openssl");
        Path work = Files.createDirectories(dir.resolve("pki"));
        Tools.runOk(
                work,
                T,
                "bash",
                "-c",
                String.join(
                        "\n",
                        "set -e",
                        "ca() { openssl req -x509 -newkey rsa:2048 -nodes -keyout $1-key.pem -out $1-cert.pem -days 2 "
                                + "-subj /CN=$1 -addext basicConstraints=critical,CA:TRUE "
                                + "-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null; }",
                        "ca ca; ca other",
                        "for who in server client; do",
                        "  openssl req -newkey rsa:2048 -nodes -keyout $who-key.pem -out $who.csr -subj /CN=localhost 2>/dev/null",
                        "  eku=clientAuth; [ $who = server ] && eku=serverAuth",
                        "  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nextendedKeyUsage=%s\\n"
                                + "keyUsage=critical,digitalSignature,keyEncipherment\\nbasicConstraints=CA:FALSE\\n' $eku > $who.ext",
                        "  openssl x509 -req -in $who.csr -CA ca-cert.pem -CAkey ca-key.pem -CAcreateserial -out $who-cert.pem "
                                + "-days 2 -extfile $who.ext 2>/dev/null",
                        "done"));
        server = layout("server", "ca-cert.pem", "server-cert.pem", "server-key.pem");
        client = layout("client", "ca-cert.pem", "client-cert.pem", "client-key.pem");
        clientNoCert = layout("client-nocert", "ca-cert.pem");
        otherCa = Files.createDirectories(dir.resolve("other"));
        Files.copy(dir.resolve("pki/other-cert.pem"), otherCa.resolve("ca-cert.pem"));
    }

    private Path layout(String name, String... files) throws Exception {
        Path d = Files.createDirectories(dir.resolve(name));
        for (String f : files) {
            Files.copy(dir.resolve("pki").resolve(f), d.resolve(f));
        }
        return d;
    }

    private static String tcp(Served s) {
        return s.uri().replaceFirst("^nbds?://", "").replaceFirst("/.*$", ""); // host:port
    }

    private static String nbds(Served s, Path certs) {
        return "nbds://" + tcp(s) + "/raid?tls-certificates=" + certs;
    }

    @Test
    void realClientsUseTlsAndClientsWithoutTheRightCredentialsAreRefused() throws Exception {
        Tools.assumeInstalled("nbdinfo", "libnbd-bin");
        Tools.assumeInstalled("nbdcopy", "libnbd-bin");
        try (Served s = Served.start(
                dir,
                "--backend",
                "memory",
                "--disks",
                "3",
                "--size",
                "32M",
                "--port",
                "0",
                "--tls",
                "require",
                "--tls-certificates",
                server.toString())) {
            assertTrue(s.uri().startsWith("nbds://"), s.uri());
            String info = Tools.runOk(dir, T, "nbdinfo", nbds(s, client));
            assertTrue(info.contains("with TLS") && info.contains("export-size: " + s.size()), info);
            Files.write(dir.resolve("in.bin"), MemberFiles.random(8 << 20, 3));
            Tools.runOk(dir, T, "nbdcopy", dir.resolve("in.bin").toString(), nbds(s, client));
            Tools.runOk(
                    dir, T, "nbdcopy", nbds(s, client), dir.resolve("out.bin").toString());
            byte[] back = java.util.Arrays.copyOf(Files.readAllBytes(dir.resolve("out.bin")), 8 << 20);
            assertTrue(java.util.Arrays.equals(Files.readAllBytes(dir.resolve("in.bin")), back), "nbdcopy round trip");
            Tools.Result plain = Tools.run(dir, T, List.of("nbdinfo", "nbd://" + tcp(s) + "/raid"));
            assertTrue(plain.exit() != 0, "plain text refused:\n" + plain.output());
            Tools.Result wrongCa = Tools.run(dir, T, List.of("nbdinfo", nbds(s, otherCa)));
            assertTrue(wrongCa.exit() != 0, "a client that does not trust the server's CA fails:\n" + wrongCa.output());
            if (Files.isExecutable(Path.of("/usr/bin/qemu-img"))) {
                String[] hp = tcp(s).split(":");
                String q = Tools.runOk(
                        dir,
                        T,
                        "qemu-img",
                        "info",
                        "--object",
                        "tls-creds-x509,id=tls0,dir=" + client + ",endpoint=client",
                        "--image-opts",
                        "driver=nbd,host=" + hp[0] + ",port=" + hp[1] + ",export=raid,tls-creds=tls0");
                assertTrue(q.contains("virtual size: 32 MiB"), q);
            }
        }
    }

    @Test
    void aRequiredClientCertificateIsChecked() throws Exception {
        Tools.assumeInstalled("nbdinfo", "libnbd-bin");
        try (Served s = Served.start(
                dir,
                "--backend",
                "memory",
                "--disks",
                "3",
                "--size",
                "16M",
                "--port",
                "0",
                "--tls",
                "require",
                "--tls-certificates",
                server.toString(),
                "--tls-verify-peer")) {
            Tools.runOk(dir, T, "nbdinfo", nbds(s, client));
            Tools.Result noCert = Tools.run(dir, T, List.of("nbdinfo", nbds(s, clientNoCert)));
            assertTrue(noCert.exit() != 0, "no client certificate, no access:\n" + noCert.output());
        }
    }

    @Test
    void allowListNoListAndInsecureBind() throws Exception {
        Tools.assumeInstalled("nbdinfo", "libnbd-bin");
        try (Served s = Served.start(
                dir, "--backend", "memory", "--disks", "3", "--size", "16M", "--port", "0", "--allow", "10.0.0.0/8")) {
            Tools.Result r = Tools.run(dir, T, List.of("nbdinfo", s.uri()));
            assertTrue(r.exit() != 0, "127.0.0.1 is not in 10.0.0.0/8:\n" + r.output());
            assertTrue(s.awaitLine("refused: its address is not in --allow", 10), s.stderr());
        }
        try (Served s = Served.start(
                dir,
                "--backend",
                "memory",
                "--disks",
                "3",
                "--size",
                "16M",
                "--port",
                "0",
                "--allow",
                "127.0.0.0/8",
                "--no-list")) {
            Tools.runOk(dir, T, "nbdinfo", s.uri());
            Tools.Result list = Tools.run(dir, T, List.of("nbdinfo", "--list", s.uri()));
            assertTrue(
                    list.exit() != 0 && !list.output().contains("export=\"raid\""),
                    "the export is not listed:\n" + list.output());
        }
        RaidLauncher.Result open =
                RaidLauncher.run(dir, "serve", "--backend", "memory", "--bind", "0.0.0.0", "--port", "0");
        assertEquals(2, open.exit(), open.all());
        assertTrue(open.messages().get(0).contains("--insecure"), open.all());
    }

    @Test
    void raidfivesOwnClientSpeaksTlsToNbdkit() throws Exception {
        Tools.assumeInstalled("nbdkit", "nbdkit");
        List<Tools.Nbdkit> servers = new ArrayList<>();
        try {
            List<String> members = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Tools.Nbdkit k = Tools.Nbdkit.unix(
                        dir, "k" + i, "--tls=require", "--tls-certificates=" + server, "memory", "16M");
                servers.add(k);
                members.add(k.uri().replaceFirst("^nbd\\+unix:", "nbds+unix:") + "&tls-certificates=" + client);
            }
            List<String> create = new ArrayList<>(List.of("create", "--assume-clean", "--chunk", "64K"));
            create.addAll(members);
            RaidLauncher.Result c = RaidLauncher.run(dir, create.toArray(new String[0]));
            assertEquals(0, c.exit(), c.all());
            Files.write(dir.resolve("d.bin"), MemberFiles.random(1 << 20, 9));
            List<String> write = new ArrayList<>(List.of("write", "--offset", "0", "--input", "d.bin"));
            write.addAll(members);
            assertEquals(0, RaidLauncher.run(dir, write.toArray(new String[0])).exit());
            List<String> read =
                    new ArrayList<>(List.of("read", "--offset", "0", "--length", "1M", "--output", "e.bin"));
            read.addAll(members);
            RaidLauncher.Result r = RaidLauncher.run(dir, read.toArray(new String[0]));
            assertEquals(0, r.exit(), r.all());
            assertTrue(java.util.Arrays.equals(
                    Files.readAllBytes(dir.resolve("d.bin")), Files.readAllBytes(dir.resolve("e.bin"))));
            List<String> plain = new ArrayList<>(List.of("detail"));
            plain.add(servers.get(0).uri());
            RaidLauncher.Result refused = RaidLauncher.run(dir, plain.toArray(new String[0]));
            assertTrue(refused.exit() != 0, "nbdkit requires TLS; plain text fails:\n" + refused.all());
        } finally {
            for (Tools.Nbdkit k : servers) {
                k.close();
            }
        }
    }
}
