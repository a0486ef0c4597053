package org.popshim.interop;

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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.junit.jupiter.api.Test;

/**
 * Scenario 16: NOTIFY_CONSUMER_IDS_CHANGED (40). Two DefaultMQPushConsumers of one group in PULL mode
 * (client-side rebalance), each in a JVM of its own ({@link RebalanceChild}) whose periodic rebalance is
 * pushed out to one hour (rocketmq.client.rebalance.waitInterval), on a topic of 8 queues:
 *
 * <ol>
 *   <li>A starts and allocates itself all 8 queues (its own rebalance at start);</li>
 *   <li>B starts: B allocates 4 of 8 with 2 consumers, and A, told by the broker that the group changed,
 *   rebalances to 4 of 8 as well;</li>
 *   <li>B shuts down (UNREGISTER_CLIENT): A is told again and takes all 8 back.</li>
 * </ol>
 *
 * Without the broker's notice A would keep its 8 queues for an hour, so the bounded waits below (90 s,
 * for a loaded machine) cannot be met by the client's timer. A Java broker sends the notice from
 * ConsumerManager.registerConsumer / unregisterConsumer through DefaultConsumerIdsChangeListener.
 */
class S16RebalanceNotifyTest extends InteropBase {
    static final int QUEUES = 8;
    static final Duration PHASE = Duration.ofSeconds(90);

    /** A {@link RebalanceChild} process and what it printed. */
    final class Child implements AutoCloseable {
        final String name;
        final Process process;
        final List<String> lines = new CopyOnWriteArrayList<>();
        volatile String clientId;
        private final Thread reader;

        Child(String name, String group, String topic) throws IOException {
            this.name = name;
            Path home = shim.dir().resolve("child-" + name);
            Files.createDirectories(home);
            String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> cmd = List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Duser.home=" + home, "-Drocketmq.log.root=" + home.resolve("logs"),
                "-Drocketmq.client.rebalance.waitInterval=3600000",
                "-cp", cp, RebalanceChild.class.getName(),
                shim.namesrvAddr(), group, topic, "s16-" + name + "-" + System.nanoTime());
            process = new ProcessBuilder(cmd).redirectError(home.resolve("stderr.log").toFile()).start();
            reader = new Thread(this::read, "s16-child-" + name);
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                    if (l.startsWith("READY ")) {
                        clientId = l.substring(6);
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }

        /** The last ALLOC line's "consumers queues", or "" before the first. */
        String allocation(String topic) {
            String last = "";
            for (String l : lines) {
                if (l.startsWith("ALLOC " + topic + " ")) {
                    last = l.substring(("ALLOC " + topic + " ").length());
                }
            }
            return last;
        }

        long notices(String group) {
            return lines.stream().filter(l -> l.equals("NOTIFY " + group)).count();
        }

        void awaitAllocation(String topic, String want) throws InterruptedException {
            Received.await(name + " allocating \"" + want + "\" (consumers queues) of " + topic, PHASE,
                () -> want.equals(allocation(topic)) || !process.isAlive(), () -> tail() + "\n" + diag());
            assertTrue(process.isAlive(), name + " exited: " + tail());
        }

        void stop() throws Exception {
            OutputStream in = process.getOutputStream();
            in.write("stop\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), name + " did not stop: " + tail());
            reader.join(10_000);
            assertTrue(lines.contains("STOPPED"), name + " did not shut down cleanly: " + tail());
        }

        String tail() {
            List<String> l = new ArrayList<>(lines);
            return name + " last lines: " + l.subList(Math.max(0, l.size() - 10), l.size());
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void membershipChangesMakeTheOtherConsumerRebalanceAtOnce() throws Exception {
        String topic = unique("s16");
        String group = unique("s16_cg");
        DefaultMQProducer p = track(Sending.producer(shim, unique("s16_pg"), wire));
        p.createTopic("TBW102", topic, QUEUES, Map.of());
        Received.await("route of " + topic + " with " + QUEUES + " queues", Duration.ofSeconds(30), () -> {
            try {
                return p.fetchPublishMessageQueues(topic).size() == QUEUES;
            } catch (Exception e) {
                return false;
            }
        }, this::diag);

        try (Child a = new Child("A", group, topic)) {
            a.awaitAllocation(topic, "1 " + QUEUES);
            long noticesBefore = a.notices(group);
            try (Child b = new Child("B", group, topic)) {
                b.awaitAllocation(topic, "2 " + QUEUES / 2);
                a.awaitAllocation(topic, "2 " + QUEUES / 2);
                assertTrue(a.notices(group) > noticesBefore, "A rebalanced without a NOTIFY_CONSUMER_IDS_CHANGED: " + a.tail());
                noticesBefore = a.notices(group);
                b.stop();
            }
            a.awaitAllocation(topic, "1 " + QUEUES);
            assertTrue(a.notices(group) > noticesBefore, "A took the queues back without a notice: " + a.tail());
            a.stop();
        }
    }
}
