package org.popshim.interop;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.AckCallback;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.PopCallback;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.mqclient.DoNothingClientRemotingProcessor;
import org.apache.rocketmq.common.constant.ConsumeInitMode;
import org.apache.rocketmq.common.filter.ExpressionType;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ChangeInvisibleTimeRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;

/**
 * The Java client's raw POP API ({@link MQClientAPIImpl}: popMessageAsync, ackMessageAsync,
 * changeInvisibleTimeAsync, batchAckMessageAsync) against popshim's broker address, with the callbacks
 * turned into blocking calls. Headers are filled the way DefaultMQPushConsumerImpl fills them.
 */
final class DirectApi implements AutoCloseable {
    private static final long RPC_TIMEOUT_MS = 10_000;

    final MQClientAPIImpl api;
    final String brokerName;
    final String brokerAddr;

    private DirectApi(MQClientAPIImpl api, String brokerName, String brokerAddr) {
        this.api = api;
        this.brokerName = brokerName;
        this.brokerAddr = brokerAddr;
    }

    /** Connects and looks up {@code topic}'s route on popshim's name server to learn the broker name and address. */
    static DirectApi connect(Popshim shim, String topic, RPCHook hook) throws Exception {
        ClientConfig cc = new ClientConfig();
        cc.setNamesrvAddr(shim.namesrvAddr());
        MQClientAPIImpl api = new MQClientAPIImpl(new NettyClientConfig(), new DoNothingClientRemotingProcessor(null), hook, cc);
        api.start();
        api.updateNameServerAddressList(shim.namesrvAddr());
        TopicRouteData route = api.getTopicRouteInfoFromNameServer(topic, RPC_TIMEOUT_MS);
        if (route == null || route.getBrokerDatas() == null || route.getBrokerDatas().isEmpty()) {
            api.shutdown();
            throw new AssertionError("no broker in the route of " + topic + ": " + route);
        }
        BrokerData bd = route.getBrokerDatas().get(0);
        String addr = bd.getBrokerAddrs().get(0L);
        if (addr == null) {
            api.shutdown();
            throw new AssertionError("route of " + topic + " has no master (id 0) address: " + route);
        }
        return new DirectApi(api, bd.getBrokerName(), addr);
    }

    /** POP_MESSAGE with queueId -1 (all queues), TAG expression {@code exp}, initMode MIN. */
    PopResult pop(String group, String topic, int max, long invisibleMs, long pollMs, String exp) throws Exception {
        return pop(group, topic, max, invisibleMs, pollMs, exp, false, null);
    }

    /**
     * POP_MESSAGE as above; {@code order} asks for an orderly (FIFO) POP with {@code attemptId} (null: none).
     * The client sets each orderly message's reconsumeTimes from the reply's orderCountInfo.
     */
    PopResult pop(String group, String topic, int max, long invisibleMs, long pollMs, String exp, boolean order,
                  String attemptId) throws Exception {
        PopMessageRequestHeader h = new PopMessageRequestHeader();
        h.setOrder(order);
        h.setAttemptId(attemptId);
        h.setConsumerGroup(group);
        h.setTopic(topic);
        h.setQueueId(-1);
        h.setMaxMsgNums(max);
        h.setInvisibleTime(invisibleMs);
        h.setPollTime(pollMs);
        h.setBornTime(System.currentTimeMillis());
        h.setInitMode(ConsumeInitMode.MIN);
        h.setExpType(ExpressionType.TAG);
        h.setExp(exp);
        h.setBrokerName(brokerName);
        CompletableFuture<PopResult> f = new CompletableFuture<>();
        api.popMessageAsync(brokerName, brokerAddr, h, pollMs + RPC_TIMEOUT_MS, new PopCallback() {
            @Override
            public void onSuccess(PopResult r) {
                f.complete(r);
            }

            @Override
            public void onException(Throwable e) {
                f.completeExceptionally(e);
            }
        });
        return f.get(pollMs + 2 * RPC_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    /** ACK_MESSAGE for one handle; topic is the original topic, the real one is derived from the handle. */
    AckResult ack(String group, String topic, String handle) throws Exception {
        String[] f = ExtraInfoUtil.split(handle);
        AckMessageRequestHeader h = new AckMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(ExtraInfoUtil.getRealTopic(f, topic, group));
        h.setQueueId(ExtraInfoUtil.getQueueId(f));
        h.setOffset(ExtraInfoUtil.getQueueOffset(f));
        h.setExtraInfo(handle);
        h.setBrokerName(ExtraInfoUtil.getBrokerName(f));
        CompletableFuture<AckResult> out = new CompletableFuture<>();
        api.ackMessageAsync(brokerAddr, RPC_TIMEOUT_MS, callback(out), h);
        return out.get(2 * RPC_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    /** CHANGE_MESSAGE_INVISIBLETIME for one handle; the result's extraInfo is the new handle. */
    AckResult change(String group, String topic, String handle, long invisibleMs) throws Exception {
        String[] f = ExtraInfoUtil.split(handle);
        ChangeInvisibleTimeRequestHeader h = new ChangeInvisibleTimeRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(ExtraInfoUtil.getRealTopic(f, topic, group));
        h.setQueueId(ExtraInfoUtil.getQueueId(f));
        h.setOffset(ExtraInfoUtil.getQueueOffset(f));
        h.setExtraInfo(handle);
        h.setInvisibleTime(invisibleMs);
        h.setBrokerName(ExtraInfoUtil.getBrokerName(f));
        CompletableFuture<AckResult> out = new CompletableFuture<>();
        api.changeInvisibleTimeAsync(ExtraInfoUtil.getBrokerName(f), brokerAddr, h, RPC_TIMEOUT_MS, callback(out));
        return out.get(2 * RPC_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    /** BATCH_ACK_MESSAGE for several handles of the original topic {@code topic}. */
    AckResult batchAck(String group, String topic, List<String> handles) throws Exception {
        CompletableFuture<AckResult> out = new CompletableFuture<>();
        api.batchAckMessageAsync(brokerAddr, RPC_TIMEOUT_MS, callback(out), topic, group, handles);
        return out.get(2 * RPC_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private static AckCallback callback(CompletableFuture<AckResult> out) {
        return new AckCallback() {
            @Override
            public void onSuccess(AckResult r) {
                out.complete(r);
            }

            @Override
            public void onException(Throwable e) {
                out.completeExceptionally(e);
            }
        };
    }

    @Override
    public void close() {
        api.shutdown();
    }
}
