package org.popshim.interop.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.junit.jupiter.api.Test;

/**
 * Two popshim brokers (popshim-a, popshim-b) registered with one Apache RocketMQ name server, and a
 * rocketmq-proxy on that name server; run.sh starts them. A DefaultMQPushConsumer (remoting client 5.5.0)
 * in POP mode reads a topic that has queues on both brokers (C2 does the same with a v5 consumer through
 * the proxy).
 *
 * <ol>
 *   <li>Messages from BOTH brokers reach the consumer within {@link #BOTH_WITHIN} of its start: the POP
 *       assignment (QUERY_ASSIGNMENT) covers the whole route at once, not one broker per rebalance.</li>
 *   <li>With the consumers paused, more messages are sent; popshim-a is killed with SIGKILL; the remoting
 *       producer and the v5 producer (through the proxy) keep sending, and every send succeeds (fail
 *       over to popshim-b).</li>
 *   <li>popshim-a is started again on its data; the consumers resume. Every message that got SEND_OK is
 *       delivered (nothing sent is lost), and no message whose ack got SUCCESS is delivered
 *       again.</li>
 * </ol>
 *
 * Properties (besides ProxyBase's): {@code interop.brokers} "name=host:port,name=host:port";
 * {@code interop.pids} the directory of NAME.pid files; {@code interop.start.NAME} a script that starts
 * broker NAME again on its data and waits until it listens.
 */
class C1ClusterTest extends ProxyBase {
    static final int PER_PHASE = 60;
    /**
     * Below the Java push consumer's 20 s rebalance interval, so a consumer given one broker per rebalance
     * fails, with room for a loaded 2-core machine (8 s failed there when three interop lanes ran at once).
     */
    static final Duration BOTH_WITHIN = Duration.ofSeconds(15);
    static final Duration INVISIBLE = Duration.ofSeconds(10);

    /** Deliveries of one consumer group: uniq id -> times, acked ids and their ack times. */
    static final class Group {
        final String name;
        final Map<String, List<Long>> deliveries = new ConcurrentHashMap<>();
        final Map<String, Long> ackedAt = new ConcurrentHashMap<>();
        final List<String> redeliveredAfterAck = java.util.Collections.synchronizedList(new ArrayList<>());
        final Map<String, String> idByHandle = new ConcurrentHashMap<>();

        Group(String name) {
            this.name = name;
        }

        void delivered(String id) {
            Long acked = ackedAt.get(id);
            if (acked != null) {
                redeliveredAfterAck.add(id + " (acked " + (System.currentTimeMillis() - acked) + " ms before)");
            }
            deliveries.computeIfAbsent(id, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                .add(System.currentTimeMillis());
        }
    }

    @Test
    void consumesFromBothBrokersAndSurvivesAKilledBroker() throws Exception {
        Map<String, String> brokers = new LinkedHashMap<>();
        for (String kv : prop("interop.brokers").split(",")) {
            String[] p = kv.split("=", 2);
            brokers.put(p[0], p[1]);
        }
        assertEquals(2, brokers.size(), "interop.brokers: " + brokers);
        String victim = brokers.keySet().iterator().next();

        String topic = unique("c1");
        String popGroup = unique("c1_pop_cg");
        DefaultMQProducer admin = adminProducer();
        TopicRouteData route = createTopic(admin, topic, 4, 2);
        assertEquals(new TreeSet<>(brokers.keySet()), new TreeSet<>(brokerNames(route)), "brokers of " + topic);
        // A Java broker answers QUERY_ASSIGNMENT in PULL mode unless the group is switched to POP
        // (mqadmin setConsumeMode); do that on every broker, as an operator would.
        for (String addr : brokers.values()) {
            admin.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
                .setMessageRequestMode(addr, topic, popGroup, MessageRequestMode.POP, 0, 5_000);
        }

        // Phase 1: messages on both brokers, then both consumers start.
        DefaultMQProducer producer = track(remotingProducer());
        Map<String, String> brokerById = new ConcurrentHashMap<>();
        send(producer, topic, "p1", PER_PHASE, brokerById);
        Set<String> phase1Brokers = new TreeSet<>(brokerById.values());
        assertEquals(new TreeSet<>(brokers.keySet()), phase1Brokers, "brokers the first sends went to");

        Group pop = new Group(popGroup);
        long popStart = System.currentTimeMillis();
        DefaultMQPushConsumer pc = popConsumer(popGroup, topic, pop);
        {
            awaitBoth("the POP push consumer", pop, brokerById, popStart);
            awaitAll(pop, brokerById.keySet(), Duration.ofSeconds(60));

            // Phase 2: consumers paused; more messages; SIGKILL one broker; producers keep sending.
            pc.suspend();
            Thread.sleep(1_000);
            send(producer, topic, "p2", PER_PHASE, brokerById);
            kill9(victim);
            Map<String, String> afterKill = new ConcurrentHashMap<>();
            send(producer, topic, "p3", PER_PHASE, afterKill);
            assertTrue(afterKill.values().stream().noneMatch(victim::equals),
                "a SEND_OK from the killed broker " + victim + ": " + afterKill);
            brokerById.putAll(afterKill);
            Producer v5p = producer(topic);
            for (int i = 0; i < PER_PHASE / 2; i++) {
                String id = v5p.send(PROVIDER.newMessageBuilder().setTopic(topic).setTag("v5").setKeys("v5-" + i)
                    .setBody(("c1 v5 " + i).getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString();
                brokerById.put(id, "via-proxy");
            }

            // Phase 3: the broker comes back on its data; consumers resume; nothing sent is lost.
            restart(victim);
            pc.resume();
            awaitAll(pop, brokerById.keySet(), Duration.ofSeconds(120));
            // Past one more invisible time: nothing acked may come back.
            Thread.sleep(INVISIBLE.toMillis() + REVIVE_SLACK_MS);
        }
        assertTrue(pop.redeliveredAfterAck.isEmpty(), "POP consumer got acked messages again: " + pop.redeliveredAfterAck);
    }

    DefaultMQProducer remotingProducer() throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(unique("c1_pg"));
        p.setNamesrvAddr(namesrv());
        p.setInstanceName(unique("c1p"));
        p.setPollNameServerInterval(5_000);
        p.setSendMsgTimeout(5_000);
        p.setRetryTimesWhenSendFailed(3);
        p.start();
        return p;
    }

    static void send(DefaultMQProducer p, String topic, String phase, int n, Map<String, String> brokerById)
        throws Exception {
        for (int i = 0; i < n; i++) {
            Message m = new Message(topic, "T", phase + "-" + i, (phase + " " + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m);
            assertEquals(SendStatus.SEND_OK, r.getSendStatus(), phase + " send " + i + ": " + r);
            brokerById.put(r.getMsgId(), r.getMessageQueue().getBrokerName());
        }
    }

    DefaultMQPushConsumer popConsumer(String group, String topic, Group g) throws Exception {
        RPCHook ackHook = new RPCHook() {
            @Override
            public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            }

            @Override
            public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
                if (request.getCode() == 200051 && response != null && response.getCode() == 0) {
                    String id = g.idByHandle.get(String.valueOf(request.getExtFields().get("extraInfo")));
                    if (id != null) {
                        g.ackedAt.putIfAbsent(id, System.currentTimeMillis());
                    }
                }
            }
        };
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, ackHook);
        c.setNamesrvAddr(namesrv());
        c.setInstanceName(unique("c1c"));
        c.setClientRebalance(false);
        c.setPopInvisibleTime(INVISIBLE.toMillis());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPollNameServerInterval(5_000);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String handle = m.getProperty(MessageConst.PROPERTY_POP_CK);
                if (handle != null) {
                    g.idByHandle.put(handle, m.getMsgId());
                }
                g.delivered(m.getMsgId());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        track(c::shutdown);
        return c;
    }

    static Thread v5Loop(SimpleConsumer sc, Group g, AtomicBoolean paused, AtomicBoolean stop) {
        Thread t = new Thread(() -> {
            while (!stop.get()) {
                if (paused.get()) {
                    sleep(100);
                    continue;
                }
                try {
                    for (MessageView v : sc.receive(16, INVISIBLE)) {
                        String id = v.getMessageId().toString();
                        g.delivered(id);
                        try {
                            sc.ack(v);
                            g.ackedAt.putIfAbsent(id, System.currentTimeMillis());
                        } catch (Exception e) {
                            // not acked (e.g. its broker was just killed): it may come back, which is allowed
                        }
                    }
                } catch (Exception e) {
                    sleep(200); // empty poll or a broker away: try again
                }
            }
        }, "c1-v5-receive");
        t.setDaemon(true);
        t.start();
        return t;
    }

    void awaitBoth(String who, Group g, Map<String, String> brokerById, long start) {
        Set<String> want = new TreeSet<>(brokerById.values());
        await(who + " receiving messages from both brokers (" + want + ") within " + BOTH_WITHIN + " of its start",
            BOTH_WITHIN.minusMillis(System.currentTimeMillis() - start),
            () -> want.equals(g.deliveries.keySet().stream().map(brokerById::get).collect(Collectors.toCollection(TreeSet::new))),
            () -> "brokers seen: " + g.deliveries.keySet().stream().map(brokerById::get).collect(Collectors.groupingBy(b -> b,
                Collectors.counting())));
    }

    static void awaitAll(Group g, Set<String> ids, Duration timeout) {
        await(g.name + " receiving all " + ids.size() + " messages", timeout, () -> g.deliveries.keySet().containsAll(ids),
            () -> "missing " + ids.stream().filter(id -> !g.deliveries.containsKey(id)).count() + " of " + ids.size());
    }

    static void kill9(String broker) throws Exception {
        Path pidFile = Paths.get(prop("interop.pids")).resolve(broker + ".pid");
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        ProcessHandle h = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError(broker + " (pid " + pid + ") is not running"));
        h.destroyForcibly();
        h.onExit().get(30, TimeUnit.SECONDS);
        Files.deleteIfExists(pidFile);
    }

    static void restart(String broker) throws Exception {
        Process p = new ProcessBuilder("bash", prop("interop.start." + broker)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(90, TimeUnit.SECONDS), "restart of " + broker + " did not finish");
        assertEquals(0, p.exitValue(), "restart of " + broker + ": " + out);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
