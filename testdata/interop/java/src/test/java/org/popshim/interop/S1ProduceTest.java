package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.junit.jupiter.api.Test;

/**
 * Scenario 1: a DefaultMQProducer pointed at popshim's name server sends 1,000 messages with sync, async,
 * oneway and batch sends; every SendResult is SEND_OK and queue offsets never repeat and increase.
 */
class S1ProduceTest extends InteropBase {
    static final int N = 1000;

    @Test
    void producesThousandMessagesInAllSendStyles() throws Exception {
        String topic = unique("s1");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s1_pg"), wire));
        List<Spec> specs = Spec.generate(topic, N);
        Sending sent = new Sending().sendMixed(p, specs);

        int expectedResults = 0;
        int batches = 0;
        for (Spec s : specs) {
            Sending.Mode m = Sending.modeOf(s.idx, N);
            if (m == Sending.Mode.SYNC || m == Sending.Mode.ASYNC) {
                expectedResults++;
            }
        }
        batches = (int) Math.ceil(specs.stream().filter(s -> Sending.modeOf(s.idx, N) == Sending.Mode.BATCH).count()
            / (double) Sending.BATCH_SIZE);
        assertEquals(expectedResults + batches, sent.results.size(), "one SendResult per sync/async send and per batch");

        // Every SendResult is SEND_OK, names a queue of the broker, and for single sends carries the UNIQ_KEY.
        for (Sending.Result r : sent.results) {
            SendResult sr = r.result();
            assertEquals(SendStatus.SEND_OK, sr.getSendStatus(), r.mode() + " send " + sr + "\n" + diag());
            assertNotNull(sr.getMessageQueue(), "SendResult without a queue: " + sr);
            assertFalse(sr.getMessageQueue().getBrokerName().isEmpty(), "empty brokerName in " + sr);
            assertTrue(sr.getMessageQueue().getQueueId() >= 0, "negative queueId in " + sr);
            assertTrue(sr.getQueueOffset() >= 0, "negative queueOffset in " + sr);
            assertNotNull(sr.getOffsetMsgId(), "no offsetMsgId (ext field msgId) in " + sr);
            if (r.mode() != Sending.Mode.BATCH) {
                assertEquals(r.specs().get(0).uniqKey, sr.getMsgId(), "SendResult.msgId is the UNIQ_KEY");
            }
        }

        // Offsets: per queue, no offset is handed out twice (a batch covers [queueOffset, queueOffset+size)),
        // and synchronous sends, which complete in order, get strictly increasing offsets.
        Map<String, Set<Long>> used = new HashMap<>();
        Map<String, List<Long>> syncOrder = new HashMap<>();
        for (Sending.Result r : sent.results) {
            SendResult sr = r.result();
            String q = sr.getMessageQueue().getBrokerName() + "/" + sr.getMessageQueue().getQueueId();
            for (int i = 0; i < r.specs().size(); i++) {
                long off = sr.getQueueOffset() + i;
                assertTrue(used.computeIfAbsent(q, k -> new HashSet<>()).add(off),
                    "queue " + q + " offset " + off + " handed out twice (" + r.mode() + ")");
            }
            if (r.mode() == Sending.Mode.SYNC) {
                syncOrder.computeIfAbsent(q, k -> new ArrayList<>()).add(sr.getQueueOffset());
            }
        }
        assertTrue(syncOrder.size() > 1, "sync sends should spread over several queues: " + syncOrder.keySet());
        syncOrder.forEach((q, offs) -> {
            for (int i = 1; i < offs.size(); i++) {
                assertTrue(offs.get(i) > offs.get(i - 1), "queue " + q + " sync offsets not increasing: " + offs);
            }
        });

        // A final sync send to every queue seen gets an offset above everything handed out before on it,
        // including the oneway messages sent in between.
        for (int i = 0; i < 8; i++) {
            SendResult sr = p.send(Spec.make(topic, N + i, "TagZ").toMessage());
            assertEquals(SendStatus.SEND_OK, sr.getSendStatus());
            String q = sr.getMessageQueue().getBrokerName() + "/" + sr.getMessageQueue().getQueueId();
            long max = used.getOrDefault(q, Set.of(-1L)).stream().mapToLong(Long::longValue).max().orElse(-1);
            assertTrue(sr.getQueueOffset() > max, "late send on " + q + " got " + sr.getQueueOffset() + " <= " + max);
            used.computeIfAbsent(q, k -> new HashSet<>()).add(sr.getQueueOffset());
        }

        // The big message went out compressed (sysFlag bit 0x1, smaller body) on SEND_MESSAGE_V2 and was accepted.
        Spec big = specs.get(Spec.BIG_INDEX);
        List<WireLog.Exchange> bigSend = wire.of(SEND_MESSAGE_V2,
            e -> e.req("i") != null && e.req("i").contains(big.uniqKey));
        assertEquals(1, bigSend.size(), "one SEND_MESSAGE_V2 for the big message\n" + diag());
        WireLog.Exchange e = bigSend.get(0);
        int sysFlag = Integer.parseInt(e.req("f"));
        assertEquals(MessageSysFlag.COMPRESSED_FLAG, sysFlag & MessageSysFlag.COMPRESSED_FLAG,
            "the >4 KiB body should be sent compressed: " + e);
        assertTrue(e.requestBody().length < big.body.length, "compressed body not smaller: " + e);
        assertEquals(SUCCESS, e.responseCode(), "big message send: " + e);
        assertNotNull(e.resp("queueId"), "send reply without queueId: " + e);
        assertNotNull(e.resp("queueOffset"), "send reply without queueOffset: " + e);

        // Batches went out as SEND_BATCH_MESSAGE and were answered SUCCESS.
        List<WireLog.Exchange> batchSends = wire.of(SEND_BATCH_MESSAGE);
        assertEquals(batches, batchSends.size(), "SEND_BATCH_MESSAGE count\n" + diag());
        batchSends.forEach(b -> assertEquals(SUCCESS, b.responseCode(), "batch send: " + b));
    }
}
