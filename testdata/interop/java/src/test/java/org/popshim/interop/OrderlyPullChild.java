package org.popshim.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.body.LockBatchRequestBody;
import org.apache.rocketmq.remoting.protocol.body.LockBatchResponseBody;

/**
 * One orderly push consumer in a JVM of its own, for {@link S15OrderlyPullTest}: a DefaultMQPushConsumer
 * in PULL mode (client-side rebalance, the default) with a MessageListenerOrderly, so that the test can kill
 * it with SIGKILL like a crashed process. Arguments: name-server address, consumer group, topic, instance
 * name. It reports on stdout, one line each, flushed at once:
 *
 * <pre>
 *   READY clientId
 *   MSG queueId key idx reconsumeTimes startMillis endMillis   (one per message, after the listener saw it)
 *   LOCK responseCode asked granted                            (each LOCK_BATCH_MQ answer)
 *   UNLOCK asked                                               (each UNLOCK_BATCH_MQ sent; oneway)
 *   STOPPED                                                    (after "stop" on stdin and a graceful shutdown)
 * </pre>
 *
 * The test's JVM properties make the client renew its locks every second and rebalance every two seconds
 * (rocketmq.client.rebalance.lockInterval, .lockMaxLiveTime, .waitInterval).
 */
public final class OrderlyPullChild {
    private OrderlyPullChild() {
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String group = args[1];
        String topic = args[2];
        String instance = args[3];
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        RPCHook hook = new RPCHook() {
            @Override
            public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
                if (request.getCode() == 42 && request.getBody() != null) {
                    LockBatchRequestBody b = LockBatchRequestBody.decode(request.getBody(), LockBatchRequestBody.class);
                    line(out, "UNLOCK " + b.getMqSet().size());
                }
            }

            @Override
            public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
                if (request.getCode() != 41 || response == null) {
                    return;
                }
                int asked = LockBatchRequestBody.decode(request.getBody(), LockBatchRequestBody.class).getMqSet().size();
                int granted = -1;
                if (response.getBody() != null) {
                    granted = LockBatchResponseBody.decode(response.getBody(), LockBatchResponseBody.class).getLockOKMQSet().size();
                }
                line(out, "LOCK " + response.getCode() + " " + asked + " " + granted);
            }
        };
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, hook);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName(instance);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setConsumeThreadMin(4);
        c.setConsumeThreadMax(4);
        c.setPullBatchSize(16);
        c.setAwaitTerminationMillisWhenShutdown(5_000);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
            long start = System.currentTimeMillis();
            StringBuilder sb = new StringBuilder();
            for (MessageExt m : msgs) {
                sb.append("MSG ").append(m.getQueueId()).append(' ').append(m.getUserProperty("k")).append(' ')
                    .append(m.getUserProperty("i")).append(' ').append(m.getReconsumeTimes()).append(' ')
                    .append(start).append(" END\n");
            }
            String lines = sb.toString().replace("END", Long.toString(System.currentTimeMillis()));
            synchronized (out) {
                out.print(lines);
                out.flush();
            }
            return ConsumeOrderlyStatus.SUCCESS;
        });
        c.start();
        line(out, "READY " + c.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String cmd;
        while ((cmd = in.readLine()) != null) {
            if (cmd.trim().equals("stop")) {
                break;
            }
        }
        c.shutdown();
        line(out, "STOPPED");
        System.exit(0);
    }

    private static void line(PrintStream out, String s) {
        synchronized (out) {
            out.println(s);
            out.flush();
        }
    }
}
