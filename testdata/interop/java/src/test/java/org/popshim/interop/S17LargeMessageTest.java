package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scenario 17: large messages round-trip byte for byte. popshim keeps the records of large write batches
 * (32 KiB of records or more, or 64 records or more) in a commit log of segment files and reads records of
 * 32 KiB or more from it with pread, smaller ones out of the segment's mapping; VIEW_MESSAGE_BY_ID of a
 * record that is not the first of its batch reads its header with pread first. A DefaultMQProducer with
 * compression turned off sends random (incompressible) bodies of 31 KiB, 32 KiB, 100 KiB, 1 MiB and
 * 3.9 MiB one by one (the lone 31 KiB record stays below the commit log's batch threshold), one batch of
 * 40 × 40 KiB and one batch mixing records below and above 32 KiB (mapping and pread reads in one reply). Each message must come back with its SHA-256, msgId,
 * offsetMsgId, queue and queue offset to a POP push consumer, to a PULL push consumer of another group, and
 * from viewMessage (VIEW_MESSAGE_BY_ID, mqadmin queryMsgById) by the offsetMsgId the send returned.
 */
class S17LargeMessageTest extends InteropBase {
    static final int KIB = 1024;
    static final int MIB = 1024 * KIB;
    /** Bodies sent one by one; 3.9 MiB is below the client's and popshim's 4 MiB maximum body. */
    static final int[] SINGLE_SIZES = {31 * KIB, 32 * KIB, 100 * KIB, MIB, (int) (3.9 * MIB)};
    static final int BATCH_N = 40;
    static final int BATCH_BODY = 40 * KIB;
    /**
     * One batch whose records straddle the 32 KiB pread threshold: a record is its body plus some 270 B
     * (header, topic, properties), so 31 KiB bodies stay below it and 32 KiB ones are above.
     */
    static final int[] MIXED_SIZES = {100, 31 * KIB, 32 * KIB, KIB, 33 * KIB, 31 * KIB, 64 * KIB, 10};
    static final Duration MAX_WAIT = Duration.ofSeconds(60);
    static final int VIEW_MESSAGE_BY_ID = 33;

    /** One sent message: its body and checksum, and what its SendResult said. */
    static final class Sent {
        final int idx;
        final String label;
        final byte[] body;
        final String sha256;
        String msgId;
        String offsetMsgId;
        int queueId;
        long queueOffset;

        Sent(int idx, String label, byte[] body) {
            this.idx = idx;
            this.label = label;
            this.body = body;
            this.sha256 = sha256(body);
        }

        Message toMessage(String topic) {
            Message m = new Message(topic, body);
            m.putUserProperty("idx", Integer.toString(idx));
            m.putUserProperty("label", label);
            return m;
        }

        @Override
        public String toString() {
            return label + " (idx " + idx + ", " + body.length + " B, msgId " + msgId + ", offsetMsgId " + offsetMsgId
                + ", queue " + queueId + " offset " + queueOffset + ")";
        }
    }

    private final long seed = System.nanoTime();
    private final List<Sent> sent = new ArrayList<>();
    private final List<Sent> batch40 = new ArrayList<>();
    private String topic;
    private DefaultMQProducer producer;

    @BeforeAll
    void produce() throws Exception {
        topic = unique("s17");
        producer = track(Sending.producer(shim, unique("s17_pg"), wire));
        // Bodies are stored as sent: no compression, so a record is at least as large as its body.
        producer.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE);
        Random rnd = new Random(seed);

        for (int size : SINGLE_SIZES) {
            Sent s = add(rnd, "single-" + size + "B", size);
            Message m = s.toMessage(topic);
            assertTrue(size <= producer.getMaxMessageSize(), "body above the producer's maxMessageSize: " + s);
            SendResult r = producer.send(m);
            assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send of " + s + ": " + r + "\n" + diag());
            s.msgId = r.getMsgId();
            s.offsetMsgId = r.getOffsetMsgId();
            s.queueId = r.getMessageQueue().getQueueId();
            s.queueOffset = r.getQueueOffset();
            assertEquals(m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX), s.msgId, "msgId of " + s);
            // The producer did not compress it (random bytes would not shrink, but a compressed body would
            // be a different record than the one this test means to read back).
            List<WireLog.Exchange> ex = wire.of(SEND_MESSAGE_V2, e -> e.req("i") != null && e.req("i").contains(s.msgId));
            assertEquals(1, ex.size(), "one SEND_MESSAGE_V2 for " + s + "\n" + diag());
            assertEquals(0, Integer.parseInt(ex.get(0).req("f")) & MessageSysFlag.COMPRESSED_FLAG,
                "sent compressed: " + ex.get(0));
            assertEquals(size, ex.get(0).requestBody().length, "body on the wire of " + s);
        }

        List<Sent> mixed = new ArrayList<>();
        for (int i = 0; i < BATCH_N; i++) {
            batch40.add(add(rnd, "batch40-#" + (i + 1), BATCH_BODY));
        }
        for (int i = 0; i < MIXED_SIZES.length; i++) {
            mixed.add(add(rnd, "mixed-#" + (i + 1) + "-" + MIXED_SIZES[i] + "B", MIXED_SIZES[i]));
        }
        sendBatch(batch40);
        sendBatch(mixed);
    }

    /** The POP push consumer (popshim assigns POP mode through QUERY_ASSIGNMENT) gets every body intact. */
    @Test
    void popConsumerGetsEveryLargeBodyIntact() throws Exception {
        String group = unique("s17_pop");
        Received got = new Received();
        track(got.start(shim, group, topic, "*", 60_000, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));
        awaitAll("POP consumer " + group, got);
        assertFalse(wire.of(POP_MESSAGE, e -> group.equals(e.req("consumerGroup")) && e.responseCode() == SUCCESS).isEmpty(),
            "no successful POP_MESSAGE for " + group + "\n" + diag());
        assertTrue(wire.of(PULL_MESSAGE, e -> group.equals(e.req("consumerGroup"))).isEmpty(),
            group + " pulled instead of popping\n" + diag());
        checkDeliveries("POP consumer", got);
    }

    /** A push consumer of another group in the default PULL mode (client-side rebalance) gets them too. */
    @Test
    void pullConsumerGetsEveryLargeBodyIntact() throws Exception {
        String group = unique("s17_pull");
        Received got = new Received();
        track(pullConsumer(group, topic, MessageSelector.byTag("*"), got, true));
        awaitAll("PULL consumer " + group, got);
        assertFalse(wire.of(PULL_MESSAGE, e -> group.equals(e.req("consumerGroup")) && e.responseCode() == SUCCESS).isEmpty(),
            "no successful PULL_MESSAGE for " + group + "\n" + diag());
        assertTrue(wire.of(POP_MESSAGE, e -> group.equals(e.req("consumerGroup"))).isEmpty(),
            group + " popped instead of pulling\n" + diag());
        checkDeliveries("PULL consumer", got);
    }

    /**
     * viewMessage by offsetMsgId (VIEW_MESSAGE_BY_ID) of every message, among them the 1st, 10th and 40th
     * of the 40 × 40 KiB batch (the latter two are not the first record of their batch) and the 3.9 MiB one.
     */
    @Test
    void viewMessageByOffsetMsgIdReturnsEveryLargeBodyIntact() {
        for (Sent s : List.of(batch40.get(0), batch40.get(9), batch40.get(BATCH_N - 1), sent.get(SINGLE_SIZES.length - 1))) {
            assertNotNull(s.offsetMsgId, "no offsetMsgId for " + s);
        }
        List<String> problems = new ArrayList<>();
        for (Sent s : sent) {
            MessageExt m;
            try {
                m = producer.getDefaultMQProducerImpl().viewMessage(topic, s.offsetMsgId);
            } catch (Exception e) {
                problems.add("viewMessage(" + s.offsetMsgId + ") of " + s + " failed: " + e);
                continue;
            }
            if (m == null) {
                problems.add("viewMessage(" + s.offsetMsgId + ") of " + s + " returned null");
                continue;
            }
            String p = mismatch(s, m);
            if (p != null) {
                problems.add("viewMessage(" + s.offsetMsgId + ") of " + s + ": " + p);
            }
        }
        List<WireLog.Exchange> views = wire.of(VIEW_MESSAGE_BY_ID);
        assertTrue(problems.isEmpty(), problems.size() + " of " + sent.size() + " look-ups wrong (body seed " + seed + "):\n"
            + String.join("\n", problems) + "\n" + diag());
        assertEquals(sent.size(), views.stream().filter(e -> e.responseCode() == SUCCESS).count(),
            "VIEW_MESSAGE_BY_ID SUCCESS replies\n" + diag());
    }

    private Sent add(Random rnd, String label, int size) {
        byte[] body = new byte[size];
        rnd.nextBytes(body);
        Sent s = new Sent(sent.size(), label, body);
        sent.add(s);
        return s;
    }

    /** One send(Collection): one SEND_BATCH_MESSAGE, one queue, comma-joined msgIds and offsetMsgIds. */
    private void sendBatch(List<Sent> specs) throws Exception {
        List<Message> msgs = new ArrayList<>();
        specs.forEach(s -> msgs.add(s.toMessage(topic)));
        SendResult r = producer.send(msgs);
        String what = "batch " + specs.get(0).label + ".." + specs.get(specs.size() - 1).label;
        assertEquals(SendStatus.SEND_OK, r.getSendStatus(), what + ": " + r + "\n" + diag());
        String[] ids = r.getMsgId().split(",");
        String[] offIds = r.getOffsetMsgId() == null ? new String[0] : r.getOffsetMsgId().split(",");
        assertEquals(specs.size(), ids.length, what + ": msgIds " + r.getMsgId());
        assertEquals(specs.size(), offIds.length, what + ": offsetMsgIds " + r.getOffsetMsgId() + "\n" + diag());
        for (int i = 0; i < specs.size(); i++) {
            Sent s = specs.get(i);
            s.msgId = ids[i];
            s.offsetMsgId = offIds[i];
            s.queueId = r.getMessageQueue().getQueueId();
            s.queueOffset = r.getQueueOffset() + i;
            assertEquals(msgs.get(i).getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX), s.msgId,
                "msgId of " + s);
        }
    }

    /** Waits (bounded) until {@code got} holds every sent index; on timeout names the missing ones. */
    private void awaitAll(String who, Received got) throws InterruptedException {
        Received.await(who + " to receive all " + sent.size() + " messages", MAX_WAIT,
            () -> got.distinct() == sent.size(),
            () -> "missing: " + sent.stream().filter(s -> got.of(s.idx).isEmpty()).map(Sent::toString).toList() + "\n" + diag());
    }

    /** Every delivery of every message matches what was sent; nothing unsent arrived. */
    private void checkDeliveries(String who, Received got) {
        List<String> problems = new ArrayList<>();
        for (Sent s : sent) {
            for (Received.Delivery d : got.of(s.idx)) {
                String p = mismatch(s, d.msg());
                if (p != null) {
                    problems.add(who + " got " + s + ": " + p);
                }
            }
        }
        got.foreign.forEach(m -> problems.add(who + " got a message that was never sent: " + Spec.describe(m)));
        assertTrue(problems.isEmpty(), problems.size() + " wrong deliveries (body seed " + seed + "):\n"
            + String.join("\n", problems) + "\n" + diag());
    }

    /** What differs between the sent message and {@code m} (body by SHA-256 and length), or null when nothing does. */
    private String mismatch(Sent s, MessageExt m) {
        List<String> out = new ArrayList<>();
        byte[] b = m.getBody();
        if (b == null) {
            out.add("no body");
        } else {
            String sha = sha256(b);
            if (b.length != s.body.length || !sha.equals(s.sha256)) {
                out.add("body " + b.length + " B sha256 " + sha + ", sent " + s.body.length + " B sha256 " + s.sha256
                    + (b.length == s.body.length && Arrays.equals(b, s.body) ? " (bytes equal: the expected checksum is wrong)"
                        : ", first difference at byte " + Arrays.mismatch(b, s.body)));
            }
        }
        if (!topic.equals(m.getTopic())) {
            out.add("topic " + m.getTopic());
        }
        if (!s.label.equals(m.getUserProperty("label"))) {
            out.add("label property " + m.getUserProperty("label"));
        }
        if ((m.getSysFlag() & MessageSysFlag.COMPRESSED_FLAG) != 0) {
            out.add("sysFlag " + m.getSysFlag() + " says compressed");
        }
        if (!s.msgId.equals(m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX))) {
            out.add("UNIQ_KEY " + m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
        }
        if (m instanceof MessageClientExt c && !s.offsetMsgId.equals(c.getOffsetMsgId())) {
            out.add("offsetMsgId " + c.getOffsetMsgId());
        }
        if (m.getQueueId() != s.queueId || m.getQueueOffset() != s.queueOffset) {
            out.add("queue " + m.getQueueId() + " offset " + m.getQueueOffset());
        }
        return out.isEmpty() ? null : String.join("; ", out);
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            fail("no SHA-256: " + e);
            return null;
        }
    }
}
