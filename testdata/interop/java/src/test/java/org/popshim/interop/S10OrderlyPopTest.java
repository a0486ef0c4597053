package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.AckStatus;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/**
 * Scenario 9: orderly (FIFO) POP with the Java client's own POP API (MQClientAPIImpl.popMessageAsync with
 * order=true and an attemptId, ackMessageAsync, changeInvisibleTimeAsync, batchAckMessageAsync): 8 sharding
 * keys x 500 messages, each key on one queue (a selector by key), consumed by 3 consumers of one group, each
 * on its own connection. A consumer handles a batch in order; at a few chosen messages it suspends the queue
 * a moment (SUSPEND_CURRENT_QUEUE_A_MOMENT: CHANGE of the rest of that queue's batch to 1 s, no ACK), and
 * the batch comes back in order with reconsumeTimes counted from orderCountInfo. Per key, every message is
 * handled exactly once and strictly in send order; none is lost.
 *
 * Why not DefaultMQPushConsumer with MessageListenerOrderly: in POP mode the 5.5.0 push consumer pops with
 * order=false and its ConsumeMessagePopOrderlyService.ConsumeRequest.run() never calls the listener (an
 * upstream "POPTODO"), so it consumes nothing against any broker. This test drives the same remoting calls
 * the v5 proxy makes for FIFO consumer groups.
 */
class S10OrderlyPopTest extends InteropBase {
    static final int KEYS = 8;
    static final int PER_KEY = 500;
    static final int BATCH = 50;
    static final int CONSUMERS = 3;
    static final long INVISIBLE_MS = 10_000;
    static final long SUSPEND_MS = 1_000;

    /** The message of each key at which a consumer suspends the queue once. */
    static boolean suspendAt(int key, int idx) {
        return idx == 100 + 37 * key;
    }

    @Test
    void orderlyPopPerKeyInSendOrder() throws Exception {
        String topic = unique("s9");
        String group = unique("s9_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s9_pg"), wire));
        p.createTopic("TBW102", topic, 4, Map.of());
        List<MessageQueue> queues = new ArrayList<>();
        Received.await("route of " + topic, Duration.ofSeconds(30), () -> {
            try {
                queues.clear();
                queues.addAll(p.fetchPublishMessageQueues(topic));
                return queues.size() == 4;
            } catch (Exception e) {
                return false;
            }
        }, this::diag);
        queues.sort((a, b) -> Integer.compare(a.getQueueId(), b.getQueueId()));
        for (int from = 0; from < PER_KEY; from += BATCH) {
            for (int k = 0; k < KEYS; k++) {
                List<Message> batch = new ArrayList<>();
                for (int i = from; i < from + BATCH; i++) {
                    Message m = new Message(topic, "TagA", "sk" + k, ("s9 " + k + " " + i).getBytes(StandardCharsets.UTF_8));
                    m.putUserProperty("sk", Integer.toString(k));
                    m.putUserProperty("i", Integer.toString(i));
                    batch.add(m);
                }
                SendResult r = p.send(batch, queues.get(k % queues.size()));
                assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "batch send of key " + k);
            }
        }

        int[] next = new int[KEYS];
        List<String> violations = new CopyOnWriteArrayList<>();
        Set<String> suspended = ConcurrentHashMap.newKeySet();
        Map<String, Integer> redeliveredTimes = new ConcurrentHashMap<>();
        AtomicInteger handled = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < CONSUMERS; c++) {
            final boolean batchAck = c == 0;
            DirectApi api = DirectApi.connect(shim, topic, wire);
            Thread t = new Thread(() -> {
                String attempt = UUID.randomUUID().toString();
                try (api) {
                    while (!stop.get()) {
                        PopResult r;
                        try {
                            r = api.pop(group, topic, 32, INVISIBLE_MS, 2_000, "*", true, attempt);
                        } catch (Exception e) {
                            continue; // a lost reply: retry with the same attemptId
                        }
                        if (r.getPopStatus() != PopStatus.FOUND || r.getMsgFoundList() == null || r.getMsgFoundList().isEmpty()) {
                            continue;
                        }
                        attempt = UUID.randomUUID().toString();
                        List<String> ackHandles = new ArrayList<>();
                        Set<Integer> suspendedQueues = new java.util.HashSet<>();
                        for (MessageExt m : r.getMsgFoundList()) {
                            String handle = m.getProperty(MessageConst.PROPERTY_POP_CK);
                            if (suspendedQueues.contains(m.getQueueId())) {
                                // the rest of a suspended queue's batch waits a moment too
                                assertEquals(AckStatus.OK, api.change(group, topic, handle, SUSPEND_MS).getStatus(), "CHANGE");
                                continue;
                            }
                            int k = Integer.parseInt(m.getUserProperty("sk"));
                            int i = Integer.parseInt(m.getUserProperty("i"));
                            String id = k + "/" + i;
                            if (suspendAt(k, i) && suspended.add(id)) {
                                suspendedQueues.add(m.getQueueId());
                                assertEquals(AckStatus.OK, api.change(group, topic, handle, SUSPEND_MS).getStatus(), "CHANGE");
                                continue;
                            }
                            synchronized (next) {
                                if (next[k] != i) {
                                    violations.add("key " + k + ": got " + i + ", expected " + next[k]);
                                }
                                next[k] = i + 1;
                            }
                            if (suspended.contains(id)) {
                                redeliveredTimes.put(id, m.getReconsumeTimes());
                            }
                            ackHandles.add(handle);
                        }
                        if (batchAck && !ackHandles.isEmpty()) {
                            assertEquals(AckStatus.OK, api.batchAck(group, topic, ackHandles).getStatus(), "BATCH_ACK");
                        } else {
                            for (String h : ackHandles) {
                                assertEquals(AckStatus.OK, api.ack(group, topic, h).getStatus(), "ACK");
                            }
                        }
                        handled.addAndGet(ackHandles.size());
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "s9-consumer-" + c);
            threads.add(t);
            t.start();
        }
        try {
            Received.await("every message handled once", Duration.ofSeconds(60),
                () -> handled.get() >= KEYS * PER_KEY || !errors.isEmpty(),
                () -> "handled=" + handled.get() + " next=" + java.util.Arrays.toString(next) + "\n" + diag());
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(30_000);
            }
        }
        assertTrue(errors.isEmpty(), "consumer errors: " + errors + "\n" + diag());
        assertTrue(violations.isEmpty(), "out of order: " + violations);
        for (int k = 0; k < KEYS; k++) {
            assertEquals(PER_KEY, next[k], "messages of key " + k + " handled");
        }
        assertEquals(KEYS * PER_KEY, handled.get(), "each message handled exactly once");
        assertEquals(KEYS, suspended.size(), "suspensions");
        for (String id : suspended) {
            Integer times = redeliveredTimes.get(id);
            assertTrue(times != null && times >= 1, "suspended " + id + " came back with reconsumeTimes " + times);
        }
        for (WireLog.Exchange e : wire.of(POP_MESSAGE)) {
            if (e.responseCode() == SUCCESS) {
                assertEquals("999", e.resp("reviveQid"), "orderly POP reply reviveQid: " + e);
            }
        }
    }
}
