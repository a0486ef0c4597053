package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scenario 12: transactional messages from the Java remoting {@link TransactionMQProducer}. The local
 * transaction commits, rolls back, or answers UNKNOW and leaves the decision to the broker's check
 * (CHECK_TRANSACTION_STATE), which then commits or rolls back; and a check of a half whose producer shut
 * down (after it answered UNKNOW to one) reaches a second producer instance of the same group; while
 * undecided, the half is found by viewMessage (VIEW_MESSAGE_BY_ID) as a Java broker's commit log has it. A POP push consumer of the topic sees every
 * committed message exactly once with its content and msgId, and no rolled-back one: popshim's
 * rocketmq_half_messages gauge reaching 0 and its rollback counter say when every decision is applied.
 * popshim runs with a 1 s transaction timeout and check interval so checks come quickly.
 */
class S12TransactionTest extends InteropBase {
    @Override
    protected List<String> popshimArgs() {
        return List.of("--transaction-timeout", "1s", "--transaction-check-interval", "500ms",
            "--transaction-check-max", "100");
    }

    private String topic;
    private final Received got = new Received();
    /** Local transaction answer and check answer per spec index. */
    private final Map<Integer, LocalTransactionState> local = new ConcurrentHashMap<>();
    private final Map<Integer, LocalTransactionState> onCheck = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> checks = new ConcurrentHashMap<>();
    /** The msgId of the last check's message per index: the half's offsetMsgId (MessageDecoder.decode). */
    private final Map<Integer, String> checkedIds = new ConcurrentHashMap<>();

    @BeforeAll
    void consume() throws Exception {
        topic = unique("s12");
        // A warm-up message through a plain producer creates the topic and proves the consumer is live.
        var plain = track(Sending.producer(shim, unique("s12_plain"), wire));
        Spec warm = Spec.make(topic, 0, "TagA");
        warm.uniqKey = plain.send(warm.toMessage()).getMsgId();
        track(got.start(shim, unique("s12_cg"), topic, "*", 30_000, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));
        Received.await("the warm-up message", Duration.ofSeconds(60), () -> got.of(0).size() > 0, this::diag);
    }

    /** A started TransactionMQProducer of group whose listener answers from {@link #local} and {@link #onCheck}. */
    private TransactionMQProducer producer(String group) throws Exception {
        TransactionMQProducer p = new TransactionMQProducer(group, wire);
        p.setNamesrvAddr(shim.namesrvAddr());
        p.setInstanceName(group + "-" + System.nanoTime());
        p.setSendMsgTimeout(10_000);
        p.setHeartbeatBrokerInterval(1_000);
        p.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return local.get((Integer) arg);
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                int idx = Spec.indexOf(msg);
                checkedIds.put(idx, msg.getMsgId());
                checks.computeIfAbsent(idx, k -> new AtomicInteger()).incrementAndGet();
                return onCheck.getOrDefault(idx, LocalTransactionState.UNKNOW);
            }
        });
        p.start();
        return p;
    }

    /** Sends spec i in a transaction whose local answer is {@code state}; checks the SEND result. */
    private Spec send(TransactionMQProducer p, int i, LocalTransactionState state) throws Exception {
        Spec s = Spec.make(topic, i, "TagT");
        local.put(i, state);
        TransactionSendResult r = p.sendMessageInTransaction(s.toMessage(), i);
        assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "half SEND of " + i + ": " + diag());
        assertEquals(state, r.getLocalTransactionState(), "local state of " + i);
        assertNotNull(r.getTransactionId(), "transactionId of " + i);
        assertEquals(r.getMsgId(), r.getTransactionId(), "transactionId is the UNIQ_KEY");
        s.uniqKey = r.getMsgId();
        return s;
    }

    /** Waits until popshim holds no half and has applied at least {@code rollbacks} rollbacks in total. */
    private void awaitSettled(int rollbacks) throws Exception {
        Received.await("every half decided", Duration.ofSeconds(60), () -> {
            try {
                return shim.metric("rocketmq_half_messages") == 0
                    && shim.metric("rocketmq_rollback_messages_total") >= rollbacks;
            } catch (Exception e) {
                return false;
            }
        }, this::diag);
    }

    private void assertDeliveredOnce(Spec s) throws Exception {
        Received.await("committed message " + s.idx, Duration.ofSeconds(60), () -> got.of(s.idx).size() > 0, this::diag);
        List<Received.Delivery> ds = got.of(s.idx);
        assertEquals(1, ds.size(), "deliveries of " + s.idx);
        s.assertMatches(ds.get(0).msg());
    }

    private void assertNever(int idx, Function<Integer, String> why) {
        assertTrue(got.of(idx).isEmpty(), why.apply(idx) + ": " + got.of(idx));
    }

    @Test
    void commitRollbackAndCheckBack() throws Exception {
        TransactionMQProducer p = producer(unique("s12_pg"));
        track(p);
        Spec committed = send(p, 1, LocalTransactionState.COMMIT_MESSAGE);
        send(p, 2, LocalTransactionState.ROLLBACK_MESSAGE);
        onCheck.put(3, LocalTransactionState.COMMIT_MESSAGE);
        Spec checkedCommit = send(p, 3, LocalTransactionState.UNKNOW);
        onCheck.put(4, LocalTransactionState.ROLLBACK_MESSAGE);
        send(p, 4, LocalTransactionState.UNKNOW);

        assertDeliveredOnce(committed);
        assertDeliveredOnce(checkedCommit);
        awaitSettled(2);
        assertTrue(checks.get(3).get() >= 1 && checks.get(4).get() >= 1, "checks: " + checks);
        assertEquals(null, checks.get(1), "a committed half was checked");
        assertEquals(null, checks.get(2), "a rolled-back half was checked");
        // A late message after every decision: once it arrives, nothing older is in flight.
        Spec late = send(p, 5, LocalTransactionState.COMMIT_MESSAGE);
        assertDeliveredOnce(late);
        assertNever(2, i -> "rolled back message " + i + " delivered");
        assertNever(4, i -> "message " + i + " rolled back on check delivered");
        assertEquals(1, got.of(1).size(), "committed message delivered again");
    }

    @Test
    void checkReachesSecondProducerOfTheGroup() throws Exception {
        String group = unique("s12_pg2");
        TransactionMQProducer first = producer(group);
        onCheck.put(10, LocalTransactionState.UNKNOW);
        Spec orphan = send(first, 10, LocalTransactionState.UNKNOW);
        // The first instance is checked and does not know yet.
        Received.await("a check of the first producer", Duration.ofSeconds(60), () -> checks.containsKey(10), this::diag);
        // viewMessage (VIEW_MESSAGE_BY_ID, what mqadmin queryMsgById sends) finds the undecided half by its
        // offsetMsgId (the checked message's msgId), as Java's commit log holds it.
        MessageExt half = first.getDefaultMQProducerImpl().viewMessage(topic, checkedIds.get(10));
        assertEquals("RMQ_SYS_TRANS_HALF_TOPIC", half.getTopic(), "viewed half: " + half);
        assertEquals(topic, half.getProperty("REAL_TOPIC"), "viewed half: " + half);
        assertEquals(orphan.uniqKey, half.getProperty("UNIQ_KEY"), "viewed half: " + half);
        first.shutdown();
        int checkedByFirst = checks.getOrDefault(10, new AtomicInteger()).get();
        onCheck.put(10, LocalTransactionState.COMMIT_MESSAGE);
        TransactionMQProducer second = producer(group);
        track(second);
        // The second instance learns the broker's address from a route look-up, then heartbeats to it.
        var factory = second.getDefaultMQProducerImpl().getMqClientFactory();
        assertTrue(factory.updateTopicRouteInfoFromNameServer(topic), "route of " + topic);
        factory.sendHeartbeatToAllBrokerWithLock();
        assertDeliveredOnce(orphan);
        assertTrue(checks.get(10).get() > checkedByFirst, "the second producer was never checked");
        awaitSettled(0);
    }
}
