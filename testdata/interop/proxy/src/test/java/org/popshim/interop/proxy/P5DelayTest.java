package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.junit.jupiter.api.Test;

/**
 * Through rocketmq-proxy: a v5 Producer sends to a topic created with {@code +message.type=DELAY} messages
 * with a delivery timestamp (the proxy turns it into {@code TIMER_DELIVER_MS} on SEND_MESSAGE). A v5
 * SimpleConsumer, polling from before the send, must not see any of them before its timestamp and must see
 * each within {@link #LATE_MS} after it; a timestamp in the past is delivered at once. Body, tag, keys and
 * user properties survive the timer.
 */
class P5DelayTest extends ProxyBase {
    static final long LATE_MS = 3_000;
    static final Duration INVISIBLE = Duration.ofSeconds(20);

    @Test
    void deliveryTimestampHoldsMessagesUntilTheirTime() throws Exception {
        String topic = unique("p5");
        String group = unique("p5_cg");
        adminCreateDelayTopic(topic);

        Producer producer = producer(topic);
        SimpleConsumer c = simpleConsumer(group, topic, "*", Duration.ofSeconds(2));
        // the consumer's first receive creates the group's route before anything is due
        new Received().receiveUntil(c, INVISIBLE, Duration.ofSeconds(2), () -> false, v -> c.ack(v));

        long now = System.currentTimeMillis();
        long[] delays = {4_000, 7_000, -5_000};
        Map<String, Long> dueById = new HashMap<>();
        Map<String, Integer> idxById = new HashMap<>();
        for (int i = 0; i < delays.length; i++) {
            long due = now + delays[i];
            Message m = PROVIDER.newMessageBuilder().setTopic(topic).setTag("T" + i).setKeys("p5-key-" + i)
                .addProperty("idx", Integer.toString(i)).setDeliveryTimestamp(due)
                .setBody(("p5 body " + i).getBytes(StandardCharsets.UTF_8)).build();
            SendReceipt r = producer.send(m);
            assertNotNull(r.getMessageId(), "send " + i);
            dueById.put(r.getMessageId().toString(), due);
            idxById.put(r.getMessageId().toString(), i);
        }

        Received got = new Received();
        got.receiveUntil(c, INVISIBLE, Duration.ofSeconds(40), () -> got.distinct() >= delays.length, v -> {
            String id = v.getMessageId().toString();
            Long due = dueById.get(id);
            assertNotNull(due, "a message that was never sent: " + v);
            long at = System.currentTimeMillis();
            int idx = idxById.get(id);
            long earliest = Math.max(due, now);
            assertTrue(at >= earliest, "idx " + idx + " arrived " + (earliest - at) + " ms before its delivery time");
            assertTrue(at <= earliest + LATE_MS, "idx " + idx + " arrived " + (at - earliest) + " ms after its delivery time");
            assertEquals("p5 body " + idx, text(v.getBody()), "body of idx " + idx);
            assertEquals("T" + idx, v.getTag().orElse(null), "tag of idx " + idx);
            assertTrue(v.getKeys().contains("p5-key-" + idx), "keys of idx " + idx + ": " + v.getKeys());
            assertEquals(Integer.toString(idx), v.getProperties().get("idx"), "property idx of " + idx);
            c.ack(v);
        });
        assertEquals(delays.length, got.distinct(), "delayed messages received\n" + logTails());
        assertTrue(got.repeated().isEmpty(), "delivered twice: " + got.repeated());
    }

    /** Creates {@code topic} (4 queues) with the topic attribute the proxy checks for delay messages. */
    private void adminCreateDelayTopic(String topic) throws Exception {
        var admin = adminProducer();
        var route = createTopic(admin, topic, 4, 1);
        // DefaultMQProducer.createTopic(key, topic, n, attributes) drops the attributes (client 5.5.0), so
        // the attribute goes through MQAdminImpl, as mqadmin updateTopic -a does.
        admin.getDefaultMQProducerImpl().getMqClientFactory().getMQAdminImpl()
            .createTopic("TBW102", topic, 4, 0, Map.of("+message.type", "DELAY"));
        String addr = route.getBrokerDatas().get(0).getBrokerAddrs().get(0L);
        var tc = admin.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
            .getTopicConfig(addr, topic, 3_000);
        assertEquals("DELAY", tc.getAttributes().get("message.type"), "broker's topic config: " + tc);
    }
}
