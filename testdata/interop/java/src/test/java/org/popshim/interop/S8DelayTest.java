package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/**
 * Scenario 8: delayed delivery. The Java remoting producer sends one message with delay level 2 (5 s by
 * the default messageDelayLevel) and one with {@code setDeliverTimeMs} 3 s ahead; a POP push consumer that is
 * already consuming the topic receives each one no earlier than its due time, with its content, tags, keys,
 * user properties and msgId unchanged. The delivered message's store timestamp (the broker's delivery
 * time) is at most 2 s after the due time. Client and broker share this machine's clock.
 */
class S8DelayTest extends InteropBase {
    static final long LEVEL2_MS = 5_000;
    static final long DELIVER_AHEAD_MS = 3_000;

    @Test
    void delayLevelAndDeliverTimeArriveAtTheirTime() throws Exception {
        String topic = unique("s8");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s8_pg"), wire));
        // A first, undelayed message creates the topic (TBW102 fallback) and proves the consumer is live.
        Spec warm = Spec.make(topic, 0, "TagA");
        warm.uniqKey = p.send(warm.toMessage()).getMsgId();

        Map<Integer, Long> arrivedAt = new ConcurrentHashMap<>();
        Received got = new Received();
        track(got.start(shim, unique("s8_cg"), topic, "*", 15_000, wire, m -> {
            arrivedAt.putIfAbsent(Spec.indexOf(m), System.currentTimeMillis());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }));
        Received.await("the undelayed message", Duration.ofSeconds(60), () -> got.of(0).size() > 0, this::diag);

        Spec level = Spec.make(topic, 1, "TagB");
        Message lm = level.toMessage();
        lm.setDelayTimeLevel(2);
        long levelDue = System.currentTimeMillis() + LEVEL2_MS;
        SendResult lr = p.send(lm);
        assertEquals(SendStatus.SEND_OK, lr.getSendStatus(), "delay-level send");
        level.uniqKey = lr.getMsgId();

        Spec timed = Spec.make(topic, 2, "TagC");
        Message tm = timed.toMessage();
        long timedDue = System.currentTimeMillis() + DELIVER_AHEAD_MS;
        tm.setDeliverTimeMs(timedDue);
        SendResult tr = p.send(tm);
        assertEquals(SendStatus.SEND_OK, tr.getSendStatus(), "deliver-time send");
        timed.uniqKey = tr.getMsgId();

        Received.await("both delayed messages", Duration.ofSeconds(60),
            () -> got.of(1).size() > 0 && got.of(2).size() > 0, this::diag);

        check(got, level, arrivedAt.get(1), levelDue);
        check(got, timed, arrivedAt.get(2), timedDue);
        assertTrue(got.duplicates().isEmpty(), "duplicates: " + got.duplicates());
    }

    private void check(Received got, Spec spec, long arrived, long due) {
        MessageExt m = got.of(spec.idx).get(0).msg();
        spec.assertMatches(m);
        assertTrue(arrived >= due, "message " + spec.idx + " arrived at " + arrived + ", before its due time " + due
            + " (" + (due - arrived) + " ms early): " + Spec.describe(m));
        long lateness = m.getStoreTimestamp() - due;
        assertTrue(lateness <= 2_000, "message " + spec.idx + " stored for delivery " + lateness
            + " ms after its due time: " + Spec.describe(m));
    }
}
