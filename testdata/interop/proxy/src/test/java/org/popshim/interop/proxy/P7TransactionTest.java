package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;
import org.junit.jupiter.api.Test;

/**
 * Through rocketmq-proxy: a v5 transactional Producer on a topic created with
 * {@code +message.type=TRANSACTION}. Message 1 is committed and message 2 rolled back by the producer;
 * messages 3 and 4 are left open (an orphaned transaction): popshim's check (CHECK_TRANSACTION_STATE to the
 * proxy's heartbeat connection for the producer group, which the proxy names after the topic) reaches the
 * producer as RecoverOrphanedTransactionCommand, and its checker commits 3 and rolls 4 back. Message 5,
 * committed after the checker answered for 3 and 4, closes the run. A v5 SimpleConsumer receives 1, 3 and
 * 5 exactly once with their body, tag and properties, and never 2 or 4. run.sh starts this popshim with a
 * 2 s transaction check interval; the proxy heartbeats producer groups every 20 s. The grpc part of run.sh
 * runs the same test straight to popshim's gRPC endpoint: there popshim itself relays the check on the
 * producer's Telemetry stream and the transaction ids are popshim's.
 */
class P7TransactionTest extends ProxyBase {
    static final Duration INVISIBLE = Duration.ofSeconds(30);

    @Test
    void commitRollbackAndOrphanRecovery() throws Exception {
        String topic = unique("p7");
        createTransactionTopic(topic);
        Map<Integer, TransactionResolution> onCheck = Map.of(3, TransactionResolution.COMMIT, 4, TransactionResolution.ROLLBACK);
        Map<Integer, AtomicInteger> checks = new ConcurrentHashMap<>();
        Producer producer = track(PROVIDER.newProducerBuilder().setClientConfiguration(clientConfig()).setTopics(topic)
            .setTransactionChecker(v -> {
                int idx = Integer.parseInt(v.getProperties().getOrDefault("idx", "-1"));
                checks.computeIfAbsent(idx, k -> new AtomicInteger()).incrementAndGet();
                return onCheck.getOrDefault(idx, TransactionResolution.UNKNOWN);
            }).build());
        SimpleConsumer c = simpleConsumer(unique("p7_cg"), topic, "*", Duration.ofSeconds(2));
        // the consumer's first receive creates the group's route before anything is committed
        new Received().receiveUntil(c, INVISIBLE, Duration.ofSeconds(2), () -> false, v -> c.ack(v));

        Map<String, Integer> idxById = new HashMap<>();
        for (int i = 1; i <= 4; i++) {
            Transaction tx = producer.beginTransaction();
            SendReceipt r = producer.send(message(topic, i), tx);
            assertNotNull(r.getMessageId(), "send " + i);
            idxById.put(r.getMessageId().toString(), i);
            if (i == 1) {
                tx.commit();
            } else if (i == 2) {
                tx.rollback();
            }
        }
        await("the checker asked about 3 and 4", Duration.ofSeconds(120),
            () -> checks.containsKey(3) && checks.containsKey(4), () -> "checks: " + checks);
        Transaction last = producer.beginTransaction();
        SendReceipt r5 = producer.send(message(topic, 5), last);
        idxById.put(r5.getMessageId().toString(), 5);
        last.commit();

        Received got = new Received();
        got.receiveUntil(c, INVISIBLE, Duration.ofSeconds(60), () -> got.distinct() >= 3
            && idxById.keySet().stream().filter(id -> idxById.get(id) == 5).anyMatch(id -> !got.of(id).isEmpty()), v -> {
                Integer idx = idxById.get(v.getMessageId().toString());
                assertNotNull(idx, "a message that was never sent: " + v);
                assertEquals("p7 body " + idx, text(v.getBody()), "body of " + idx);
                assertEquals("T" + idx, v.getTag().orElse(null), "tag of " + idx);
                assertEquals(Integer.toString(idx), v.getProperties().get("idx"), "property idx of " + idx);
                c.ack(v);
            });
        Map<Integer, Integer> deliveries = new HashMap<>();
        got.byId.forEach((id, l) -> deliveries.put(idxById.get(id), l.size()));
        assertEquals(Map.of(1, 1, 3, 1, 5, 1), deliveries, "deliveries per message\n" + logTails());
        assertTrue(!checks.containsKey(1) && !checks.containsKey(2) && !checks.containsKey(5),
            "decided messages were checked: " + checks);
    }

    private static Message message(String topic, int i) {
        return PROVIDER.newMessageBuilder().setTopic(topic).setTag("T" + i).setKeys("p7-key-" + i)
            .addProperty("idx", Integer.toString(i)).setBody(("p7 body " + i).getBytes(StandardCharsets.UTF_8)).build();
    }

    /** Creates {@code topic} (4 queues) with the topic attribute the proxy checks for transactional messages. */
    private void createTransactionTopic(String topic) throws Exception {
        var admin = adminProducer();
        var route = createTopic(admin, topic, 4, 1);
        admin.getDefaultMQProducerImpl().getMqClientFactory().getMQAdminImpl()
            .createTopic("TBW102", topic, 4, 0, Map.of("+message.type", "TRANSACTION"));
        String addr = route.getBrokerDatas().get(0).getBrokerAddrs().get(0L);
        var tc = admin.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl().getTopicConfig(addr, topic, 3_000);
        assertEquals("TRANSACTION", tc.getAttributes().get("message.type"), "broker's topic config: " + tc);
    }
}
