package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.Test;

/**
 * The cluster of C1, read by a v5 SimpleConsumer through the proxy: messages sent to both brokers all
 * arrive (so from BOTH brokers), and none comes back after its ack once the invisible time has passed. A
 * SimpleConsumer has no rebalance (the client walks the route's queues itself), so C1's bound on how soon
 * both brokers are seen is not repeated here.
 */
class C2ClusterV5Test extends ProxyBase {
    static final int N = 60;

    @Test
    void v5ConsumerReadsBothBrokers() throws Exception {
        Set<String> brokers = new TreeSet<>();
        for (String kv : prop("interop.brokers").split(",")) {
            brokers.add(kv.split("=", 2)[0]);
        }
        String topic = unique("c2");
        String group = unique("c2_v5_cg");
        DefaultMQProducer admin = adminProducer();
        TopicRouteData route = createTopic(admin, topic, 4, 2);
        assertEquals(brokers, new TreeSet<>(brokerNames(route)), "brokers of " + topic);

        DefaultMQProducer producer = track(new C1ClusterTest().remotingProducer());
        Map<String, String> brokerById = new ConcurrentHashMap<>();
        C1ClusterTest.send(producer, topic, "c2", N, brokerById);
        assertEquals(brokers, new TreeSet<>(brokerById.values()), "brokers the sends went to");

        C1ClusterTest.Group g = new C1ClusterTest.Group(group);
        SimpleConsumer sc = simpleConsumer(group, topic, "*", Duration.ofSeconds(2));
        AtomicBoolean stop = new AtomicBoolean(false);
        Thread loop = C1ClusterTest.v5Loop(sc, g, new AtomicBoolean(false), stop);
        try {
            C1ClusterTest.awaitAll(g, brokerById.keySet(), Duration.ofSeconds(60));
            Thread.sleep(C1ClusterTest.INVISIBLE.toMillis() + REVIVE_SLACK_MS);
        } finally {
            stop.set(true);
            loop.join(30_000);
        }
        assertTrue(g.redeliveredAfterAck.isEmpty(), "acked messages came back: " + g.redeliveredAfterAck);
    }
}
