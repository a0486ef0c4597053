package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.junit.jupiter.api.Test;

/**
 * Through the proxy: N messages are received with a 60 s invisible time. Even ones get
 * changeInvisibleDuration(2 s) and are left alone: they come back long before the original 60 s, with
 * delivery attempt 2, and are then acked. Odd ones get changeInvisibleDuration(4 s) and are then acked with
 * the handle the change returned: they never come back.
 */
class P2ChangeInvisibleTest extends ProxyBase {
    static final int N = 20;
    static final Duration FIRST_INVISIBLE = Duration.ofSeconds(60);

    @Test
    void changeInvisibleDurationThenAck() throws Exception {
        String topic = unique("p2");
        String group = unique("p2_cg");
        createTopic(adminProducer(), topic, 2, 1);
        Producer producer = producer(topic);
        Map<String, Integer> idxById = new HashMap<>();
        for (int i = 0; i < N; i++) {
            idxById.put(producer.send(PROVIDER.newMessageBuilder().setTopic(topic).setTag("T").setKeys("k" + i)
                .setBody(("p2 " + i).getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString(), i);
        }

        SimpleConsumer c = simpleConsumer(group, topic, "*", Duration.ofSeconds(5));
        Received got = new Received();
        Map<String, Long> changedAt = new ConcurrentHashMap<>();
        Set<String> ackedAfterChange = ConcurrentHashMap.newKeySet();
        got.receiveUntil(c, FIRST_INVISIBLE, Duration.ofSeconds(60), () -> got.distinct() >= N, v -> {
            String id = v.getMessageId().toString();
            Integer idx = idxById.get(id);
            assertNotNull(idx, "a message that was never sent: " + v);
            assertEquals("p2 " + idx, text(v.getBody()));
            if (changedAt.containsKey(id)) {
                // changed to 2 s while other first deliveries were still arriving: already back, ack it
                c.ack(v);
                return;
            }
            assertEquals(1, v.getDeliveryAttempt(), "first delivery of idx " + idx);
            if (idx % 2 == 0) {
                c.changeInvisibleDuration(v, Duration.ofSeconds(2));
                changedAt.put(id, System.currentTimeMillis());
            } else {
                long t0 = System.currentTimeMillis();
                c.changeInvisibleDuration(v, Duration.ofSeconds(4));
                long took = System.currentTimeMillis() - t0;
                try {
                    c.ack(v); // the view now carries the handle the change returned
                } catch (org.apache.rocketmq.client.apis.ClientException e) {
                    throw new AssertionError("ack of idx " + idx + " right after changeInvisibleDuration(4 s), which took "
                        + took + " ms, failed", e);
                }
                ackedAfterChange.add(id);
            }
        });
        assertEquals(N, got.distinct(), "messages received the first time\n" + logTails());
        assertTrue(got.byId.keySet().stream().filter(id -> !changedAt.containsKey(id)).allMatch(id -> got.of(id).size() == 1),
            "a message not changed was delivered twice inside its 60 s invisible time: " + got.repeated());

        // The even ones come back after ~2 s (well before the original 60 s), with attempt 2; ack them.
        long deadline = 2_000 + REVIVE_SLACK_MS + 10_000;
        got.receiveUntil(c, Duration.ofSeconds(30), Duration.ofMillis(deadline),
            () -> changedAt.keySet().stream().allMatch(id -> got.of(id).size() >= 2), v -> {
                try {
                    c.ack(v);
                } catch (org.apache.rocketmq.client.apis.ClientException e) {
                    throw new AssertionError("ack of idx " + idxById.get(v.getMessageId().toString()) + " delivered again "
                        + "(attempt " + v.getDeliveryAttempt() + ") failed", e);
                }
            });
        for (String id : changedAt.keySet()) {
            List<Received.Delivery> ds = got.of(id);
            assertEquals(2, ds.size(), "deliveries of idx " + idxById.get(id) + " (changed to 2 s, not acked)\n"
                + logTails());
            assertEquals(2, ds.get(1).attempt(), "delivery attempt after the changed invisible time");
            long after = ds.get(1).atMillis() - changedAt.get(id);
            assertTrue(after < FIRST_INVISIBLE.toMillis() - 10_000,
                "came back " + after + " ms after the change: the change to 2 s was not applied");
        }
        // Odd ones, changed then acked, stay away past their 4 s and the revive slack.
        List<MessageView> late = got.receiveUntil(c, Duration.ofSeconds(30), Duration.ofMillis(4_000 + REVIVE_SLACK_MS),
            () -> false, v -> c.ack(v));
        assertTrue(late.stream().noneMatch(v -> ackedAfterChange.contains(v.getMessageId().toString())),
            "changed-then-acked messages came back: " + late);
        assertTrue(late.isEmpty(), "messages came back after their ack: " + late);
    }
}
