package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.AckCallback;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.AckStatus;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil;
import org.junit.jupiter.api.Test;

/**
 * Scenario 5: the client's raw API (MQClientAPIImpl popMessageAsync, ackMessageAsync,
 * changeInvisibleTimeAsync, batchAckMessageAsync) against popshim's broker address. Checks the status
 * each call maps popshim's reply to, the handle fields the client builds from the POP reply, and that the
 * handle a CHANGE returns is the one that acks the message.
 */
class S5DirectApiTest extends InteropBase {
    static final int N = 20;
    static final long INVISIBLE_MS = 10_000;
    static final long CHANGED_MS = 15_000;

    @Test
    void rawPopAckChangeAndBatchAck() throws Exception {
        String topic = unique("s5");
        String group = unique("s5_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s5_pg"), wire));
        List<Spec> specs = Spec.generate(topic, N);
        Sending.sendAllSync(p, specs);

        try (DirectApi api = DirectApi.connect(shim, topic, wire)) {
            assertEquals(shim.brokerAddr(), api.brokerAddr, "route's master address is popshim's broker port");

            // POP: every message once, with handles the client built from popshim's reply header.
            Map<Integer, MessageExt> popped = new HashMap<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (popped.size() < N) {
                assertTrue(System.nanoTime() < deadline, "popped only " + popped.size() + " of " + N + "\n" + diag());
                long t0 = System.currentTimeMillis();
                PopResult r = api.pop(group, topic, 32, INVISIBLE_MS, 2_000, "*");
                long t1 = System.currentTimeMillis();
                if (r.getPopStatus() != PopStatus.FOUND) {
                    continue;
                }
                assertTrue(r.getPopTime() >= t0 - 5 && r.getPopTime() <= t1 + 5,
                    "popTime " + r.getPopTime() + " is not the broker's clock at the pop [" + t0 + ", " + t1 + "]");
                assertEquals(INVISIBLE_MS, r.getInvisibleTime(), "granted invisibleTime");
                for (MessageExt m : r.getMsgFoundList()) {
                    checkHandle(m, api.brokerName, r.getPopTime(), INVISIBLE_MS);
                    assertTrue(popped.put(Spec.indexOf(m), m) == null, "popped twice while invisible: " + Spec.describe(m));
                    specs.get(Spec.indexOf(m)).assertMatches(m);
                }
            }

            // Everything is invisible now: a pop long-polls and reports POLLING_NOT_FOUND.
            PopResult empty = api.pop(group, topic, 32, INVISIBLE_MS, 1_000, "*");
            assertEquals(PopStatus.POLLING_NOT_FOUND, empty.getPopStatus(), "pop with everything in flight");

            MessageExt a = popped.get(0);
            MessageExt b = popped.get(1);
            MessageExt c = popped.get(2);
            MessageExt d = popped.get(3);

            // A: CHANGE, then ACK with the handle the CHANGE returned.
            String ha = handle(a);
            AckResult ra = api.change(group, topic, ha, CHANGED_MS);
            assertEquals(AckStatus.OK, ra.getStatus(), "CHANGE of A\n" + diag());
            checkChangedHandle(ra, a, ha, CHANGED_MS);
            WireLog.Exchange ce = last(CHANGE_MESSAGE_INVISIBLETIME);
            assertNotNull(ce.resp("popTime"), "CHANGE reply header popTime: " + ce);
            assertEquals(Long.toString(CHANGED_MS), ce.resp("invisibleTime"), "CHANGE reply header invisibleTime: " + ce);
            assertNotNull(ce.resp("reviveQid"), "CHANGE reply header reviveQid: " + ce);
            assertEquals(AckStatus.OK, api.ack(group, topic, ra.getExtraInfo()).getStatus(), "ACK of A with the new handle");

            // D: three chained CHANGEs, each using the handle returned by the previous one, then ACK.
            String hd = handle(d);
            for (long inv : new long[] {CHANGED_MS - 3_000, CHANGED_MS - 1_000, CHANGED_MS}) {
                AckResult rd = api.change(group, topic, hd, inv);
                assertEquals(AckStatus.OK, rd.getStatus(), "chained CHANGE of D to " + inv + " ms\n" + diag());
                checkChangedHandle(rd, d, hd, inv);
                hd = rd.getExtraInfo();
            }
            // A CHANGE of D's first, now stale handle: no lease behind it, so no new handle (NO_EXIST).
            AckResult stale = api.change(group, topic, handle(d), CHANGED_MS);
            assertEquals(AckStatus.NO_EXIST, stale.getStatus(), "CHANGE of a stale handle\n" + diag());
            assertNull(stale.getExtraInfo(), "a refused CHANGE must not hand out a handle");
            long changedAt = System.currentTimeMillis();
            assertEquals(AckStatus.OK, api.ack(group, topic, hd).getStatus(), "ACK of D with the last chained handle");

            // B: ACK with the original handle. The rest (not C): one BATCH_ACK.
            assertEquals(AckStatus.OK, api.ack(group, topic, handle(b)).getStatus(), "ACK of B");
            List<String> rest = new ArrayList<>();
            for (int i = 4; i < N; i++) {
                rest.add(handle(popped.get(i)));
            }
            AckResult rb = api.batchAck(group, topic, rest);
            assertEquals(AckStatus.OK, rb.getStatus(), "BATCH_ACK of " + rest.size() + " handles\n" + diag());
            assertEquals(SUCCESS, last(BATCH_ACK_MESSAGE).responseCode());

            // A malformed handle gets a definite non-success answer, and the connection keeps working.
            AckResult bad = rawAck(api, group, topic, "not a handle");
            assertEquals(AckStatus.NO_EXIST, bad.getStatus(), "ACK with a malformed extraInfo");
            assertNotEquals(SUCCESS, last(ACK_MESSAGE).responseCode(), "malformed ACK reply code");

            // After the original invisible time only C (never acked) comes back, with reconsumeTimes 1.
            MessageExt back = null;
            deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(INVISIBLE_MS + REVIVE_SLACK_MS + 30_000);
            while (back == null) {
                assertTrue(System.nanoTime() < deadline, "C never came back after its invisible time\n" + diag());
                PopResult r = api.pop(group, topic, 32, 30_000, 3_000, "*");
                if (r.getPopStatus() != PopStatus.FOUND) {
                    continue;
                }
                for (MessageExt m : r.getMsgFoundList()) {
                    assertEquals(2, Spec.indexOf(m), "only C was left unacked, but got idx " + Spec.indexOf(m) + ": " + Spec.describe(m));
                    back = m;
                }
            }
            assertEquals(1, back.getReconsumeTimes(), "revived C reconsumeTimes");
            assertEquals(c.getMsgId(), back.getMsgId(), "revived C keeps its msgId");
            specs.get(2).assertMatches(back);
            String hc = handle(back);
            assertNotEquals("0", ExtraInfoUtil.getRetry(ExtraInfoUtil.split(hc)), "revived C comes from a retry topic: " + hc);
            assertEquals(AckStatus.OK, api.ack(group, topic, hc).getStatus(), "ACK of revived C\n" + diag());

            // Past the changed invisible time of A and D: nothing is left to pop.
            long wait = changedAt + CHANGED_MS + REVIVE_SLACK_MS - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            PopResult after = api.pop(group, topic, 32, INVISIBLE_MS, 3_000, "*");
            assertEquals(PopStatus.POLLING_NOT_FOUND, after.getPopStatus(),
                "everything was acked, yet popped: " + after.getMsgFoundList() + "\n" + diag());
        }
    }

    /** Asserts the 8-field handle the client built for a freshly popped message. */
    private static void checkHandle(MessageExt m, String brokerName, long popTime, long invisible) {
        String h = handle(m);
        String[] f = ExtraInfoUtil.split(h);
        assertEquals(8, f.length, "handle fields: " + h);
        assertTrue(ExtraInfoUtil.getCkQueueOffset(f) <= m.getQueueOffset(), "ckQueueOffset above msg offset: " + h);
        assertEquals(popTime, ExtraInfoUtil.getPopTime(f), "handle popTime: " + h);
        assertEquals(invisible, ExtraInfoUtil.getInvisibleTime(f), "handle invisibleTime: " + h);
        assertEquals("0", ExtraInfoUtil.getRetry(f), "retry flag of a first pop: " + h);
        assertEquals(brokerName, ExtraInfoUtil.getBrokerName(f), "handle brokerName: " + h);
        assertEquals(m.getQueueId(), ExtraInfoUtil.getQueueId(f), "handle queueId: " + h);
        assertEquals(m.getQueueOffset(), ExtraInfoUtil.getQueueOffset(f), "handle msg offset: " + h);
    }

    /** Asserts the handle the client built from a CHANGE reply: same message, new popTime/invisibleTime. */
    private static void checkChangedHandle(AckResult r, MessageExt m, String old, long invisible) {
        String h = r.getExtraInfo();
        assertNotNull(h, "CHANGE result without a new handle");
        String[] f = ExtraInfoUtil.split(h);
        String[] o = ExtraInfoUtil.split(old);
        assertEquals(8, f.length, "new handle fields: " + h);
        assertEquals(m.getQueueOffset(), ExtraInfoUtil.getCkQueueOffset(f), "new handle ck offset is the msg offset: " + h);
        assertTrue(ExtraInfoUtil.getPopTime(f) >= ExtraInfoUtil.getPopTime(o), "new popTime before the old: " + h + " / " + old);
        assertEquals(invisible, ExtraInfoUtil.getInvisibleTime(f), "new handle invisibleTime: " + h);
        assertEquals(ExtraInfoUtil.getQueueId(o), ExtraInfoUtil.getQueueId(f), "queueId kept: " + h);
        assertEquals(ExtraInfoUtil.getQueueOffset(o), ExtraInfoUtil.getQueueOffset(f), "offset kept: " + h);
        assertEquals(ExtraInfoUtil.getBrokerName(o), ExtraInfoUtil.getBrokerName(f), "brokerName kept: " + h);
    }

    private AckResult rawAck(DirectApi api, String group, String topic, String extraInfo) throws Exception {
        AckMessageRequestHeader h = new AckMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(topic);
        h.setQueueId(0);
        h.setOffset(0L);
        h.setExtraInfo(extraInfo);
        CompletableFuture<AckResult> out = new CompletableFuture<>();
        api.api.ackMessageAsync(api.brokerAddr, 10_000, new AckCallback() {
            @Override
            public void onSuccess(AckResult r) {
                out.complete(r);
            }

            @Override
            public void onException(Throwable e) {
                out.completeExceptionally(e);
            }
        }, h);
        return out.get(20, TimeUnit.SECONDS);
    }

    private WireLog.Exchange last(int code) {
        List<WireLog.Exchange> xs = wire.of(code);
        assertFalse(xs.isEmpty(), "no exchange with code " + code + "\n" + diag());
        return xs.get(xs.size() - 1);
    }

    private static String handle(MessageExt m) {
        String h = m.getProperty(MessageConst.PROPERTY_POP_CK);
        assertNotNull(h, "no POP_CK on " + Spec.describe(m));
        return h;
    }
}
