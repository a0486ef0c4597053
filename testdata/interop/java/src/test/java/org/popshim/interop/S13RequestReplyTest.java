package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.exception.RequestTimeoutException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.RequestCallback;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.junit.jupiter.api.Test;

/**
 * Scenario 13: request-reply. A requester's {@code DefaultMQProducer.request()} sends a message to a topic a
 * POP push consumer consumes; the consumer answers each one with {@code MessageUtil.createReplyMessage} sent by
 * its own producer (SEND_REPLY_MESSAGE_V2, 325); popshim pushes the reply to the requester's connection
 * (PUSH_REPLY_MESSAGE_TO_CLIENT, 326) and {@code request()} returns it. Sync and async requests; a reply whose
 * requester is unknown is refused with Java's remark.
 */
class S13RequestReplyTest extends InteropBase {
    static final int SEND_REPLY_MESSAGE_V2 = 325;

    @Test
    void requestGetsTheConsumersReply() throws Exception {
        String topic = unique("s13");
        DefaultMQProducer requester = track(Sending.producer(shim, unique("s13_req"), wire));
        DefaultMQProducer replier = track(Sending.producer(shim, unique("s13_rep"), wire));
        // An ordinary first message creates the topic (TBW102 fallback) and proves the consumer is live.
        requester.send(new Message(topic, "warm", "warm".getBytes(StandardCharsets.UTF_8)));

        AtomicInteger replyFailures = new AtomicInteger();
        Received got = new Received();
        track(got.start(shim, unique("s13_cg"), topic, "*", 15_000, wire, m -> {
            if (m.getProperty(MessageConst.PROPERTY_CORRELATION_ID) == null) {
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS; // the warm-up message
            }
            try {
                String body = new String(m.getBody(), StandardCharsets.UTF_8);
                Message reply = MessageUtil.createReplyMessage(m, ("re:" + body).getBytes(StandardCharsets.UTF_8));
                reply.putUserProperty("answeredBy", "s13");
                replier.send(reply);
            } catch (Exception e) {
                replyFailures.incrementAndGet();
                e.printStackTrace();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }));
        Received.await("the warm-up message", Duration.ofSeconds(60), () -> !got.foreign.isEmpty(), this::diag);

        for (int i = 0; i < 5; i++) {
            Message req = new Message(topic, "req", ("ping-" + i).getBytes(StandardCharsets.UTF_8));
            Message answer;
            try {
                answer = requester.request(req, 20_000);
            } catch (RequestTimeoutException e) {
                throw new AssertionError("request " + i + " got no reply; " + diag(), e);
            }
            assertNotNull(answer, "request " + i + " returned null; " + diag());
            assertEquals("re:ping-" + i, new String(answer.getBody(), StandardCharsets.UTF_8), diag());
            assertEquals("s13", answer.getUserProperty("answeredBy"));
            assertEquals(req.getProperty(MessageConst.PROPERTY_CORRELATION_ID),
                answer.getProperty(MessageConst.PROPERTY_CORRELATION_ID));
            assertNotNull(answer.getProperty(MessageConst.PROPERTY_PUSH_REPLY_TIME), "PUSH_REPLY_TIME set by the broker");
        }

        CompletableFuture<Message> async = new CompletableFuture<>();
        requester.request(new Message(topic, "req", "ping-async".getBytes(StandardCharsets.UTF_8)), new RequestCallback() {
            @Override
            public void onSuccess(Message message) {
                // The 5.5 client calls onSuccess(null) once the request is sent (executeRequestCallback
                // before any reply), then again with the reply.
                if (message != null) {
                    async.complete(message);
                }
            }

            @Override
            public void onException(Throwable e) {
                async.completeExceptionally(e);
            }
        }, 20_000);
        assertEquals("re:ping-async", new String(async.get(30, TimeUnit.SECONDS).getBody(), StandardCharsets.UTF_8));
        assertEquals(0, replyFailures.get(), "replier sends failed; " + diag());

        // The requester has its reply before the replier has popshim's answer (push first): wait for it.
        Received.await("the replier's six answers", Duration.ofSeconds(30),
            () -> wire.of(SEND_REPLY_MESSAGE_V2).size() >= 6, this::diag);
        List<WireLog.Exchange> replies = wire.of(SEND_REPLY_MESSAGE_V2);
        for (WireLog.Exchange x : replies) {
            assertEquals(SUCCESS, x.responseCode(), x.toString());
            assertNotEquals("0", x.resp("msgId"), "the reply was stored: " + x);
        }

        // A reply for a requester popshim does not know: Java's SYSTEM_ERROR and remark.
        Message orphan = new Message(topic, "req", "lost".getBytes(StandardCharsets.UTF_8));
        MessageAccessor.putProperty(orphan, MessageConst.PROPERTY_CLUSTER, "DefaultCluster");
        MessageAccessor.putProperty(orphan, MessageConst.PROPERTY_CORRELATION_ID, "no-such-request");
        MessageAccessor.putProperty(orphan, MessageConst.PROPERTY_MESSAGE_REPLY_TO_CLIENT, "127.0.0.1@nobody");
        Message lost = MessageUtil.createReplyMessage(orphan, "x".getBytes(StandardCharsets.UTF_8));
        lost.setTopic(replies.get(0).req("b"));
        try {
            replier.send(lost);
            throw new AssertionError("a reply to an unknown requester was accepted");
        } catch (MQClientException e) {
            // SYSTEM_ERROR is one of the producer's retry codes: after its retries it wraps the broker's answer
            assertEquals(1, e.getResponseCode(), String.valueOf(e));
            assertTrue(e.getCause() instanceof MQBrokerException, String.valueOf(e));
            assertEquals("push reply message fail, channel of <127.0.0.1@nobody> not found.",
                ((MQBrokerException) e.getCause()).getErrorMessage());
        }
    }
}
