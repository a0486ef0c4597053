package org.popshim.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * Every delivery a push consumer's listener saw, keyed by the message index ({@link Spec#indexOf}), plus
 * the POP_CK handle of each delivery so ACK/CHANGE exchanges in a {@link WireLog} can be tied back to
 * a message.
 */
final class Received {
    /** One listener call for one message. */
    record Delivery(MessageExt msg, int reconsumeTimes, String handle, ConsumeConcurrentlyStatus answer) {
    }

    final Map<Integer, List<Delivery>> byIdx = new ConcurrentHashMap<>();
    final Map<String, Integer> idxByHandle = new ConcurrentHashMap<>();
    final List<MessageExt> foreign = new CopyOnWriteArrayList<>();
    final AtomicInteger total = new AtomicInteger();
    /** ClientConfig.useTLS of the consumer {@link #start} makes (the per-client -Dtls.enable=true). */
    boolean useTLS;

    /**
     * A started POP push consumer (clientRebalance=false, concurrent listener, CLUSTERING, from the first
     * offset) that records every message and answers with {@code answer}.
     */
    DefaultMQPushConsumer start(Popshim shim, String group, String topic, String subExpression,
                                long invisibleMillis, RPCHook hook,
                                Function<MessageExt, ConsumeConcurrentlyStatus> answer) throws Exception {
        return start(shim, group, topic, MessageSelector.byTag(subExpression), invisibleMillis, hook, answer);
    }

    /** As {@link #start(Popshim, String, String, String, long, RPCHook, Function)} with any selector (TAG or SQL92). */
    DefaultMQPushConsumer start(Popshim shim, String group, String topic, MessageSelector selector,
                                long invisibleMillis, RPCHook hook,
                                Function<MessageExt, ConsumeConcurrentlyStatus> answer) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, hook);
        c.setNamesrvAddr(shim.namesrvAddr());
        c.setInstanceName(group + "-" + System.nanoTime());
        c.setUseTLS(useTLS);
        c.setClientRebalance(false);
        c.setPopInvisibleTime(invisibleMillis);
        c.setPopBatchNums(32);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setConsumeThreadMin(4);
        c.setConsumeThreadMax(4);
        c.setAwaitTerminationMillisWhenShutdown(5_000);
        c.subscribe(topic, selector);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            ConsumeConcurrentlyStatus status = ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            for (MessageExt m : msgs) {
                ConsumeConcurrentlyStatus s = answer.apply(m);
                record(m, s);
                if (s != ConsumeConcurrentlyStatus.CONSUME_SUCCESS) {
                    status = s;
                }
            }
            return status;
        });
        c.start();
        return c;
    }

    void record(MessageExt m, ConsumeConcurrentlyStatus answer) {
        int idx = Spec.indexOf(m);
        if (idx < 0) {
            foreign.add(m);
            return;
        }
        String handle = m.getProperty(MessageConst.PROPERTY_POP_CK);
        if (handle != null) {
            idxByHandle.put(handle, idx);
        }
        byIdx.computeIfAbsent(idx, k -> new CopyOnWriteArrayList<>())
            .add(new Delivery(m, m.getReconsumeTimes(), handle, answer));
        total.incrementAndGet();
    }

    /** Number of distinct indexes seen. */
    int distinct() {
        return byIdx.size();
    }

    /** Deliveries of one index, possibly empty. */
    List<Delivery> of(int idx) {
        return byIdx.getOrDefault(idx, List.of());
    }

    /** Indexes delivered more than once, with their reconsumeTimes in delivery order. */
    Map<Integer, List<Integer>> duplicates() {
        Map<Integer, List<Integer>> out = new TreeMap<>();
        byIdx.forEach((idx, ds) -> {
            if (ds.size() > 1) {
                List<Integer> times = new ArrayList<>();
                ds.forEach(d -> times.add(d.reconsumeTimes()));
                out.put(idx, times);
            }
        });
        return out;
    }

    /**
     * Polls {@code cond} every 100 ms until it holds, or fails after {@code max} with {@code what} and the
     * diagnostics from {@code diag}. The bound only turns a hang into a failure; no assertion depends on
     * how quickly the condition became true.
     */
    static void await(String what, Duration max, BooleanSupplier cond, Supplier<String> diag) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + max + " waiting for " + what + "\n" + diag.get());
            }
            Thread.sleep(100);
        }
    }
}
