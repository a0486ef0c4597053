package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.junit.jupiter.api.Test;

/**
 * Scenario 7: popshim is restarted (gracefully, and after a SIGKILL) in the middle of POP consumption.
 * Every message whose ACK popshim answered SUCCESS before the restart is never delivered again (a success
 * reply means the ack was fsynced), and no message is lost: each is delivered at least once in the end.
 */
class S7RestartTest extends InteropBase {
    static final int N = 400;
    static final long INVISIBLE_MS = 10_000;

    @Test
    void gracefulRestartMidConsumption() throws Exception {
        runWithRestart("s7g", false);
    }

    @Test
    void crashRestartMidConsumption() throws Exception {
        runWithRestart("s7k", true);
    }

    private void runWithRestart(String prefix, boolean crash) throws Exception {
        // A fresh popshim per method, so one method's failed restart cannot break the other.
        shim.close();
        shim = Popshim.start(getClass().getSimpleName() + "-" + prefix);
        wire.clear();
        String topic = unique(prefix);
        String group = unique(prefix + "_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique(prefix + "_pg"), wire));
        List<Spec> specs = Spec.generate(topic, N);
        Sending.sendAllSync(p, specs);

        Received got = new Received();
        // A slow listener (4 threads, 20 ms a message) keeps consumption going long enough to restart in the middle.
        track(got.start(shim, group, topic, "*", INVISIBLE_MS, wire, m -> {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }));
        Received.await("a third of the messages acked before the restart", Duration.ofSeconds(90),
            () -> ackedIdx(got).size() >= N / 3, () -> "acked=" + ackedIdx(got).size() + "\n" + diag());

        if (crash) {
            shim.crashAndRestart();
        } else {
            shim.restart();
        }
        Set<Integer> ackedBefore = ackedIdx(got);
        assertTrue(ackedBefore.size() < N, "restart came too late to be in the middle: all acked already");

        Received.await("every message delivered and settled after the restart", Duration.ofSeconds(120),
            () -> got.distinct() == N && unsettled(got).isEmpty(),
            () -> "distinct=" + got.distinct() + " unsettled=" + unsettled(got) + "\n" + diag());
        // Let anything whose ack was lost in the restart come back and be acked.
        Thread.sleep(INVISIBLE_MS + REVIVE_SLACK_MS);
        Received.await("redeliveries settled", Duration.ofSeconds(60), () -> unsettled(got).isEmpty(),
            () -> "unsettled=" + unsettled(got) + "\n" + diag());

        Map<Integer, Integer> ackedButBack = new TreeMap<>();
        for (int idx : ackedBefore) {
            if (got.of(idx).size() > 1) {
                ackedButBack.put(idx, got.of(idx).size());
            }
        }
        assertTrue(ackedButBack.isEmpty(), (crash ? "after SIGKILL" : "after graceful restart")
            + ", messages acked with SUCCESS before the restart came back (idx -> deliveries): " + ackedButBack
            + "\n" + diag());
        for (Spec s : specs) {
            List<Received.Delivery> ds = got.of(s.idx);
            assertTrue(!ds.isEmpty(), "idx " + s.idx + " lost across the restart");
            s.assertMatches(ds.get(ds.size() - 1).msg());
        }
        assertEquals(N, got.distinct(), "distinct messages delivered");
        assertTrue(got.foreign.isEmpty(), "messages that were never sent: " + got.foreign.stream().map(Spec::describe).toList());
        System.out.printf("S7 %s: %d acked before restart, %d redelivered after it, %d deliveries in total%n",
            crash ? "SIGKILL" : "SIGTERM", ackedBefore.size(), got.duplicates().size(), got.total.get());
    }

    /**
     * Indexes not yet settled: never delivered, or whose last delivery has no ACK SUCCESS and no ACK that
     * was sent and lost its reply in the restart (popshim may have made such an ack durable, so the message
     * legitimately never returns).
     */
    private Set<Integer> unsettled(Received got) {
        Set<String> ok = new HashSet<>();
        wire.of(ACK_MESSAGE, x -> x.responseCode() == SUCCESS).forEach(e -> ok.add(e.req("extraInfo")));
        Set<String> answered = new HashSet<>();
        wire.of(ACK_MESSAGE).forEach(e -> answered.add(e.req("extraInfo")));
        Set<Integer> out = new TreeSet<>();
        for (int idx = 0; idx < N; idx++) {
            List<Received.Delivery> ds = got.of(idx);
            if (ds.isEmpty()) {
                out.add(idx);
                continue;
            }
            String h = ds.get(ds.size() - 1).handle();
            boolean lostReply = wire.ackSent(h) && !answered.contains(h);
            if (!ok.contains(h) && !lostReply) {
                out.add(idx);
            }
        }
        return out;
    }

    /** Indexes whose ACK_MESSAGE got a SUCCESS reply. */
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
}
