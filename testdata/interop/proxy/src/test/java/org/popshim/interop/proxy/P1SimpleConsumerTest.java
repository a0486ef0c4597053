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
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.junit.jupiter.api.Test;

/**
 * Through rocketmq-proxy (cluster mode): a v5 Producer sends N messages with tag, keys and properties; a
 * v5 SimpleConsumer receives each once, exactly as sent, with delivery attempt 1, and acks it; after the
 * invisible time has passed nothing comes back.
 */
class P1SimpleConsumerTest extends ProxyBase {
    static final int N = 40;
    static final Duration INVISIBLE = Duration.ofSeconds(10);

    @Test
    void producesThenReceivesAndAcksEveryMessageOnce() throws Exception {
        String topic = unique("p1");
        String group = unique("p1_cg");
        createTopic(adminProducer(), topic, 4, 1);

        Producer producer = producer(topic);
        Map<String, Integer> idxById = new HashMap<>();
        for (int i = 0; i < N; i++) {
            Message m = PROVIDER.newMessageBuilder().setTopic(topic).setTag("Tag" + (i % 3)).setKeys("key-" + i, "k2-" + i)
                .addProperty("idx", Integer.toString(i)).addProperty("note", "\u00e9t\u00e9 " + i)
                .setBody(("p1 body " + i).getBytes(StandardCharsets.UTF_8)).build();
            SendReceipt r = producer.send(m);
            assertNotNull(r.getMessageId(), "send " + i);
            idxById.put(r.getMessageId().toString(), i);
        }
        assertEquals(N, idxById.size(), "distinct message ids from the producer");

        SimpleConsumer c = simpleConsumer(group, topic, "*", Duration.ofSeconds(5));
        Received got = new Received();
        got.receiveUntil(c, INVISIBLE, Duration.ofSeconds(90), () -> got.distinct() >= N, v -> {
            Integer idx = idxById.get(v.getMessageId().toString());
            assertNotNull(idx, "a message that was never sent: " + v);
            assertMatches(idx, topic, v);
            assertEquals(1, v.getDeliveryAttempt(), "first delivery attempt of idx " + idx);
            c.ack(v);
        });
        assertEquals(N, got.distinct(), "messages received\n" + logTails());
        assertTrue(got.repeated().isEmpty(), "delivered twice before any invisible time ended: " + got.repeated());

        // Everything is acked: nothing may come back once the invisible time (and revive slack) has passed.
        List<MessageView> late = got.receiveUntil(c, INVISIBLE, INVISIBLE.plusMillis(REVIVE_SLACK_MS), () -> false,
            v -> c.ack(v));
        assertTrue(late.isEmpty(), "acked messages came back: " + late);
    }

    static void assertMatches(int idx, String topic, MessageView v) {
        assertEquals(topic, v.getTopic(), "topic of idx " + idx);
        assertEquals("p1 body " + idx, text(v.getBody()), "body of idx " + idx);
        assertEquals("Tag" + (idx % 3), v.getTag().orElse(null), "tag of idx " + idx);
        assertTrue(v.getKeys().containsAll(List.of("key-" + idx, "k2-" + idx)), "keys of idx " + idx + ": " + v.getKeys());
        assertEquals(Integer.toString(idx), v.getProperties().get("idx"), "property idx of " + idx);
        assertEquals("\u00e9t\u00e9 " + idx, v.getProperties().get("note"), "non-ASCII property of idx " + idx);
    }
}
