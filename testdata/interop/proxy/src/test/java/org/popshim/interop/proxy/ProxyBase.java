package org.popshim.interop.proxy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Common ground of the proxy and cluster suites. The processes (popshim brokers, rocketmq-proxy, an Apache
 * name server) are started by run.sh before Maven runs and stopped by it afterwards; a test gets their
 * addresses from system properties:
 *
 * <ul>
 *   <li>{@code interop.proxy}: the proxy's gRPC endpoint, host:port (v5 clients)</li>
 *   <li>{@code interop.namesrv}: the name server the proxy and the brokers use (remoting clients, topic
 *       creation)</li>
 *   <li>{@code interop.logs}: log files to quote on failure, separated by ':'</li>
 * </ul>
 *
 * Clients registered with {@link #track} are closed after the class, newest first.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ProxyBase {
    /** How long after an invisible time ends a message may take to be delivered again (revive slack). */
    static final long REVIVE_SLACK_MS = Long.getLong("interop.reviveSlackMs", 8_000);

    static final ClientServiceProvider PROVIDER = ClientServiceProvider.loadService();

    private final List<AutoCloseable> closeables = new ArrayList<>();

    static String prop(String name) {
        String v = System.getProperty(name, "").trim();
        if (v.isEmpty()) {
            throw new IllegalStateException("system property " + name + " is not set: run testdata/interop/run.sh proxy "
                + "(or cluster), which starts the processes and passes their addresses to Maven");
        }
        return v;
    }

    static String proxyEndpoint() {
        return prop("interop.proxy");
    }

    static String namesrv() {
        return prop("interop.namesrv");
    }

    static ClientConfiguration clientConfig() {
        return ClientConfiguration.newBuilder()
            .setEndpoints(proxyEndpoint())
            .enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10))
            .build();
    }

    /** A name unique to this run: prefix plus random digits (letters, digits and '_' only). */
    static String unique(String prefix) {
        return prefix + "_" + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36);
    }

    <T extends AutoCloseable> T track(T c) {
        closeables.add(c);
        return c;
    }

    DefaultMQProducer track(DefaultMQProducer p) {
        closeables.add(p::shutdown);
        return p;
    }

    @AfterAll
    void closeClients() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception ignored) {
                // closing a client must not hide the test's own failure
            }
        }
        closeables.clear();
    }

    Producer producer(String... topics) throws Exception {
        return track(PROVIDER.newProducerBuilder().setClientConfiguration(clientConfig()).setTopics(topics).build());
    }

    SimpleConsumer simpleConsumer(String group, String topic, String tagExpr, Duration await) throws Exception {
        return track(PROVIDER.newSimpleConsumerBuilder()
            .setClientConfiguration(clientConfig())
            .setConsumerGroup(group)
            .setAwaitDuration(await)
            .setSubscriptionExpressions(Map.of(topic, new FilterExpression(tagExpr, FilterExpressionType.TAG)))
            .build());
    }

    /**
     * Marks every request of the suite's own remoting clients with the extField {@code interopHarness=1},
     * so that a packet capture of a run can tell them from the proxy's requests (FINDINGS.md's list of
     * what the proxy sends was taken that way). Brokers ignore unknown extFields.
     */
    static final RPCHook HARNESS_MARK = new RPCHook() {
        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            request.addExtField("interopHarness", "1");
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
        }
    };

    /** A started remoting producer on the name server, for topic creation and route look-ups. */
    DefaultMQProducer adminProducer() throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(unique("admin_pg"), HARNESS_MARK);
        p.setNamesrvAddr(namesrv());
        p.setInstanceName(unique("admin"));
        p.start();
        return track(p);
    }

    /**
     * Creates {@code topic} with {@code queues} queues on every master broker of TBW102's route (what
     * mqadmin updateTopic -c does through the name server) and waits until the name server routes it to
     * {@code brokers} brokers. Through an Apache name server a topic must exist before a v5 client can use
     * it: the proxy answers TOPIC_NOT_FOUND for a topic without a route.
     */
    TopicRouteData createTopic(DefaultMQProducer admin, String topic, int queues, int brokers) throws Exception {
        // Every broker must be in TBW102's route first (brokers register a few seconds after they start).
        TopicRouteData[] tbw = new TopicRouteData[1];
        await("TBW102 routed to " + brokers + " broker(s) on " + namesrv(), Duration.ofSeconds(40), () -> {
            try {
                tbw[0] = admin.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
                    .getTopicRouteInfoFromNameServer("TBW102", 3_000);
                return tbw[0] != null && tbw[0].getBrokerDatas().size() >= brokers;
            } catch (Exception e) {
                return false;
            }
        }, () -> "last TBW102 route: " + tbw[0]);
        // bounded retry: the TBW102 route or a broker may be briefly missing (a broker re-registering)
        Exception[] lastError = new Exception[1];
        await("UPDATE_AND_CREATE_TOPIC of " + topic + " through TBW102's route", Duration.ofSeconds(40), () -> {
            try {
                admin.createTopic("TBW102", topic, queues, Map.of());
                return true;
            } catch (Exception e) {
                lastError[0] = e;
                return false;
            }
        }, () -> "last error: " + lastError[0]);
        TopicRouteData[] last = new TopicRouteData[1];
        await("route of " + topic + " with " + brokers + " broker(s) on " + namesrv(), Duration.ofSeconds(40), () -> {
            try {
                last[0] = admin.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
                    .getTopicRouteInfoFromNameServer(topic, 3_000);
                return last[0] != null && last[0].getBrokerDatas().size() >= brokers;
            } catch (Exception e) {
                return false;
            }
        }, () -> "last route: " + last[0]);
        return last[0];
    }

    static List<String> brokerNames(TopicRouteData route) {
        return route.getBrokerDatas().stream().map(BrokerData::getBrokerName).sorted().toList();
    }

    /** Polls {@code cond} every 100 ms until it holds; fails with {@code detail} after {@code timeout}. */
    static void await(String what, Duration timeout, BooleanSupplier cond, Supplier<String> detail) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what + "\n" + detail.get()
                    + "\n" + logTails());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }

    /** The last lines of each log named in interop.logs, for failure messages. */
    static String logTails() {
        StringBuilder sb = new StringBuilder();
        for (String f : System.getProperty("interop.logs", "").split(":")) {
            if (f.isBlank()) {
                continue;
            }
            Path p = Paths.get(f);
            try {
                List<String> lines = Files.readAllLines(p, StandardCharsets.UTF_8);
                sb.append("--- tail of ").append(p).append('\n').append(String.join("\n",
                    lines.subList(Math.max(0, lines.size() - 25), lines.size())).replaceAll("\u001B\\[[0-9;]*m", ""))
                    .append('\n');
            } catch (IOException | RuntimeException e) {
                sb.append("--- ").append(p).append(": ").append(e).append('\n');
            }
        }
        return sb.toString();
    }

    static String text(java.nio.ByteBuffer b) {
        java.nio.ByteBuffer d = b.duplicate();
        byte[] a = new byte[d.remaining()];
        d.get(a);
        return new String(a, StandardCharsets.UTF_8);
    }
}
