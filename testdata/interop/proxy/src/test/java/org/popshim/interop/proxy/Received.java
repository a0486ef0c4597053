package org.popshim.interop.proxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;

/** Deliveries seen by v5 consumers, keyed by message id. */
final class Received {
    /** One delivery: the view (holds the receipt handle) and when it arrived. */
    record Delivery(MessageView view, long atMillis) {
        int attempt() {
            return view.getDeliveryAttempt();
        }
    }

    final Map<String, List<Delivery>> byId = new ConcurrentHashMap<>();
    final ConcurrentLinkedQueue<Delivery> all = new ConcurrentLinkedQueue<>();

    void add(MessageView v) {
        Delivery d = new Delivery(v, System.currentTimeMillis());
        byId.computeIfAbsent(v.getMessageId().toString(), k -> java.util.Collections.synchronizedList(new ArrayList<>()))
            .add(d);
        all.add(d);
    }

    int distinct() {
        return byId.size();
    }

    List<Delivery> of(String id) {
        List<Delivery> l = byId.get(id);
        return l == null ? List.of() : List.copyOf(l);
    }

    /** Ids delivered more than once, with their delivery attempts. */
    Map<String, List<Integer>> repeated() {
        Map<String, List<Integer>> out = new LinkedHashMap<>();
        byId.forEach((id, l) -> {
            if (l.size() > 1) {
                out.put(id, of(id).stream().map(Delivery::attempt).toList());
            }
        });
        return out;
    }

    /**
     * Receives from {@code c} (up to 16 at a time, {@code invisible} each) until {@code done} holds or
     * {@code timeout} passes; every view received is added and handed to {@code each}. Returns the views
     * received by this call.
     */
    List<MessageView> receiveUntil(SimpleConsumer c, Duration invisible, Duration timeout,
                                   java.util.function.BooleanSupplier done, Each each) throws Exception {
        List<MessageView> got = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            List<MessageView> batch;
            try {
                batch = c.receive(16, invisible);
            } catch (org.apache.rocketmq.client.apis.ClientException e) {
                // an empty long poll is reported as an exception by some client versions (MESSAGE_NOT_FOUND)
                if (String.valueOf(e.getMessage()).contains("MESSAGE_NOT_FOUND") || e.getClass().getSimpleName().contains("NotFound")) {
                    continue;
                }
                throw e;
            }
            for (MessageView v : batch) {
                add(v);
                got.add(v);
                each.accept(v);
            }
        }
        return got;
    }

    @FunctionalInterface
    interface Each {
        void accept(MessageView v) throws Exception;
    }
}
