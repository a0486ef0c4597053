package org.popshim.interop;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Throw-away TLS material for the TLS scenario, made with the openssl command line: a self-signed CA, a
 * server certificate for 127.0.0.1 and a client certificate (extendedKeyUsage clientAuth), both signed by
 * the CA, EC P-256, PEM, keys unencrypted PKCS#8 (what popshim's --tls-key and the Java client's
 * tls.client.keyPath read).
 */
final class TlsFiles {
    final Path ca;
    final Path serverCert;
    final Path serverKey;
    final Path clientCert;
    final Path clientKey;

    private TlsFiles(Path dir) {
        ca = dir.resolve("ca.pem");
        serverCert = dir.resolve("server.pem");
        serverKey = dir.resolve("server.key");
        clientCert = dir.resolve("client.pem");
        clientKey = dir.resolve("client.key");
    }

    /** Generates the files in {@code dir} (created when missing). */
    static TlsFiles generate(Path dir) throws Exception {
        Files.createDirectories(dir);
        TlsFiles f = new TlsFiles(dir);
        Path caKey = dir.resolve("ca.key");
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-days", "2", "-subj", "/CN=popshim interop CA", "-keyout", caKey.toString(), "-out", f.ca.toString());
        f.leaf(dir, "server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n", f.serverCert, f.serverKey, caKey);
        f.leaf(dir, "client", "extendedKeyUsage=clientAuth\n", f.clientCert, f.clientKey, caKey);
        return f;
    }

    private void leaf(Path dir, String name, String ext, Path cert, Path key, Path caKey) throws Exception {
        Path csr = dir.resolve(name + ".csr");
        Path extFile = dir.resolve(name + ".ext");
        Files.writeString(extFile, ext, StandardCharsets.UTF_8);
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=popshim interop " + name, "-keyout", key.toString(), "-out", csr.toString());
        openssl(dir, "x509", "-req", "-in", csr.toString(), "-CA", ca.toString(), "-CAkey", caKey.toString(),
            "-CAcreateserial", "-days", "2", "-extfile", extFile.toString(), "-out", cert.toString());
    }

    private static void openssl(Path dir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("openssl failed (the TLS scenario needs the openssl command): " + cmd + "\n" + out);
        }
    }

    /** An unconnected TLS socket that trusts any server certificate, for probing popshim's ports. */
    static Socket trustAllSocket() throws IOException, GeneralSecurityException {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, new TrustManager[] {new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, null);
        return ctx.getSocketFactory().createSocket();
    }
}
