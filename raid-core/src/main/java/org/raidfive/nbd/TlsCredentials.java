package org.raidfive.nbd;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.SignatureException;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS keys and trust from files, in the layout qemu ({@code tls-creds-x509,dir=}), nbdkit
 * ({@code --tls-certificates}) and libnbd ({@code nbds://...?tls-certificates=}) share: a directory
 * holding {@code ca-cert.pem}, {@code server-cert.pem} and {@code server-key.pem} (a server), or
 * {@code ca-cert.pem} and optionally {@code client-cert.pem} and {@code client-key.pem} (a
 * client). Private keys in PKCS#8 ({@code BEGIN PRIVATE KEY}) or RSA PKCS#1
 * ({@code BEGIN RSA PRIVATE KEY}); a server key and chain may instead be one PKCS#12 file.
 * Problems are an {@link IOException} naming the file and what is wrong.
 */
public final class TlsCredentials {
    private static final Pattern PEM =
            Pattern.compile("-----BEGIN ([A-Z ]+)-----\\s*([A-Za-z0-9+/=\\s]+?)-----END \\1-----");

    private TlsCredentials() {}

    /**
     * A server's context: from a directory ({@code server-cert.pem}, {@code server-key.pem}, and
     * {@code ca-cert.pem}, which is what client certificates are checked against), or from a
     * PKCS#12 file ({@code .p12}/{@code .pfx}) opened with {@code password}.
     */
    public static SSLContext server(Path source, char[] password) throws IOException {
        try {
            KeyStore keys;
            KeyStore trust = null;
            if (Files.isDirectory(source)) {
                keys = keyStore(source.resolve("server-cert.pem"), source.resolve("server-key.pem"));
                Path ca = source.resolve("ca-cert.pem");
                if (Files.exists(ca)) {
                    trust = trustStore(ca);
                }
                password = new char[0];
            } else {
                keys = KeyStore.getInstance("PKCS12");
                try (InputStream in = Files.newInputStream(source)) {
                    keys.load(in, password);
                } catch (IOException e) {
                    throw new IOException(
                            source + ": not a PKCS#12 file, or the password is wrong (" + e.getMessage() + ")", e);
                }
            }
            return context(keys, password, trust);
        } catch (GeneralSecurityException e) {
            throw new IOException(source + ": " + e.getMessage(), e);
        }
    }

    /** A client's context: trusts {@code dir/ca-cert.pem}; presents {@code client-cert.pem} if there. */
    public static SSLContext client(Path dir) throws IOException {
        try {
            Path ca = dir.resolve("ca-cert.pem");
            if (!Files.exists(ca)) {
                throw new IOException(dir + ": no ca-cert.pem to check the server's certificate against");
            }
            KeyStore keys = null;
            if (Files.exists(dir.resolve("client-cert.pem"))) {
                keys = keyStore(dir.resolve("client-cert.pem"), dir.resolve("client-key.pem"));
            }
            return context(keys, new char[0], trustStore(ca));
        } catch (GeneralSecurityException e) {
            throw new IOException(dir + ": " + e.getMessage(), e);
        }
    }

    private static SSLContext context(KeyStore keys, char[] password, KeyStore trust) throws GeneralSecurityException {
        KeyManager[] km = null;
        if (keys != null) {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, password);
            km = kmf.getKeyManagers();
        }
        TrustManager[] tm = null;
        if (trust != null) {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            tm = tmf.getTrustManagers();
        }
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(km, tm, null);
        return c;
    }

    private static KeyStore keyStore(Path certFile, Path keyFile) throws IOException, GeneralSecurityException {
        List<Certificate> chain = certificates(certFile);
        PrivateKey key = privateKey(keyFile);
        checkPair(key, chain.get(0), keyFile, certFile);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("key", key, new char[0], chain.toArray(new Certificate[0]));
        return ks;
    }

    /**
     * The key must be the certificate's: checked at start (a signature made with the key verified
     * with the certificate), or every client would fail its handshake later with nothing logged.
     */
    static void checkPair(PrivateKey key, Certificate cert, Path keyFile, Path certFile)
            throws IOException, GeneralSecurityException {
        String algorithm;
        switch (key.getAlgorithm()) {
            case "RSA":
                algorithm = "SHA256withRSA";
                break;
            case "EC":
                algorithm = "SHA256withECDSA";
                break;
            case "Ed25519":
            case "Ed448":
            case "EdDSA":
                algorithm = key.getAlgorithm();
                break;
            default:
                return; // a kind we cannot sign with here: the handshake will tell
        }
        byte[] probe = "raidfive key check".getBytes(StandardCharsets.US_ASCII);
        Signature sign = Signature.getInstance(algorithm);
        sign.initSign(key);
        sign.update(probe);
        byte[] signature = sign.sign();
        Signature verify = Signature.getInstance(algorithm);
        try {
            verify.initVerify(cert.getPublicKey());
            verify.update(probe);
            if (verify.verify(signature)) {
                return;
            }
        } catch (InvalidKeyException | SignatureException wrongKind) {
            // a certificate for another kind of key: not this key's either
        }
        throw new IOException(keyFile + " is not the private key of " + certFile
                + " (the first certificate there): every TLS handshake would fail");
    }

    private static KeyStore trustStore(Path caFile) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        int i = 0;
        for (Certificate c : certificates(caFile)) {
            ks.setCertificateEntry("ca" + i++, c);
        }
        return ks;
    }

    private static List<Certificate> certificates(Path file) throws IOException, GeneralSecurityException {
        if (!Files.exists(file)) {
            throw new IOException(file + ": no such file");
        }
        Collection<? extends Certificate> certs;
        try (InputStream in = Files.newInputStream(file)) {
            certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (CertificateException e) {
            throw new IOException(file + ": not a PEM certificate (" + e.getMessage() + ")", e);
        }
        if (certs.isEmpty()) {
            throw new IOException(file + ": holds no certificate");
        }
        return new ArrayList<>(certs);
    }

    private static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
        if (!Files.exists(file)) {
            throw new IOException(file + ": no such file");
        }
        Matcher m = PEM.matcher(Files.readString(file, StandardCharsets.US_ASCII));
        while (m.find()) {
            String type = m.group(1);
            byte[] der = Base64.getMimeDecoder().decode(m.group(2));
            if (type.equals("PRIVATE KEY")) {
                return pkcs8(file, der);
            }
            if (type.equals("RSA PRIVATE KEY")) {
                return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(rsaPkcs1ToPkcs8(der)));
            }
            if (type.equals("EC PRIVATE KEY") || type.equals("ENCRYPTED PRIVATE KEY")) {
                throw new IOException(file + ": a '" + type + "' key; convert it to an unencrypted PKCS#8 key first: "
                        + "openssl pkcs8 -topk8 -nocrypt -in " + file.getFileName() + " -out key.pem");
            }
        }
        throw new IOException(file + ": holds no PEM private key");
    }

    private static PrivateKey pkcs8(Path file, byte[] der) throws IOException {
        for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException notThisOne) {
                // try the next algorithm
            }
        }
        throw new IOException(file + ": a PKCS#8 key of an algorithm this JDK does not read");
    }

    /** PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo: SEQUENCE { 0, {rsaEncryption, NULL}, OCTET STRING }. */
    static byte[] rsaPkcs1ToPkcs8(byte[] pkcs1) {
        byte[] algorithm = {
            0x30,
            0x0d,
            0x06,
            0x09,
            0x2a,
            (byte) 0x86,
            0x48,
            (byte) 0x86,
            (byte) 0xf7,
            0x0d,
            0x01,
            0x01,
            0x01,
            0x05,
            0x00
        };
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(new byte[] {0x02, 0x01, 0x00}, 0, 3);
        body.write(algorithm, 0, algorithm.length);
        body.write(0x04);
        writeLength(body, pkcs1.length);
        body.write(pkcs1, 0, pkcs1.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0x30);
        writeLength(out, body.size());
        byte[] b = body.toByteArray();
        out.write(b, 0, b.length);
        return out.toByteArray();
    }

    private static void writeLength(ByteArrayOutputStream out, int length) {
        if (length < 0x80) {
            out.write(length);
        } else if (length < 0x100) {
            out.write(0x81);
            out.write(length);
        } else if (length < 0x10000) {
            out.write(0x82);
            out.write(length >> 8);
            out.write(length);
        } else {
            out.write(0x83);
            out.write(length >> 16);
            out.write(length >> 8);
            out.write(length);
        }
    }
}
