package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.junit.jupiter.api.Test;

/**
 * Through the proxy: N messages received with a 10 s invisible time (the proxy's minimum) and never acked come back with the same
 * message id, body and delivery attempt 2, no earlier than the invisible time; acked then, they stay away.
 */
class P3NeverAckedTest extends ProxyBase {
    static final int N = 20;
    static final Duration INVISIBLE = Duration.ofSeconds(10); // the proxy refuses less than 10 s (minInvisibleTimeMillsForRecv)

    @Test
    void neverAckedComesBackWithAttemptTwo() throws Exception {
        String topic = unique("p3");
        String group = unique("p3_cg");
        createTopic(adminProducer(), topic, 2, 1);
        Producer producer = producer(topic);
        Map<String, Integer> idxById = new HashMap<>();
        for (int i = 0; i < N; i++) {
            idxById.put(producer.send(PROVIDER.newMessageBuilder().setTopic(topic).setTag("T").setKeys("k" + i)
                .setBody(("p3 " + i).getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString(), i);
        }
        SimpleConsumer c = simpleConsumer(group, topic, "*", Duration.ofSeconds(3));
        Received got = new Received();
        // First round: take everything once, ack nothing. Stop at N distinct so no redelivery is mixed in.
        got.receiveUntil(c, INVISIBLE, Duration.ofSeconds(60), () -> got.distinct() >= N, v -> {
            assertNotNull(idxById.get(v.getMessageId().toString()), "a message that was never sent: " + v);
            assertEquals(1, v.getDeliveryAttempt());
        });
        assertEquals(N, got.distinct(), "first deliveries\n" + logTails());
        assertEquals(N, got.all.size(), "a message was delivered twice inside its invisible time");

        got.receiveUntil(c, Duration.ofSeconds(30), INVISIBLE.plusMillis(REVIVE_SLACK_MS + 15_000),
            () -> got.byId.values().stream().allMatch(l -> l.size() >= 2), v -> c.ack(v));
        for (Map.Entry<String, Integer> e : idxById.entrySet()) {
            List<Received.Delivery> ds = got.of(e.getKey());
            assertEquals(2, ds.size(), "deliveries of never-acked idx " + e.getValue() + "\n" + logTails());
            MessageView again = ds.get(1).view();
            assertEquals(2, again.getDeliveryAttempt(), "delivery attempt of idx " + e.getValue() + " the second time");
            assertEquals("p3 " + e.getValue(), text(again.getBody()), "body the second time");
            assertEquals(topic, again.getTopic(), "topic the second time (not the retry topic)");
            long gap = ds.get(1).atMillis() - ds.get(0).atMillis();
            assertTrue(gap >= INVISIBLE.toMillis() - 1_000, "came back " + gap + " ms after the first delivery, "
                + "before its invisible time " + INVISIBLE);
        }
        List<MessageView> late = got.receiveUntil(c, Duration.ofSeconds(30), INVISIBLE.plusMillis(REVIVE_SLACK_MS),
            () -> false, v -> c.ack(v));
        assertTrue(late.isEmpty(), "acked messages came back: " + late);
    }
}
