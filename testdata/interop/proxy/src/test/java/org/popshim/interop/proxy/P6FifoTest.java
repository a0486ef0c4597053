package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;
import org.junit.jupiter.api.Test;

/**
 * Through the proxy: FIFO consumption. The topic has message.type=FIFO and the consumer group is created
 * with consumeMessageOrderly=true (the admin API of mqadmin updateSubGroup -o true), so the proxy pops it
 * with order=true and an attemptId (orderly POP). Messages of four message groups, interleaved.
 * SimpleConsumer: per message group every message is acked once, in send order; a receive that "fails" one
 * message leaves it and the rest of the batch un-acked, and they come back in order, the failed one with
 * delivery attempt 2 (reconsumeTimes counted by popshim). PushConsumer: per message group in send order; a
 * failed message (of mg0) is redelivered before any later message of its group.
 */
class P6FifoTest extends ProxyBase {
    static final int GROUPS = 4;
    static final int PER_GROUP = 20;
    static final int FAIL_AT = 5;
    static final Duration INVISIBLE = Duration.ofSeconds(10);

    record Sent(String group, int idx) {
    }

    /** Creates a FIFO topic and an orderly consumer group, sends the messages; returns sent by message id. */
    Map<String, Sent> prepare(String topic, String group) throws Exception {
        DefaultMQProducer admin = adminProducer();
        TopicRouteData route = createTopic(admin, topic, 4, 1);
        String brokerAddr = route.getBrokerDatas().get(0).selectBrokerAddr();
        MQClientAPIImpl api = admin.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
        // DefaultMQProducer.createTopic drops attributes: set message.type=FIFO on the broker directly
        // (what mqadmin updateTopic -a +message.type=FIFO sends), before any v5 client asks the proxy.
        TopicConfig tc = new TopicConfig(topic, 4, 4);
        tc.setAttributes(Map.of("+message.type", "FIFO"));
        api.createTopic(brokerAddr, "TBW102", tc, 10_000);
        SubscriptionGroupConfig cfg = new SubscriptionGroupConfig();
        cfg.setGroupName(group);
        cfg.setConsumeMessageOrderly(true);
        api.createSubscriptionGroup(brokerAddr, cfg, 10_000);
        Producer producer = producer(topic);
        Map<String, Sent> byId = new HashMap<>();
        for (int i = 0; i < PER_GROUP; i++) {
            for (int g = 0; g < GROUPS; g++) {
                String mg = "mg" + g;
                byId.put(producer.send(PROVIDER.newMessageBuilder().setTopic(topic).setTag("T").setMessageGroup(mg)
                    .setBody(("p5 " + mg + " " + i).getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString(),
                    new Sent(mg, i));
            }
        }
        return byId;
    }

    @Test
    void simpleConsumerFifoInOrderAndRedeliveredInOrder() throws Exception {
        String topic = unique("p5s");
        String group = unique("p5s_cg");
        Map<String, Sent> byId = prepare(topic, group);
        SimpleConsumer c = simpleConsumer(group, topic, "*", Duration.ofSeconds(2));
        Map<String, Integer> next = new HashMap<>();
        List<String> violations = new ArrayList<>();
        List<Integer> failedAttempts = new ArrayList<>();
        boolean failed = false;
        int acked = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (acked < GROUPS * PER_GROUP && System.nanoTime() < deadline) {
            List<MessageView> batch;
            try {
                batch = c.receive(16, INVISIBLE);
            } catch (org.apache.rocketmq.client.apis.ClientException e) {
                continue; // an empty long poll
            }
            boolean skipRest = false;
            for (MessageView v : batch) {
                Sent s = byId.get(v.getMessageId().toString());
                assertTrue(s != null, "a message that was never sent: " + v);
                assertEquals(s.group, v.getMessageGroup().orElse(null), "message group of " + s);
                if (skipRest) {
                    continue; // left un-acked: comes back after the invisible time, in order
                }
                if (s.group.equals("mg0") && s.idx == FAIL_AT) {
                    failedAttempts.add(v.getDeliveryAttempt());
                    if (!failed) {
                        failed = true;
                        skipRest = true;
                        continue;
                    }
                }
                int want = next.getOrDefault(s.group, 0);
                if (s.idx != want) {
                    violations.add(s.group + ": got " + s.idx + ", expected " + want);
                }
                next.put(s.group, s.idx + 1);
                c.ack(v);
                acked++;
            }
        }
        assertTrue(violations.isEmpty(), "out of order or repeated: " + violations + "\n" + logTails());
        assertEquals(GROUPS * PER_GROUP, acked, "messages acked once each: " + next + "\n" + logTails());
        assertEquals(List.of(1, 2), failedAttempts, "the failed message: first attempt, then redelivered as attempt 2");
    }

    record Seen(String group, int idx, int attempt, ConsumeResult result, long atMillis) {
    }

    @Test
    void pushConsumerFifoInOrderWithRetries() throws Exception {
        String topic = unique("p5p");
        String group = unique("p5p_cg");
        Map<String, Sent> byId = prepare(topic, group);
        List<Seen> seen = new CopyOnWriteArrayList<>();
        long t0 = System.currentTimeMillis();
        Map<String, Integer> succeeded = new ConcurrentHashMap<>();
        PushConsumer pc = track(PROVIDER.newPushConsumerBuilder()
            .setClientConfiguration(clientConfig())
            .setConsumerGroup(group)
            .setSubscriptionExpressions(Map.of(topic, new FilterExpression("*", FilterExpressionType.TAG)))
            .setConsumptionThreadCount(4)
            .setMessageListener(v -> {
                Sent s = byId.get(v.getMessageId().toString());
                if (s == null) {
                    seen.add(new Seen("?", -1, v.getDeliveryAttempt(), ConsumeResult.SUCCESS, System.currentTimeMillis() - t0));
                    return ConsumeResult.SUCCESS;
                }
                ConsumeResult r = s.group.equals("mg0") && s.idx == FAIL_AT && v.getDeliveryAttempt() == 1
                    ? ConsumeResult.FAILURE : ConsumeResult.SUCCESS;
                seen.add(new Seen(s.group, s.idx, v.getDeliveryAttempt(), r, System.currentTimeMillis() - t0));
                if (r == ConsumeResult.SUCCESS) {
                    succeeded.merge(s.group, 1, Integer::sum);
                }
                return r;
            })
            .build());
        await("every message consumed successfully", Duration.ofSeconds(60),
            () -> succeeded.values().stream().mapToInt(Integer::intValue).sum() >= GROUPS * PER_GROUP,
            () -> "succeeded " + succeeded + ", seen " + seen + "\n" + logTails());
        // when each delivery happened (ms after the consumer was built), for reading a green run too
        System.out.println("P6 push deliveries: " + seen);
        for (int g = 0; g < GROUPS; g++) {
            String mg = "mg" + g;
            List<Seen> of = seen.stream().filter(s -> s.group.equals(mg)).toList();
            List<Integer> ok = of.stream().filter(s -> s.result == ConsumeResult.SUCCESS).map(Seen::idx).toList();
            List<Integer> want = new ArrayList<>();
            for (int i = 0; i < PER_GROUP; i++) {
                want.add(i);
            }
            assertEquals(want, ok, "successful deliveries of " + mg + " in send order, once each: " + of);
            int failAt = -1;
            for (int k = 0; k < of.size(); k++) {
                if (of.get(k).result == ConsumeResult.FAILURE) {
                    failAt = k;
                }
            }
            if (g != 0) {
                assertEquals(-1, failAt, mg + " never fails: " + of);
                continue;
            }
            assertTrue(failAt >= 0, "the failure of " + mg + " happened: " + of);
            Seen retry = of.get(failAt + 1);
            assertEquals(FAIL_AT, retry.idx, mg + ": the failed message is the next delivery of its group: " + of);
            assertTrue(retry.attempt >= 2, mg + ": retry attempt: " + retry);
        }
        assertTrue(seen.stream().noneMatch(s -> s.idx < 0), "messages that were never sent: " + seen);
        pc.close();
    }
}
