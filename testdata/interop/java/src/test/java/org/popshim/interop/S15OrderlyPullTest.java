package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.body.LockBatchRequestBody;
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader;
import org.junit.jupiter.api.Test;

/**
 * Scenario 12: orderly consumption over PULL with queue locks (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ). Four
 * DefaultMQPushConsumer instances with a MessageListenerOrderly in PULL mode (client-side rebalance, not
 * POP), each in a JVM of its own ({@link OrderlyPullChild}), on one topic of 8 queues while a producer keeps
 * sending one message per queue and round (key k on queue k, index i):
 *
 * <ol>
 *   <li>C1 and C2 start and share the queues;</li>
 *   <li>C3 joins: a rebalance moves queues to it, which it can lock once their old holder unlocked them or
 *   the lock expired;</li>
 *   <li>C3 is killed with SIGKILL mid-stream: its locks stay until --rebalance-lock-max-live-time (12 s
 *   here) has passed, then C1 and C2 take its queues over;</li>
 *   <li>C2 shuts down (unlocking its queues) and C4 starts;</li>
 *   <li>the producer stops, every message is consumed, C1 and C4 shut down.</li>
 * </ol>
 *
 * Per key, over all consumers sorted by the time their listener ran: no gap (nothing lost or skipped), each
 * message the next one or a redelivery from an earlier point (a new holder starts at the committed offset),
 * and no two consumers ran the listener on one queue at overlapping times (the locks are exclusive). Every
 * LOCK_BATCH_MQ is answered SUCCESS and some are refused a queue (the killed consumer's, until expiry).
 * At the end the committed consumer offsets equal the queues' max offsets (PULL's commit and
 * UPDATE_CONSUMER_OFFSET work) and a fresh client can lock all 8 queues within the lock's max live time
 * (nothing left locked for good).
 */
class S15OrderlyPullTest extends InteropBase {
    static final int QUEUES = 8;
    static final long ROUND_PAUSE_MS = 40;
    static final Duration PHASE = Duration.ofSeconds(90);

    @Override
    protected List<String> popshimArgs() {
        return List.of("--rebalance-lock-max-live-time", "12s");
    }

    /** One MSG line of a child: the listener saw message (queue, key, idx) between start and end. */
    record Consumed(int child, int seq, int queue, int key, int idx, long start, long end) {
    }

    /** An {@link OrderlyPullChild} process and what it printed. */
    final class Child implements AutoCloseable {
        final int id;
        final Process process;
        final List<String> lines = new CopyOnWriteArrayList<>();
        final List<Consumed> consumed = new CopyOnWriteArrayList<>();
        volatile String clientId;
        private final Thread reader;

        Child(int id, String group, String topic) throws IOException {
            this.id = id;
            Path home = shim.dir().resolve("child-" + id);
            Files.createDirectories(home);
            String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> cmd = List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx160m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Duser.home=" + home, "-Drocketmq.log.root=" + home.resolve("logs"),
                "-Drocketmq.client.rebalance.lockInterval=1000", "-Drocketmq.client.rebalance.lockMaxLiveTime=5000",
                "-Drocketmq.client.rebalance.waitInterval=2000",
                "-cp", cp, OrderlyPullChild.class.getName(),
                shim.namesrvAddr(), group, topic, "s12-c" + id + "-" + System.nanoTime());
            process = new ProcessBuilder(cmd).redirectError(home.resolve("stderr.log").toFile()).start();
            reader = new Thread(this::read, "s12-child-" + id);
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                    String[] f = l.split(" ");
                    if (f[0].equals("READY")) {
                        clientId = f[1];
                    } else if (f[0].equals("MSG")) {
                        consumed.add(new Consumed(id, consumed.size(), Integer.parseInt(f[1]), Integer.parseInt(f[2]),
                            Integer.parseInt(f[3]), Long.parseLong(f[5]), Long.parseLong(f[6])));
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }

        void awaitReady() throws InterruptedException {
            Received.await("consumer C" + id + " started", PHASE, () -> clientId != null || !process.isAlive(), this::tail);
            assertTrue(process.isAlive(), "consumer C" + id + " exited: " + tail());
        }

        /** Graceful: "stop" on stdin, the consumer shuts down (unlocking its queues), the JVM exits. */
        void stop() throws Exception {
            OutputStream in = process.getOutputStream();
            in.write("stop\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "consumer C" + id + " did not stop: " + tail());
            reader.join(10_000);
            assertTrue(lines.contains("STOPPED"), "consumer C" + id + " did not shut down cleanly: " + tail());
        }

        /** SIGKILL: no unlock, no offset persisted, the connection just goes. */
        void kill() throws Exception {
            process.destroyForcibly().waitFor();
            reader.join(10_000);
        }

        Set<Integer> queues() {
            Set<Integer> q = new HashSet<>();
            consumed.forEach(c -> q.add(c.queue()));
            return q;
        }

        String tail() {
            List<String> l = new ArrayList<>(lines);
            return "C" + id + " (" + consumed.size() + " consumed) last lines: "
                + l.subList(Math.max(0, l.size() - 8), l.size());
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void orderlyPullConsumersKeepQueueOrderAcrossRebalanceKillAndRestart() throws Exception {
        String topic = unique("s12");
        String group = unique("s12_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s12_pg"), wire));
        p.createTopic("TBW102", topic, QUEUES, Map.of());
        List<MessageQueue> queues = new ArrayList<>();
        Received.await("route of " + topic, Duration.ofSeconds(30), () -> {
            try {
                queues.clear();
                queues.addAll(p.fetchPublishMessageQueues(topic));
                return queues.size() == QUEUES;
            } catch (Exception e) {
                return false;
            }
        }, this::diag);
        queues.sort(Comparator.comparingInt(MessageQueue::getQueueId));

        List<Child> children = new ArrayList<>();
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicInteger rounds = new AtomicInteger();
        List<Throwable> sendErrors = new CopyOnWriteArrayList<>();
        Thread producer = new Thread(() -> {
            try {
                for (int i = 0; producing.get(); i++) {
                    for (int k = 0; k < QUEUES; k++) {
                        Message m = new Message(topic, "s12", ("s12 " + k + " " + i).getBytes(StandardCharsets.UTF_8));
                        m.putUserProperty("k", Integer.toString(k));
                        m.putUserProperty("i", Integer.toString(i));
                        SendResult r = p.send(m, queues.get(k));
                        assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send " + k + "/" + i);
                    }
                    rounds.set(i + 1);
                    Thread.sleep(ROUND_PAUSE_MS);
                }
            } catch (Throwable e) {
                sendErrors.add(e);
            }
        }, "s12-producer");
        try {
            Child c1 = new Child(1, group, topic);
            Child c2 = new Child(2, group, topic);
            children.add(c1);
            children.add(c2);
            c1.awaitReady();
            c2.awaitReady();
            producer.start();
            Received.await("C1 and C2 consuming", PHASE,
                () -> c1.consumed.size() >= 100 && c2.consumed.size() >= 100, () -> status(children));

            Child c3 = new Child(3, group, topic);
            children.add(c3);
            c3.awaitReady();
            Received.await("C3 consuming the queues the rebalance moved to it", PHASE,
                () -> c3.consumed.size() >= 50, () -> status(children));

            c3.kill();
            Set<Integer> orphaned = c3.queues();
            int c1Before = c1.consumed.size();
            int c2Before = c2.consumed.size();
            Received.await("C1 or C2 consuming the killed C3's queues " + orphaned, PHASE, () -> {
                Set<Integer> taken = new HashSet<>();
                List<Consumed> s1 = new ArrayList<>(c1.consumed);
                List<Consumed> s2 = new ArrayList<>(c2.consumed);
                s1.subList(c1Before, s1.size()).forEach(c -> taken.add(c.queue()));
                s2.subList(c2Before, s2.size()).forEach(c -> taken.add(c.queue()));
                return taken.containsAll(orphaned);
            }, () -> status(children));

            c2.stop();
            Child c4 = new Child(4, group, topic);
            children.add(c4);
            c4.awaitReady();
            Received.await("C4 consuming", PHASE, () -> c4.consumed.size() >= 50, () -> status(children));

            producing.set(false);
            producer.join(30_000);
            assertTrue(sendErrors.isEmpty(), "sends failed: " + sendErrors);
            int sent = rounds.get();
            Received.await("every message consumed", PHASE, () -> missing(children, sent).isEmpty(),
                () -> "missing " + missing(children, sent) + "\n" + status(children));
            c1.stop();
            c4.stop();

            checkOrderAndExclusivity(children);
            checkLocks(children);
            checkOffsetsAndFreeLocks(topic, group, queues);
        } finally {
            producing.set(false);
            children.forEach(Child::close);
        }
    }

    /** Per key: the idx values in [0, sent) no consumer reported. */
    static Map<Integer, List<Integer>> missing(List<Child> children, int sent) {
        Map<Integer, List<Integer>> out = new java.util.TreeMap<>();
        for (int k = 0; k < QUEUES; k++) {
            boolean[] seen = new boolean[sent];
            for (Child c : children) {
                for (Consumed m : c.consumed) {
                    if (m.key() == k && m.idx() < sent) {
                        seen[m.idx()] = true;
                    }
                }
            }
            List<Integer> miss = new ArrayList<>();
            for (int i = 0; i < sent; i++) {
                if (!seen[i]) {
                    miss.add(i);
                }
            }
            if (!miss.isEmpty()) {
                out.put(k, miss.size() > 10 ? miss.subList(0, 10) : miss);
            }
        }
        return out;
    }

    /**
     * Per key over all consumers, sorted by listener start (then per consumer in its own order): each idx is
     * the next one (previous + 1) or a redelivery (at most the previous), never past the highest so far + 1;
     * and two consumers' listener calls on one key never overlap in time.
     */
    void checkOrderAndExclusivity(List<Child> children) {
        List<String> violations = new ArrayList<>();
        int redelivered = 0;
        for (int k = 0; k < QUEUES; k++) {
            List<Consumed> all = new ArrayList<>();
            for (Child c : children) {
                for (Consumed m : c.consumed) {
                    if (m.key() == k) {
                        all.add(m);
                        if (m.queue() != k) {
                            violations.add("key " + k + " came from queue " + m.queue());
                        }
                    }
                }
            }
            all.sort(Comparator.comparingLong(Consumed::start).thenComparingInt(Consumed::child).thenComparingInt(Consumed::seq));
            int prev = -1;
            int max = -1;
            for (Consumed m : all) {
                if (m.idx() > prev + 1) {
                    violations.add("key " + k + ": C" + m.child() + " got " + m.idx() + " after " + prev + " (highest " + max + ")");
                }
                if (m.idx() <= prev) {
                    redelivered++;
                }
                prev = m.idx();
                max = Math.max(max, m.idx());
            }
            for (int a = 0; a < all.size(); a++) {
                for (int b = a + 1; b < all.size() && all.get(b).start() <= all.get(a).end(); b++) {
                    Consumed x = all.get(a);
                    Consumed y = all.get(b);
                    if (x.child() != y.child() && y.start() < x.end()) {
                        violations.add("key " + k + ": C" + x.child() + " [" + x.start() + "," + x.end() + "] and C" + y.child()
                            + " [" + y.start() + "," + y.end() + "] at once");
                    }
                }
            }
        }
        System.out.println("S15: " + redelivered + " redeliveries after a change of holder");
        assertTrue(violations.isEmpty(), violations.size() + " order/exclusivity violations, first: "
            + violations.subList(0, Math.min(10, violations.size())));
    }

    /** Every LOCK_BATCH_MQ answered SUCCESS; some queue was refused (held by another client); unlocks were sent. */
    void checkLocks(List<Child> children) {
        int locks = 0;
        int refused = 0;
        int unlocks = 0;
        for (Child c : children) {
            for (String l : c.lines) {
                String[] f = l.split(" ");
                if (f[0].equals("LOCK")) {
                    locks++;
                    assertEquals("0", f[1], "LOCK_BATCH_MQ answer of C" + c.id + ": " + l);
                    if (Integer.parseInt(f[3]) < Integer.parseInt(f[2])) {
                        refused++;
                    }
                } else if (f[0].equals("UNLOCK")) {
                    unlocks++;
                }
            }
        }
        System.out.println("S15: " + locks + " LOCK_BATCH_MQ (" + refused + " with a queue refused), " + unlocks + " UNLOCK_BATCH_MQ");
        assertTrue(locks > 0 && refused > 0 && unlocks > 0, "locks " + locks + ", refused " + refused + ", unlocks " + unlocks);
    }

    /** Committed offsets equal the max offsets; a fresh client locks all queues (none left locked). */
    void checkOffsetsAndFreeLocks(String topic, String group, List<MessageQueue> queues) throws Exception {
        try (DirectApi api = DirectApi.connect(shim, topic, wire)) {
            for (MessageQueue mq : queues) {
                QueryConsumerOffsetRequestHeader h = new QueryConsumerOffsetRequestHeader();
                h.setConsumerGroup(group);
                h.setTopic(topic);
                h.setQueueId(mq.getQueueId());
                long committed = api.api.queryConsumerOffset(api.brokerAddr, h, 10_000);
                long max = api.api.getMaxOffset(api.brokerAddr, mq, 10_000);
                assertEquals(max, committed, "committed offset of queue " + mq.getQueueId());
            }
            LockBatchRequestBody body = new LockBatchRequestBody();
            body.setConsumerGroup(group);
            body.setClientId("s12-checker");
            body.setMqSet(new HashSet<>(queues));
            // The Java client's periodic lock task (every second here) can run once more while the
            // consumer shuts down, after its UNLOCK_BATCH_MQ: such a lock stays until it expires
            // (--rebalance-lock-max-live-time, 12 s), as on a Java broker. Seen in CI on 2026-12-06.
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            Set<MessageQueue> locked = api.api.lockBatchMQ(api.brokerAddr, body, 10_000);
            while (!locked.containsAll(queues) && System.nanoTime() < deadline) {
                Thread.sleep(500);
                locked = api.api.lockBatchMQ(api.brokerAddr, body, 10_000);
            }
            assertEquals(new HashSet<>(queues), locked, "queues still locked 15 s after every consumer left");
        }
    }

    static String status(List<Child> children) {
        StringBuilder sb = new StringBuilder();
        for (Child c : children) {
            sb.append(c.tail()).append(" queues ").append(c.queues()).append('\n');
        }
        return sb.toString();
    }
}
