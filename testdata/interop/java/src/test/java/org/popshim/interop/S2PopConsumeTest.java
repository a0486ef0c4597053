package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.compression.CompressorFactory;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.junit.jupiter.api.Test;

/**
 * Scenario 2: a DefaultMQPushConsumer with clientRebalance=false is put in POP mode by popshim's
 * QUERY_ASSIGNMENT answer, receives all 1,000 messages exactly as sent, acks every one, and none comes
 * back after its invisible time has passed.
 */
class S2PopConsumeTest extends InteropBase {
    static final int N = 1000;
    static final long INVISIBLE_MS = 10_000;

    @Test
    void popConsumesEveryMessageOnceAndAcksIt() throws Exception {
        String topic = unique("s2");
        String group = unique("s2_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s2_pg"), wire));
        List<Spec> specs = Spec.generate(topic, N);
        new Sending().sendMixed(p, specs);

        Received got = new Received();
        track(got.start(shim, group, topic, "*", INVISIBLE_MS, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));

        Received.await("all " + N + " messages", Duration.ofSeconds(120), () -> got.distinct() == N,
            () -> "distinct=" + got.distinct() + " total=" + got.total + "\n" + diag());
        Received.await("an ACK_MESSAGE SUCCESS for every message", Duration.ofSeconds(30),
            () -> ackedIdx(got).size() == N, () -> "acked=" + ackedIdx(got).size() + "\n" + diag());

        // POP mode was chosen by popshim through QUERY_ASSIGNMENT, and POP (not PULL) fetched the messages.
        assertQueryAssignmentSaysPop(topic);
        assertFalse(wire.of(POP_MESSAGE, e -> topic.equals(e.req("topic")) && e.responseCode() == SUCCESS).isEmpty(),
            "no successful POP_MESSAGE for " + topic + "\n" + diag());
        assertTrue(wire.of(PULL_MESSAGE, e -> topic.equals(e.req("topic"))).isEmpty(),
            "the consumer pulled " + topic + " instead of popping it\n" + diag());

        // Each message arrived as sent, first time with reconsumeTimes 0.
        for (Spec s : specs) {
            List<Received.Delivery> ds = got.of(s.idx);
            assertFalse(ds.isEmpty(), "idx " + s.idx + " never delivered");
            MessageExt first = ds.get(0).msg();
            s.assertMatches(first);
            assertEquals(0, first.getReconsumeTimes(), "first delivery of idx " + s.idx);
            assertNotNull(ds.get(0).handle(), "no POP_CK on idx " + s.idx);
            assertEquals(8, ds.get(0).handle().split(" ").length, "POP_CK fields: " + ds.get(0).handle());
        }
        assertBigMessageStillCompressedOnTheWire(specs.get(Spec.BIG_INDEX));
        assertTrue(got.foreign.isEmpty(), "messages that were never sent: " + got.foreign.stream().map(Spec::describe).toList());

        // Wait past the invisible time plus revive slack: nothing may be redelivered.
        Thread.sleep(INVISIBLE_MS + REVIVE_SLACK_MS);
        assertTrue(got.duplicates().isEmpty(), "redelivered after ack (idx -> reconsumeTimes): " + got.duplicates()
            + "\n" + diag());
        assertEquals(N, got.total.get(), "deliveries in total");
        List<WireLog.Exchange> failedAcks = wire.of(ACK_MESSAGE, e -> e.responseCode() != SUCCESS);
        assertTrue(failedAcks.isEmpty(), "failed acks: " + failedAcks);
    }

    /**
     * The client inflates compressed bodies and clears sysFlag bit 0x1 before the listener sees them, so the
     * check is made on the POP reply itself: popshim must return the producer's compressed body and sysFlag.
     */
    private void assertBigMessageStillCompressedOnTheWire(Spec big) {
        MessageExt raw = null;
        for (WireLog.Exchange e : wire.of(POP_MESSAGE, x -> x.responseCode() == SUCCESS)) {
            for (MessageExt m : e.messages()) {
                if (Spec.indexOf(m) == big.idx) {
                    raw = m;
                }
            }
        }
        assertNotNull(raw, "no POP reply carried idx " + big.idx);
        MessageExt onWire = raw;
        assertEquals(MessageSysFlag.COMPRESSED_FLAG, raw.getSysFlag() & MessageSysFlag.COMPRESSED_FLAG,
            "POP reply must keep the producer's compressed sysFlag: " + Spec.describe(raw));
        assertTrue(raw.getBody().length < big.body.length, "POP reply body is not the compressed one: " + Spec.describe(raw));
        byte[] inflated = assertDoesNotThrow(() -> CompressorFactory.getCompressor(
            MessageSysFlag.getCompressionType(onWire.getSysFlag())).decompress(onWire.getBody()));
        assertArrayEquals(big.body, inflated, "inflated body of idx " + big.idx);
    }

    private Set<Integer> ackedIdx(Received got) {
        Set<Integer> out = new HashSet<>();
        for (WireLog.Exchange e : wire.of(ACK_MESSAGE, x -> x.responseCode() == SUCCESS)) {
            Integer idx = got.idxByHandle.get(e.req("extraInfo"));
            if (idx != null) {
                out.add(idx);
            }
        }
        return out;
    }

    private void assertQueryAssignmentSaysPop(String topic) {
        List<WireLog.Exchange> qa = wire.of(QUERY_ASSIGNMENT, e -> e.responseCode() == SUCCESS && e.requestBody() != null
            && topic.equals(JSON.parseObject(new String(e.requestBody(), StandardCharsets.UTF_8)).getString("topic")));
        assertFalse(qa.isEmpty(), "no successful QUERY_ASSIGNMENT for " + topic + "\n" + diag());
        JSONObject body = JSON.parseObject(new String(qa.get(0).responseBody(), StandardCharsets.UTF_8));
        JSONArray assignments = body.getJSONArray("messageQueueAssignments");
        assertNotNull(assignments, "QUERY_ASSIGNMENT reply without messageQueueAssignments: " + body);
        assertFalse(assignments.isEmpty(), "empty assignment for " + topic + ": " + body);
        for (int i = 0; i < assignments.size(); i++) {
            assertEquals("POP", assignments.getJSONObject(i).getString("mode"), "assignment mode: " + body);
        }
    }
}
