// The live Java consumer of the interop mqadmin suite (mqadmin_test.sh M26–M27): a DefaultMQPushConsumer of
// org.apache.rocketmq:rocketmq-client (from the rocketmq-tools jars mqadmin runs on), PULL mode with a
// concurrent listener, so that mqadmin's consumerStatus (GET_CONSUMER_RUNNING_INFO) and queryMsgById -g -d
// (CONSUME_MESSAGE_DIRECTLY) reach a real client through popshim. Run as a single-file source program:
//
//   java -cp "$(rmq_lib tools)/*" LiveConsumer.java NAMESRV GROUP TOPIC
//
// It prints "ready CLIENTID" once started, then "consumed MSGID BODY" for every message its listener sees
// (a CONSUME_MESSAGE_DIRECTLY runs the same listener), and shuts down gracefully when stdin closes.
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

public final class LiveConsumer {
    public static void main(String[] args) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(args[1]);
        c.setNamesrvAddr(args[0]);
        c.setInstanceName("live-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(args[2], "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                System.out.println("consumed " + m.getMsgId() + " " + new String(m.getBody(), StandardCharsets.UTF_8));
            }
            System.out.flush();
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        System.out.println("ready " + c.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId());
        System.out.flush();
        InputStream in = System.in;
        while (in.read() >= 0) {
            // run until stdin closes
        }
        c.shutdown();
        System.exit(0);
    }
}
