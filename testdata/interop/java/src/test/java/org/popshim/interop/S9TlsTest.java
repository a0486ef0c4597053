package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.remoting.netty.TlsSystemConfig;
import org.junit.jupiter.api.Test;

/**
 * Scenario 9: TLS on the remoting ports (--tls-mode, as the Java broker's tls.server.mode).
 *
 * <p>This class's popshim runs {@code --tls-mode enforcing} on both ports: Java clients with useTLS
 * (what {@code -Dtls.enable=true} turns on by default; the client's default tls.test.mode.enable trusts any
 * server certificate) produce, POP and ACK through the name server as usual, and a plaintext client is
 * refused: its raw request gets no reply, and a plaintext producer cannot send. A second popshim runs
 * {@code --tls-mode permissive --tls-client-auth require}: plaintext clients still work on the same port,
 * a TLS client presenting a CA-signed certificate (tls.client.certPath/keyPath with
 * tls.test.mode.enable=false) works, and a TLS client without a certificate is refused.
 */
class S9TlsTest extends InteropBase {
    static final int N = 40;
    private TlsFiles files;

    @Override
    protected List<String> popshimArgs() throws Exception {
        files = TlsFiles.generate(java.nio.file.Files.createTempDirectory(
            java.nio.file.Paths.get(System.getProperty("popshim.workdir", System.getProperty("java.io.tmpdir"))), "s9-tls-"));
        return List.of("--tls-mode", "enforcing", "--tls-cert", files.serverCert.toString(),
            "--tls-key", files.serverKey.toString());
    }

    @Test
    void enforcingServesTlsClients() throws Exception {
        String topic = unique("s9");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s9_pg"), wire, true));
        List<Spec> specs = sendAll(p, topic, 0);
        Received got = new Received();
        got.useTLS = true;
        track(got.start(shim, unique("s9_cg"), topic, "*", 15_000, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));
        Received.await(N + " messages over TLS", Duration.ofSeconds(60), () -> got.distinct() == N, this::diag);
        for (Spec s : specs) {
            s.assertMatches(got.of(s.idx).get(0).msg());
        }
        assertTrue(wire.of(POP_MESSAGE, e -> topic.equals(e.req("topic")) && e.responseCode() == SUCCESS).size() > 0,
            "messages came through POP_MESSAGE: " + diag());
        Received.await("an ACK_MESSAGE answered SUCCESS for each message", Duration.ofSeconds(30),
            () -> wire.of(ACK_MESSAGE, e -> topic.equals(e.req("topic")) && e.responseCode() == SUCCESS).size() >= N, this::diag);
    }

    @Test
    void enforcingRefusesPlaintext() throws Exception {
        for (String addr : List.of(shim.brokerAddr(), shim.namesrvAddr())) {
            assertTrue(closedWithoutReply(addr), "a plaintext request to " + addr + " must get no reply");
        }
        DefaultMQProducer p = track(Sending.producer(shim, unique("s9_plain"), null, false));
        p.setSendMsgTimeout(3_000);
        assertThrows(Exception.class, () -> p.send(Spec.make(unique("s9_plain"), 0, "TagA").toMessage()),
            "a plaintext producer must not reach an enforcing popshim");
    }

    @Test
    void permissiveWithRequiredClientCertificates() throws Exception {
        try (Popshim both = Popshim.start("S9TlsPermissive", List.of("--tls-cert", files.serverCert.toString(),
            "--tls-key", files.serverKey.toString(), "--tls-ca", files.ca.toString(), "--tls-client-auth", "require"))) {
            String topic = unique("s9p");
            DefaultMQProducer plain = track(Sending.producer(both, unique("s9p_plain"), wire, false));
            List<Spec> specs = sendAll(plain, topic, 0);

            DefaultMQProducer withCert = track(withClientCertificate(() -> Sending.producer(both, unique("s9p_cert"), wire, true)));
            specs.addAll(sendAll(withCert, topic, N));

            Received got = new Received();
            track(got.start(both, unique("s9p_cg"), topic, "*", 15_000, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));
            Received.await(2 * N + " messages, plaintext consumer", Duration.ofSeconds(60), () -> got.distinct() == 2 * N,
                () -> diag() + "\npermissive popshim log:\n" + both.logTail());

            DefaultMQProducer noCert = track(Sending.producer(both, unique("s9p_nocert"), null, true));
            noCert.setSendMsgTimeout(3_000);
            assertThrows(Exception.class, () -> noCert.send(Spec.make(topic, 2 * N, "TagA").toMessage()),
                "a TLS client without a certificate must be refused under --tls-client-auth require");
        }
    }

    private List<Spec> sendAll(DefaultMQProducer p, String topic, int from) throws Exception {
        List<Spec> specs = new java.util.ArrayList<>();
        for (int i = from; i < from + N; i++) {
            Spec s = Spec.make(topic, i, "TagA");
            SendResult r = p.send(s.toMessage());
            assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send " + i);
            s.uniqKey = r.getMsgId();
            specs.add(s);
        }
        return specs;
    }

    interface Starter {
        DefaultMQProducer start() throws Exception;
    }

    /**
     * Starts a client whose TLS context carries the client certificate. The Java client builds its
     * SslContext from TlsSystemConfig's static fields when its MQClientInstance starts, so they are set
     * around that start only (and the test-mode default, which sends no certificate, switched off).
     */
    private DefaultMQProducer withClientCertificate(Starter s) throws Exception {
        synchronized (TlsSystemConfig.class) {
            boolean testMode = TlsSystemConfig.tlsTestModeEnable;
            String cert = TlsSystemConfig.tlsClientCertPath;
            String key = TlsSystemConfig.tlsClientKeyPath;
            try {
                TlsSystemConfig.tlsTestModeEnable = false;
                TlsSystemConfig.tlsClientCertPath = files.clientCert.toString();
                TlsSystemConfig.tlsClientKeyPath = files.clientKey.toString();
                return s.start();
            } finally {
                TlsSystemConfig.tlsTestModeEnable = testMode;
                TlsSystemConfig.tlsClientCertPath = cert;
                TlsSystemConfig.tlsClientKeyPath = key;
            }
        }
    }

    /** Sends one plaintext GET_ROUTEINFO_BY_TOPIC frame and reports whether popshim closed without a byte. */
    private static boolean closedWithoutReply(String addr) throws Exception {
        String[] hp = addr.split(":");
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), 2_000);
            s.setSoTimeout(10_000);
            byte[] header = ("{\"code\":105,\"extFields\":{\"topic\":\"TBW102\"},\"flag\":0,\"language\":\"JAVA\","
                + "\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}").getBytes(StandardCharsets.UTF_8);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(4 + header.length);
            out.writeInt(header.length);
            out.write(header);
            out.flush();
            InputStream in = s.getInputStream();
            try {
                return in.read() == -1;
            } catch (java.net.SocketException reset) {
                return true;
            }
        }
    }
}
