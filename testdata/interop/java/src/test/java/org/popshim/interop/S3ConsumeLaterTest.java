package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.junit.jupiter.api.Test;

/**
 * Scenario 3: the listener answers RECONSUME_LATER for a chosen subset on first delivery. The client sends
 * CHANGE_MESSAGE_INVISIBLETIME (10 s, the first pop delay level) for exactly those; they come back once
 * with reconsumeTimes 1 and are then acked; the rest never come back.
 */
class S3ConsumeLaterTest extends InteropBase {
    static final int N = 200;
    /** Longer than the 10 s the client asks for on CHANGE, so an early return can only come from CHANGE. */
    static final long INVISIBLE_MS = 20_000;

    static boolean chosen(int idx) {
        return idx % 5 == 0;
    }

    @Test
    void reconsumeLaterComesBackThroughChangeInvisibleTime() throws Exception {
        String topic = unique("s3");
        String group = unique("s3_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s3_pg"), wire));
        List<Spec> specs = Spec.generate(topic, N);
        Sending.sendAllSync(p, specs);
        Set<Integer> subset = specs.stream().map(s -> s.idx).filter(S3ConsumeLaterTest::chosen).collect(Collectors.toSet());

        Received got = new Received();
        track(got.start(shim, group, topic, "*", INVISIBLE_MS, wire,
            m -> chosen(Spec.indexOf(m)) && m.getReconsumeTimes() == 0
                ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS));

        // The bound only turns a hang into a failure. That the subset came back through CHANGE (and not by
        // the 20 s invisible time running out) is proven from the wire below, not from timing.
        Received.await("the subset back with reconsumeTimes 1", Duration.ofSeconds(90),
            () -> got.distinct() == N && subset.stream().allMatch(i -> got.of(i).size() >= 2),
            () -> "distinct=" + got.distinct() + " redelivered=" + got.duplicates().keySet() + "\n" + diag());

        // The client changed the invisible time of exactly the subset, and popshim answered SUCCESS with the
        // header the client builds the new handle from.
        List<WireLog.Exchange> changes = wire.of(CHANGE_MESSAGE_INVISIBLETIME);
        Set<Integer> changed = new HashSet<>();
        for (WireLog.Exchange e : changes) {
            Integer idx = got.idxByHandle.get(e.req("extraInfo"));
            assertNotNull(idx, "CHANGE for a handle no listener saw: " + e);
            assertEquals(SUCCESS, e.responseCode(), "CHANGE_MESSAGE_INVISIBLETIME reply: " + e + "\n" + diag());
            assertEquals("10000", e.req("invisibleTime"), "first RECONSUME_LATER asks for 10 s: " + e);
            assertNotNull(e.resp("popTime"), "CHANGE reply without popTime: " + e);
            assertEquals("10000", e.resp("invisibleTime"), "CHANGE reply invisibleTime: " + e);
            assertNotNull(e.resp("reviveQid"), "CHANGE reply without reviveQid: " + e);
            changed.add(idx);
        }
        assertEquals(subset, changed, "CHANGE_MESSAGE_INVISIBLETIME sent for exactly the RECONSUME_LATER subset");
        assertEquals(subset.size(), changes.size(), "one CHANGE per RECONSUME_LATER");

        Thread.sleep(INVISIBLE_MS + REVIVE_SLACK_MS);
        for (Spec s : specs) {
            List<Received.Delivery> ds = got.of(s.idx);
            if (subset.contains(s.idx)) {
                assertEquals(2, ds.size(), "idx " + s.idx + " deliveries (reconsumeTimes): "
                    + ds.stream().map(Received.Delivery::reconsumeTimes).collect(Collectors.toList()));
                assertEquals(0, ds.get(0).reconsumeTimes(), "first delivery of idx " + s.idx);
                assertEquals(1, ds.get(1).reconsumeTimes(), "redelivery of idx " + s.idx + " must be reconsumeTimes+1");
                s.assertMatches(ds.get(1).msg());
                assertEquals(ds.get(0).msg().getMsgId(), ds.get(1).msg().getMsgId(), "msgId kept on retry");
            } else {
                assertEquals(1, ds.size(), "acked idx " + s.idx + " came back " + (ds.size() - 1) + " time(s)");
                s.assertMatches(ds.get(0).msg());
            }
        }
        assertTrue(got.foreign.isEmpty(), "messages that were never sent: " + got.foreign.stream().map(Spec::describe).toList());
        List<WireLog.Exchange> acks = wire.of(ACK_MESSAGE);
        assertFalse(acks.isEmpty(), "no ACK_MESSAGE sent\n" + diag());
        acks.forEach(e -> assertEquals(SUCCESS, e.responseCode(), "ack reply: " + e));
        assertEquals(N, acks.size(), "one ack per message (the subset only after its redelivery)");
    }
}
