package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/**
 * Scenario 11, the client half: SQL92 subscriptions ({@code MessageSelector.bySql}) of the Java client
 * 5.5.0 against popshim. Messages carry tags TagA, TagB, TagC or none and the user properties idx, color
 * and note (non-ASCII) of {@link Spec}. A POP push consumer (clientRebalance=false) and a PULL push
 * consumer (clientRebalance=true, so its PULLs carry no subscription and popshim filters by the one its
 * HEART_BEAT registered) each receive exactly the messages their selector matches; no POP or PULL reply
 * carried any other (the client does not filter SQL92 itself, so this is popshim's filtering). Both
 * consumers passed CHECK_CLIENT_CONFIG at start; a selector that does not compile makes start() fail with
 * SUBSCRIPTION_PARSE_FAILED, and a popshim started with --enable-property-filter=false refuses SQL92
 * with SYSTEM_ERROR and the Java broker's remark.
 */
class S11SqlFilterTest extends InteropBase {
    static final int N = 240;
    static final int CHECK_CLIENT_CONFIG = 46;
    static final List<String> TAGS = java.util.Arrays.asList("TagA", "TagB", "TagC", null);

    static final String POP_SQL = "color IN ('red', 'blue') AND idx BETWEEN 30 AND 209 AND (TAGS IS NULL OR TAGS <> 'TagB')";
    static final String PULL_SQL = "idx < 150 AND note CONTAINS 'w\u00f6rld' AND NOT (color = 'green') AND TAGS IS NOT NULL";

    @Test
    void sqlSelectorsDeliverOnlyMatchingMessages() throws Exception {
        String topic = unique("s11");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s11_pg"), wire));
        List<Spec> specs = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            specs.add(Spec.make(topic, i, TAGS.get(i % TAGS.size())));
        }
        Sending.sendAllSync(p, specs);

        Predicate<Spec> popMatch = s -> Set.of("red", "blue").contains(s.props.get("color"))
            && s.idx >= 30 && s.idx <= 209 && !"TagB".equals(s.tags);
        Predicate<Spec> pullMatch = s -> s.idx < 150 && s.props.get("note").contains("w\u00f6rld")
            && !"green".equals(s.props.get("color")) && s.tags != null;
        Set<Integer> wantPop = indexes(specs, popMatch);
        Set<Integer> wantPull = indexes(specs, pullMatch);
        assertTrue(wantPop.size() > 50 && wantPop.size() < N / 2 && wantPull.size() > 30, wantPop.size() + " / " + wantPull.size());

        String popGroup = unique("s11_pop");
        Received pop = new Received();
        track(pop.start(shim, popGroup, topic, MessageSelector.bySql(POP_SQL), 15_000, wire,
            m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));
        String pullGroup = unique("s11_pull");
        Received pulled = new Received();
        track(pullConsumer(pullGroup, topic, MessageSelector.bySql(PULL_SQL), pulled));

        Received.await("every message matching the POP selector at " + popGroup, Duration.ofSeconds(90),
            () -> pop.byIdx.keySet().containsAll(wantPop), () -> "got " + pop.distinct() + " of " + wantPop.size() + "\n" + diag());
        Received.await("every message matching the PULL selector at " + pullGroup, Duration.ofSeconds(90),
            () -> pulled.byIdx.keySet().containsAll(wantPull), () -> "got " + pulled.distinct() + " of " + wantPull.size() + "\n" + diag());
        // Leave time for stray messages to show up if popshim were to hand them out.
        Thread.sleep(3_000);

        assertEquals(wantPop, new TreeSet<>(pop.byIdx.keySet()), "group " + popGroup + " received exactly the POP selector's messages");
        assertEquals(wantPull, new TreeSet<>(pulled.byIdx.keySet()), "group " + pullGroup + " received exactly the PULL selector's messages");
        for (int idx : wantPop) {
            specs.get(idx).assertMatches(pop.of(idx).get(0).msg());
        }
        for (int idx : wantPull) {
            specs.get(idx).assertMatches(pulled.of(idx).get(0).msg());
        }
        assertTrue(pop.duplicates().isEmpty() && pulled.duplicates().isEmpty(),
            "duplicates: " + pop.duplicates() + " / " + pulled.duplicates());

        // popshim filtered: every message in its POP and PULL replies matched the group's selector.
        checkReplies(POP_MESSAGE, popGroup, specs, popMatch);
        checkReplies(PULL_MESSAGE, pullGroup, specs, pullMatch);
        assertTrue(wire.of(PULL_MESSAGE, e -> popGroup.equals(e.req("consumerGroup"))).isEmpty(), "the POP consumer pulled");
        assertTrue(wire.of(PULL_MESSAGE, e -> pullGroup.equals(e.req("consumerGroup")) && e.req("subscription") != null
            && !e.req("subscription").isEmpty()).isEmpty(), "the PULL consumer sent its subscription; expected the heartbeat's to be used");
        List<WireLog.Exchange> checks = wire.of(CHECK_CLIENT_CONFIG, e -> {
            String body = new String(e.requestBody(), StandardCharsets.UTF_8);
            return body.contains(popGroup) || body.contains(pullGroup);
        });
        assertEquals(2, checks.size(), "one CHECK_CLIENT_CONFIG per consumer\n" + diag());
        for (WireLog.Exchange e : checks) {
            assertEquals(SUCCESS, e.responseCode(), e.toString());
        }

        // A selector that does not compile: the consumer does not start, with popshim's parse error.
        DefaultMQPushConsumer bad = pullConsumer(unique("s11_bad"), topic, MessageSelector.bySql("idx > AND color = 'red'"), new Received(), false);
        MQClientException ex = assertThrows(MQClientException.class, bad::start);
        assertEquals(23, ex.getResponseCode(), ex.toString());
        assertTrue(ex.getErrorMessage().contains("SQL92 expression: line 1, column 7"), ex.getErrorMessage());
        bad.shutdown();
    }

    @Test
    void brokerWithoutPropertyFilterRefusesSql92() throws Exception {
        try (Popshim off = Popshim.start(getClass().getSimpleName() + "-off", List.of("--enable-property-filter=false"))) {
            WireLog offWire = new WireLog();
            DefaultMQPushConsumer c = new DefaultMQPushConsumer(unique("s11_off"), offWire);
            c.setNamesrvAddr(off.namesrvAddr());
            c.setInstanceName("s11-off-" + System.nanoTime());
            String topic = unique("s11off");
            DefaultMQProducer p = Sending.producer(off, unique("s11_off_pg"), offWire);
            try {
                Sending.sendAllSync(p, List.of(Spec.make(topic, 0, "TagA")));
            } finally {
                p.shutdown();
            }
            c.subscribe(topic, MessageSelector.bySql("idx >= 0"));
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
            MQClientException ex = assertThrows(MQClientException.class, c::start);
            assertEquals(1, ex.getResponseCode(), ex.toString());
            assertEquals("The broker does not support consumer to filter message by SQL92", ex.getErrorMessage());
            assertEquals(1, offWire.of(CHECK_CLIENT_CONFIG, e -> e.responseCode() == 1).size(), "the refusal came from CHECK_CLIENT_CONFIG");
            c.shutdown();
        }
    }

    /** A started push consumer in PULL mode recording into {@code got} (InteropBase.pullConsumer). */
    private DefaultMQPushConsumer pullConsumer(String group, String topic, MessageSelector sel, Received got) throws Exception {
        return pullConsumer(group, topic, sel, got, true);
    }

    private void checkReplies(int code, String group, List<Spec> specs, Predicate<Spec> match) {
        List<WireLog.Exchange> replies = wire.of(code, e -> group.equals(e.req("consumerGroup")) && e.responseCode() == SUCCESS);
        assertFalse(replies.isEmpty(), "no successful reply of code " + code + " for " + group + "\n" + diag());
        for (WireLog.Exchange e : replies) {
            for (MessageExt m : e.messages()) {
                int idx = Spec.indexOf(m);
                assertTrue(idx >= 0 && match.test(specs.get(idx)),
                    "popshim returned a message the selector rejects to " + group + ": " + Spec.describe(m));
            }
        }
    }

    private static Set<Integer> indexes(List<Spec> specs, Predicate<Spec> p) {
        return specs.stream().filter(p).map(s -> s.idx).collect(Collectors.toCollection(TreeSet::new));
    }
}
