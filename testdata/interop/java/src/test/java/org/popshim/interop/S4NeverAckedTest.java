package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil;
import org.junit.jupiter.api.Test;

/**
 * Scenario 4: messages that are popped and never acked are revived after their invisible time and come
 * back with reconsumeTimes + 1, each time: twice through the raw POP API without acking, then once more
 * to a POP push consumer, which acks them for good.
 */
class S4NeverAckedTest extends InteropBase {
    static final int N = 60;
    static final long INVISIBLE_MS = 5_000;
    static final long ROUND2_INVISIBLE_MS = 10_000;

    @Test
    void unackedMessagesAreRevivedWithReconsumeTimesPlusOne() throws Exception {
        String topic = unique("s4");
        String group = unique("s4_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s4_pg"), wire));
        List<Spec> specs = Spec.generate(topic, N);
        Sending.sendAllSync(p, specs);

        try (DirectApi api = DirectApi.connect(shim, topic, wire)) {
            Map<Integer, MessageExt> round1 = popAll(api, group, topic, INVISIBLE_MS, "round 1");
            // Round 2 holds its messages longer, so none revives again while the last ones are still awaited.
            Map<Integer, MessageExt> round2 = popAll(api, group, topic, ROUND2_INVISIBLE_MS, "round 2 (after revive)");
            for (Spec s : specs) {
                MessageExt first = round1.get(s.idx);
                MessageExt second = round2.get(s.idx);
                assertEquals(0, first.getReconsumeTimes(), "first pop of idx " + s.idx);
                assertEquals(1, second.getReconsumeTimes(), "revived idx " + s.idx + " must have reconsumeTimes 1");
                s.assertMatches(second);
                long firstPop = ExtraInfoUtil.getPopTime(ExtraInfoUtil.split(handle(first)));
                long secondPop = ExtraInfoUtil.getPopTime(ExtraInfoUtil.split(handle(second)));
                assertTrue(secondPop >= firstPop + INVISIBLE_MS, "idx " + s.idx + " was popped again at " + secondPop
                    + ", before its invisible time ended at " + (firstPop + INVISIBLE_MS) + " (broker clock)");
                assertEquals(first.getMsgId(), second.getMsgId(), "msgId (UNIQ_KEY) kept on revive");
                assertEquals(first.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME),
                    second.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME), "1ST_POP_TIME kept on revive of " + s.idx);
            }
        }
        assertTrue(wire.of(ACK_MESSAGE).isEmpty() && wire.of(CHANGE_MESSAGE_INVISIBLETIME).isEmpty(),
            "rounds 1 and 2 must not ack or change anything");

        // Round 3: a POP push consumer gets each message once more, now with reconsumeTimes 2, and acks it.
        Received got = new Received();
        track(got.start(shim, group, topic, "*", 10_000, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));
        Received.await("all " + N + " revived messages at the push consumer", Duration.ofSeconds(90),
            () -> got.distinct() == N, () -> "distinct=" + got.distinct() + "\n" + diag());
        Thread.sleep(10_000 + REVIVE_SLACK_MS);
        for (Spec s : specs) {
            List<Received.Delivery> ds = got.of(s.idx);
            assertEquals(1, ds.size(), "idx " + s.idx + " deliveries after ack (reconsumeTimes): "
                + ds.stream().map(Received.Delivery::reconsumeTimes).collect(Collectors.toList()));
            assertEquals(2, ds.get(0).reconsumeTimes(), "third delivery of idx " + s.idx);
            s.assertMatches(ds.get(0).msg());
        }
        List<WireLog.Exchange> acks = wire.of(ACK_MESSAGE);
        assertEquals(N, acks.size(), "one ack per message\n" + diag());
        acks.forEach(e -> assertEquals(SUCCESS, e.responseCode(), "ack of a revived message: " + e));
    }

    /** Pops (never acking) until every one of the N messages was seen once; fails on a duplicate. */
    private Map<Integer, MessageExt> popAll(DirectApi api, String group, String topic, long invisibleMs, String what)
        throws Exception {
        Map<Integer, MessageExt> seen = new HashMap<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (seen.size() < N) {
            assertTrue(System.nanoTime() < deadline, what + ": only " + seen.size() + " of " + N
                + " messages popped within 60 s\n" + diag());
            PopResult r = api.pop(group, topic, 32, invisibleMs, 3_000, "*");
            if (r.getPopStatus() != PopStatus.FOUND) {
                continue;
            }
            assertNotNull(r.getMsgFoundList(), "FOUND without messages");
            assertFalse(r.getMsgFoundList().isEmpty(), "FOUND with an empty list");
            for (MessageExt m : r.getMsgFoundList()) {
                int idx = Spec.indexOf(m);
                assertTrue(idx >= 0 && idx < N, what + ": unexpected message " + Spec.describe(m));
                MessageExt prev = seen.put(idx, m);
                assertTrue(prev == null, what + ": idx " + idx + " popped twice while invisible: " + Spec.describe(prev) + " then " + Spec.describe(m));
            }
        }
        return seen;
    }

    private static String handle(MessageExt m) {
        String h = m.getProperty(MessageConst.PROPERTY_POP_CK);
        assertNotNull(h, "no POP_CK on " + Spec.describe(m));
        return h;
    }
}
