package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.junit.jupiter.api.Test;

/**
 * Through the proxy: a v5 PushConsumer subscribed to "TagA || TagC" gets exactly the TagA and TagC
 * messages; the listener fails (ConsumeResult.FAILURE) the first delivery of every fifth one, which comes
 * back with delivery attempt 2 and then succeeds; nothing that succeeded comes back.
 */
class P4PushConsumerTest extends ProxyBase {
    static final int N = 60;
    static final String[] TAGS = {"TagA", "TagB", "TagC"};

    record Seen(int idx, String tag, int attempt, ConsumeResult result) {
    }

    @Test
    void tagFilterAndFailuresRedelivered() throws Exception {
        String topic = unique("p4");
        String group = unique("p4_cg");
        createTopic(adminProducer(), topic, 4, 1);
        Producer producer = producer(topic);
        Map<String, Integer> idxById = new HashMap<>();
        for (int i = 0; i < N; i++) {
            idxById.put(producer.send(PROVIDER.newMessageBuilder().setTopic(topic).setTag(TAGS[i % 3]).setKeys("k" + i)
                .setBody(("p4 " + i).getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString(), i);
        }
        Set<Integer> wanted = new java.util.TreeSet<>();
        Set<Integer> failFirst = new java.util.TreeSet<>();
        for (int i = 0; i < N; i++) {
            if (!TAGS[i % 3].equals("TagB")) {
                wanted.add(i);
                if (i % 5 == 0) {
                    failFirst.add(i);
                }
            }
        }

        ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
        Set<Integer> succeeded = ConcurrentHashMap.newKeySet();
        PushConsumer pc = track(PROVIDER.newPushConsumerBuilder()
            .setClientConfiguration(clientConfig())
            .setConsumerGroup(group)
            .setSubscriptionExpressions(Map.of(topic, new FilterExpression("TagA || TagC", FilterExpressionType.TAG)))
            .setConsumptionThreadCount(4)
            .setMessageListener(v -> {
                Integer idx = idxById.get(v.getMessageId().toString());
                int i = idx == null ? -1 : idx;
                ConsumeResult r = failFirst.contains(i) && v.getDeliveryAttempt() == 1 ? ConsumeResult.FAILURE
                    : ConsumeResult.SUCCESS;
                seen.add(new Seen(i, v.getTag().orElse(null), v.getDeliveryAttempt(), r));
                if (r == ConsumeResult.SUCCESS) {
                    succeeded.add(i);
                }
                return r;
            })
            .build());

        await("every TagA/TagC message consumed successfully", Duration.ofSeconds(90),
            () -> succeeded.containsAll(wanted), () -> "succeeded " + succeeded.size() + "/" + wanted.size()
                + ", seen " + seen);
        // A quiet period: successes must not come back (the push consumer acks them); failures came back once.
        Thread.sleep(REVIVE_SLACK_MS);
        List<Seen> all = List.copyOf(seen);
        assertTrue(all.stream().allMatch(s -> s.idx >= 0), "messages that were never sent: " + all);
        assertTrue(all.stream().noneMatch(s -> "TagB".equals(s.tag)), "TagB delivered to a TagA || TagC consumer: " + all);
        for (int i : wanted) {
            final int idx = i;
            List<Seen> of = all.stream().filter(s -> s.idx == idx).toList();
            if (failFirst.contains(i)) {
                assertEquals(2, of.size(), "deliveries of idx " + i + " (failed once): " + of);
                assertEquals(1, of.get(0).attempt, "first attempt of idx " + i);
                assertEquals(2, of.get(1).attempt, "redelivery attempt of idx " + i);
            } else {
                assertEquals(1, of.size(), "deliveries of idx " + i + " (succeeded at once): " + of);
                assertEquals(1, of.get(0).attempt, "attempt of idx " + i);
            }
        }
        pc.close();
    }
}
