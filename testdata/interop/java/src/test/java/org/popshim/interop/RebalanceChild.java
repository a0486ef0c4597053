package org.popshim.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * One push consumer in a JVM of its own, for {@link S16RebalanceNotifyTest}: a DefaultMQPushConsumer in PULL
 * mode (client-side rebalance) with a concurrent listener, whose allocation strategy is
 * AllocateMessageQueueAveragely wrapped to report each result. The test starts this JVM with
 * rocketmq.client.rebalance.waitInterval at one hour, so after its start the client rebalances only when the
 * broker sends NOTIFY_CONSUMER_IDS_CHANGED (40). Arguments: name-server address, consumer group, topic,
 * instance name. Reports on stdout, one line each, flushed at once:
 *
 * <pre>
 *   READY clientId
 *   ALLOC topic consumers queues     (each allocation of a topic: the group's size, this client's queue count)
 *   NOTIFY consumerGroup             (each NOTIFY_CONSUMER_IDS_CHANGED received, seen by the RPC hook)
 *   STOPPED                          (after "stop" on stdin and a graceful shutdown)
 * </pre>
 */
public final class RebalanceChild {
    private RebalanceChild() {
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String group = args[1];
        String topic = args[2];
        String instance = args[3];
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, new RPCHook() {
            @Override
            public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
                // the remoting layer runs the hooks on requests it receives as well; clients never send 40
                if (request.getCode() == 40) {
                    line(out, "NOTIFY " + request.getExtFields().get("consumerGroup"));
                }
            }

            @Override
            public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            }
        });
        c.setNamesrvAddr(namesrv);
        c.setInstanceName(instance);
        c.subscribe(topic, "*");
        AllocateMessageQueueStrategy avg = new AllocateMessageQueueAveragely();
        c.setAllocateMessageQueueStrategy(new AllocateMessageQueueStrategy() {
            @Override
            public List<MessageQueue> allocate(String consumerGroup, String currentCID, List<MessageQueue> mqAll,
                List<String> cidAll) {
                List<MessageQueue> mine = avg.allocate(consumerGroup, currentCID, mqAll, cidAll);
                if (!mqAll.isEmpty() && mqAll.get(0).getTopic().equals(topic)) {
                    line(out, "ALLOC " + topic + " " + cidAll.size() + " " + mine.size());
                }
                return mine;
            }

            @Override
            public String getName() {
                return avg.getName();
            }
        });
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
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
