package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.remoting.RPCHook;

/** Sends specs with a real DefaultMQProducer using all four send styles, and keeps what came back. */
final class Sending {
    /** How a spec was sent. */
    enum Mode { SYNC, ASYNC, ONEWAY, BATCH }

    /** One SendResult and the specs it covers (several for a batch), in send order for SYNC. */
    record Result(Mode mode, List<Spec> specs, SendResult result) {
    }

    static final int BATCH_SIZE = 50;

    final List<Result> results = Collections.synchronizedList(new ArrayList<>());
    final Map<Integer, Mode> modes = new ConcurrentHashMap<>();
    final List<Throwable> asyncErrors = Collections.synchronizedList(new ArrayList<>());

    /** A started producer for popshim's name server, with the given hook on every request. */
    static DefaultMQProducer producer(Popshim shim, String group, RPCHook hook) throws Exception {
        return producer(shim, group, hook, false);
    }

    /**
     * As {@link #producer(Popshim, String, RPCHook)}; {@code tls} sets ClientConfig.useTLS, the per-client
     * form of {@code -Dtls.enable=true} (that property only sets useTLS's default).
     */
    static DefaultMQProducer producer(Popshim shim, String group, RPCHook hook, boolean tls) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group, hook);
        p.setUseTLS(tls);
        p.setNamesrvAddr(shim.namesrvAddr());
        p.setInstanceName(group + "-" + System.nanoTime());
        p.setSendMsgTimeout(10_000);
        p.start();
        return p;
    }

    /** The send style of the i-th of n messages: first 30 % sync, 30 % async, 20 % oneway, rest batched. */
    static Mode modeOf(int i, int n) {
        if (i == Spec.BIG_INDEX || i < n * 3 / 10) {
            return Mode.SYNC;
        }
        if (i < n * 6 / 10) {
            return Mode.ASYNC;
        }
        if (i < n * 8 / 10) {
            return Mode.ONEWAY;
        }
        return Mode.BATCH;
    }

    /** Sends every spec with its {@link #modeOf} style and waits (bounded) for all async callbacks. */
    Sending sendMixed(DefaultMQProducer p, List<Spec> specs) throws Exception {
        int n = specs.size();
        long asyncCount = specs.stream().filter(s -> modeOf(s.idx, n) == Mode.ASYNC).count();
        CountDownLatch asyncDone = new CountDownLatch((int) asyncCount);
        List<Spec> batch = new ArrayList<>();
        for (Spec s : specs) {
            Mode mode = modeOf(s.idx, n);
            modes.put(s.idx, mode);
            switch (mode) {
                case SYNC -> {
                    Message m = s.toMessage();
                    SendResult r = p.send(m);
                    s.uniqKey = m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
                    results.add(new Result(mode, List.of(s), r));
                }
                case ASYNC -> {
                    Message m = s.toMessage();
                    p.send(m, new SendCallback() {
                        @Override
                        public void onSuccess(SendResult r) {
                            // the UNIQ_KEY is stamped on the sending thread, so it is set by now
                            s.uniqKey = m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
                            results.add(new Result(Mode.ASYNC, List.of(s), r));
                            asyncDone.countDown();
                        }

                        @Override
                        public void onException(Throwable e) {
                            asyncErrors.add(new AssertionError("async send of idx=" + s.idx + " failed", e));
                            asyncDone.countDown();
                        }
                    });
                }
                case ONEWAY -> {
                    Message m = s.toMessage();
                    p.sendOneway(m);
                    s.uniqKey = m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
                }
                case BATCH -> {
                    batch.add(s);
                    if (batch.size() == BATCH_SIZE) {
                        sendBatch(p, batch);
                        batch = new ArrayList<>();
                    }
                }
                default -> fail("unknown mode " + mode);
            }
        }
        if (!batch.isEmpty()) {
            sendBatch(p, batch);
        }
        if (!asyncDone.await(60, TimeUnit.SECONDS)) {
            fail("async sends: " + asyncDone.getCount() + " of " + asyncCount + " callbacks missing after 60 s");
        }
        if (!asyncErrors.isEmpty()) {
            AssertionError e = new AssertionError(asyncErrors.size() + " async sends failed; first: " + asyncErrors.get(0));
            asyncErrors.forEach(e::addSuppressed);
            throw e;
        }
        return this;
    }

    private void sendBatch(DefaultMQProducer p, List<Spec> specs) throws Exception {
        List<Message> msgs = new ArrayList<>();
        for (Spec s : specs) {
            msgs.add(s.toMessage());
        }
        SendResult r = p.send(msgs);
        for (int i = 0; i < specs.size(); i++) {
            specs.get(i).uniqKey = msgs.get(i).getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
        }
        results.add(new Result(Mode.BATCH, List.copyOf(specs), r));
    }

    /** Sends specs one by one, synchronously, asserting SEND_OK; the quick way for scenarios that consume. */
    static void sendAllSync(DefaultMQProducer p, List<Spec> specs) throws Exception {
        for (Spec s : specs) {
            Message m = s.toMessage();
            SendResult r = p.send(m);
            assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send of idx=" + s.idx + ": " + r);
            s.uniqKey = m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
            assertTrue(s.uniqKey != null && !s.uniqKey.isEmpty(), "producer stamped no UNIQ_KEY on idx=" + s.idx);
        }
    }
}
