package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/**
 * Scenario 6: POP consumers with tag filters receive only matching messages. Popshim filters on the
 * broker side: no POP reply ever carries a non-matching tag (the client would silently drop and ack such
 * messages, which would hide a broker that does not filter). A second group subscribed to the other tag
 * still gets every one of those messages.
 */
class S6TagFilterTest extends InteropBase {
    static final int N = 300;
    static final List<String> TAGS = java.util.Arrays.asList("TagA", "TagB", "TagC", null);

    @Test
    void tagFilterDeliversOnlyMatchingMessages() throws Exception {
        String topic = unique("s6");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s6_pg"), wire));
        List<Spec> specs = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            specs.add(Spec.make(topic, i, TAGS.get(i % TAGS.size())));
        }
        Sending.sendAllSync(p, specs);

        Set<Integer> wantAC = idxWithTag(specs, Set.of("TagA", "TagC"));
        Set<Integer> wantB = idxWithTag(specs, Set.of("TagB"));
        String groupAC = unique("s6_ac");
        String groupB = unique("s6_b");
        Received ac = new Received();
        Received b = new Received();
        track(ac.start(shim, groupAC, topic, "TagA || TagC", 15_000, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));
        track(b.start(shim, groupB, topic, "TagB", 15_000, wire, m -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS));

        Received.await("every TagA/TagC message at group " + groupAC, Duration.ofSeconds(90),
            () -> ac.byIdx.keySet().containsAll(wantAC), () -> "got " + ac.distinct() + " of " + wantAC.size() + "\n" + diag());
        Received.await("every TagB message at group " + groupB, Duration.ofSeconds(90),
            () -> b.byIdx.keySet().containsAll(wantB), () -> "got " + b.distinct() + " of " + wantB.size() + "\n" + diag());
        // Leave time for stray messages (untagged, other tags) to show up if popshim were to hand them out.
        Thread.sleep(3_000);

        assertEquals(wantAC, new TreeSet<>(ac.byIdx.keySet()), "group " + groupAC + " received exactly TagA and TagC");
        assertEquals(wantB, new TreeSet<>(b.byIdx.keySet()), "group " + groupB + " received exactly TagB");
        for (int idx : wantAC) {
            specs.get(idx).assertMatches(ac.of(idx).get(0).msg());
        }
        for (int idx : wantB) {
            specs.get(idx).assertMatches(b.of(idx).get(0).msg());
        }
        assertTrue(ac.duplicates().isEmpty() && b.duplicates().isEmpty(),
            "duplicates: " + ac.duplicates() + " / " + b.duplicates());

        // Broker-side filtering: what popshim put in each group's POP replies matched that group's filter.
        checkPopRepliesOnly(groupAC, Set.of("TagA", "TagC"));
        checkPopRepliesOnly(groupB, Set.of("TagB"));
    }

    private void checkPopRepliesOnly(String group, Set<String> tags) {
        List<WireLog.Exchange> pops = wire.of(POP_MESSAGE, e -> group.equals(e.req("consumerGroup")) && e.responseCode() == SUCCESS);
        assertFalse(pops.isEmpty(), "no successful POP for " + group + "\n" + diag());
        for (WireLog.Exchange e : pops) {
            for (MessageExt m : e.messages()) {
                assertTrue(m.getTags() != null && tags.contains(m.getTags()),
                    "popshim returned tag " + m.getTags() + " to " + group + " subscribed to " + tags + ": " + Spec.describe(m));
            }
        }
    }

    private static Set<Integer> idxWithTag(List<Spec> specs, Set<String> tags) {
        return specs.stream().filter(s -> s.tags != null && tags.contains(s.tags)).map(s -> s.idx)
            .collect(Collectors.toCollection(TreeSet::new));
    }
}
