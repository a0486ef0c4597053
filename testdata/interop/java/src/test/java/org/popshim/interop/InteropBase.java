package org.popshim.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Gives each scenario class its own popshim process (fresh data directory, free ports) and a
 * {@link WireLog} that every client of the class reports to. Clients registered with {@link #track} are
 * shut down before popshim is stopped.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class InteropBase {
    /** RocketMQ request codes (RequestCode.java). */
    static final int SEND_MESSAGE = 10;
    static final int PULL_MESSAGE = 11;
    static final int SEND_MESSAGE_V2 = 310;
    static final int SEND_BATCH_MESSAGE = 320;
    static final int QUERY_ASSIGNMENT = 400;
    static final int POP_MESSAGE = 200050;
    static final int ACK_MESSAGE = 200051;
    static final int CHANGE_MESSAGE_INVISIBLETIME = 200053;
    static final int BATCH_ACK_MESSAGE = 200151;
    /** RocketMQ response code SUCCESS (ResponseCode.java). */
    static final int SUCCESS = 0;

    /** How long after an invisible time ends a revived message may take to show up (revive scan slack). */
    static final long REVIVE_SLACK_MS = Long.getLong("interop.reviveSlackMs", 5_000);

    protected Popshim shim;
    protected final WireLog wire = new WireLog();
    private final List<Runnable> shutdowns = new ArrayList<>();

    @BeforeAll
    void startPopshim() throws Exception {
        shim = Popshim.start(getClass().getSimpleName(), popshimArgs());
    }

    /** Extra {@code popshim serve} flags of this class's popshim; none by default. */
    protected List<String> popshimArgs() throws Exception {
        return List.of();
    }

    @AfterAll
    void stopPopshim() {
        // request code -> {response code -> count}, in the class's surefire output, for reading a green run too
        System.out.println(getClass().getSimpleName() + " wire: " + wire.summary());
        for (int i = shutdowns.size() - 1; i >= 0; i--) {
            try {
                shutdowns.get(i).run();
            } catch (RuntimeException ignored) {
                // shutting a client down must not hide the test's own failure
            }
        }
        shutdowns.clear();
        if (shim != null) {
            shim.close();
        }
    }

    /** A name unique to this run: prefix plus random digits (letters, digits and '_' only). */
    static String unique(String prefix) {
        return prefix + "_" + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36);
    }

    DefaultMQProducer track(DefaultMQProducer p) {
        shutdowns.add(p::shutdown);
        return p;
    }

    DefaultMQPushConsumer track(DefaultMQPushConsumer c) {
        shutdowns.add(c::shutdown);
        return c;
    }

    /**
     * A push consumer in PULL mode (client-side rebalance) of {@code group} on {@code topic}, from the first
     * offset, recording every message into {@code got} as consumed; started when {@code start} (false
     * leaves starting, and its CHECK_CLIENT_CONFIG, to the caller). The caller tracks it.
     */
    DefaultMQPushConsumer pullConsumer(String group, String topic, MessageSelector sel, Received got, boolean start) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, wire);
        c.setNamesrvAddr(shim.namesrvAddr());
        c.setInstanceName(group + "-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setConsumeThreadMin(4);
        c.setConsumeThreadMax(4);
        c.setPullBatchSize(32);
        c.setAwaitTerminationMillisWhenShutdown(5_000);
        c.subscribe(topic, sel);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.record(m, ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        if (start) {
            c.start();
        }
        return c;
    }

    /** Text appended to failure messages: what went over the wire, and the end of popshim's log. */
    String diag() {
        return "wire (code={responseCode=count}): " + wire.summary() + "\npopshim log tail:\n" + shim.logTail();
    }
}
