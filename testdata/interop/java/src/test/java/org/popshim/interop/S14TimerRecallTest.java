package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.producer.RecallMessageHandle;
import org.junit.jupiter.api.Test;

/**
 * Scenario 14: cancelling timer messages. Three messages are sent with {@code setDeliverTimeMs} to the same
 * time and queue: one is recalled with {@code DefaultMQProducer.recallMessage(topic, sendResult.getRecallHandle())}
 * (RECALL_MESSAGE, 370, popshim started with --recall-message-enable), one is cancelled by a message carrying
 * TIMER_DEL_UNIQKEY = topic + "+" + its msgId and the same delivery time (put with
 * {@code MessageAccessor.putProperty}), the third is delivered. A sentinel sent after the due time, to the same
 * queue, proves the cancelled ones would have arrived by then.
 */
class S14TimerRecallTest extends InteropBase {
    static final long AHEAD_MS = 4_000;

    @Override
    protected List<String> popshimArgs() {
        return List.of("--recall-message-enable");
    }

    private static Message msg(String topic, String body) {
        return new Message(topic, "TagR", body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void recalledAndDeletedTimersAreNotDelivered() throws Exception {
        String topic = unique("s14");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s14_pg"), wire));
        SendResult warm = p.send(msg(topic, "warm"));
        MessageQueue q0 = new MessageQueue(topic, warm.getMessageQueue().getBrokerName(), 0);

        Set<String> got = ConcurrentHashMap.newKeySet();
        Received rec = new Received();
        track(rec.start(shim, unique("s14_cg"), topic, "*", 15_000, wire, m -> {
            got.add(new String(m.getBody(), StandardCharsets.UTF_8));
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }));
        Received.await("the warm-up message", Duration.ofSeconds(60), () -> got.contains("warm"), this::diag);

        long due = System.currentTimeMillis() + AHEAD_MS;
        Message recallMe = msg(topic, "recall-me");
        recallMe.setDeliverTimeMs(due);
        SendResult r1 = p.send(recallMe, q0);
        assertEquals(SendStatus.SEND_OK, r1.getSendStatus());
        assertNotNull(r1.getRecallHandle(), "a timer message's SEND reply carries recallHandle");
        RecallMessageHandle.HandleV1 h = (RecallMessageHandle.HandleV1) RecallMessageHandle.decodeHandle(r1.getRecallHandle());
        assertEquals(topic, h.getTopic());
        assertEquals(r1.getMsgId(), h.getMessageId());

        Message keep = msg(topic, "keep-me");
        keep.setDeliverTimeMs(due);
        p.send(keep, q0);
        Message deleteMe = msg(topic, "delete-me");
        deleteMe.setDeliverTimeMs(due);
        SendResult r3 = p.send(deleteMe, q0);

        assertEquals(r1.getMsgId(), p.recallMessage(topic, r1.getRecallHandle()), "recallMessage returns the msgId");
        Message marker = msg(topic, "marker");
        marker.setDeliverTimeMs(due);
        MessageAccessor.putProperty(marker, MessageConst.PROPERTY_TIMER_DEL_UNIQKEY, topic + "+" + r3.getMsgId());
        assertEquals(SendStatus.SEND_OK, p.send(marker, q0).getSendStatus());

        Message plain = msg(topic, "plain");
        SendResult noTimer = p.send(plain, q0);
        assertNull(noTimer.getRecallHandle(), "no recall handle for an undelayed message");

        Received.await("the kept timer message", Duration.ofSeconds(60), () -> got.contains("keep-me"), this::diag);
        while (System.currentTimeMillis() <= due) {
            Thread.sleep(50);
        }
        p.send(msg(topic, "sentinel"), q0);
        Received.await("the sentinel", Duration.ofSeconds(60), () -> got.contains("sentinel"), this::diag);
        assertTrue(!got.contains("recall-me"), "recalled message delivered: " + got);
        assertTrue(!got.contains("delete-me"), "message deleted with TIMER_DEL_UNIQKEY delivered: " + got);
        assertTrue(!got.contains("marker"), "the deletion marker itself delivered: " + got);
        assertTrue(got.contains("plain"), String.valueOf(got));
        try {
            p.recallMessage(topic, r1.getRecallHandle());
            throw new AssertionError("recalling a message past its time was accepted");
        } catch (MQBrokerException e) {
            assertEquals(604, e.getResponseCode());
            assertEquals("recall failed, timestamp invalid", e.getErrorMessage());
        }
    }
}
