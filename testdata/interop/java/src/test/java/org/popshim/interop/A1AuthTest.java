package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.AckStatus;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.CommunicationMode;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.mqclient.DoNothingClientRemotingProcessor;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.body.AclInfo;
import org.apache.rocketmq.remoting.protocol.body.UserInfo;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.junit.jupiter.api.Test;

/**
 * Authentication: popshim with {@code --auth-enabled} and clients signing with the real {@link AclClientRPCHook}
 * (rocketmq-client 5.5.0). A super user from the flags creates a normal user and its ACL through the
 * client's AUTH_CREATE_USER / AUTH_CREATE_ACL calls; with the right secret that user produces, POPs,
 * CHANGEs and ACKs, with or without a SecurityToken. A wrong secret, no signature, an unknown user, a
 * topic or a group the ACL does not grant are refused with NO_PERMISSION (16), and nothing is produced or
 * consumed by them.
 */
class A1AuthTest extends InteropBase {
    static final String ADMIN = "interop-admin";
    static final String ADMIN_SECRET = "interop-admin-secret";
    static final String USER = "interop-app";
    static final String USER_SECRET = "interop-app-secret";
    static final int NO_PERMISSION = 16;
    static final long RPC_MS = 10_000;

    @Override
    protected List<String> popshimArgs() {
        return List.of("--auth-enabled", "--auth-admin-user", ADMIN, "--auth-admin-password", ADMIN_SECRET);
    }

    /** The credentials hook, then the wire log (which records what the hook added). */
    RPCHook signing(SessionCredentials creds) {
        AclClientRPCHook acl = new AclClientRPCHook(creds);
        return new RPCHook() {
            @Override
            public void doBeforeRequest(String addr, RemotingCommand req) {
                acl.doBeforeRequest(addr, req);
                wire.doBeforeRequest(addr, req);
            }

            @Override
            public void doAfterResponse(String addr, RemotingCommand req, RemotingCommand resp) {
                wire.doAfterResponse(addr, req, resp);
            }
        };
    }

    MQClientAPIImpl rawApi(RPCHook hook) throws Exception {
        ClientConfig cc = new ClientConfig();
        cc.setNamesrvAddr(shim.namesrvAddr());
        MQClientAPIImpl api = new MQClientAPIImpl(new NettyClientConfig(), new DoNothingClientRemotingProcessor(null), hook, cc);
        api.start();
        api.updateNameServerAddressList(shim.namesrvAddr());
        return api;
    }

    SendResult rawSend(MQClientAPIImpl api, String topic, String body) throws Exception {
        SendMessageRequestHeader h = new SendMessageRequestHeader();
        h.setProducerGroup("a1_pg");
        h.setTopic(topic);
        h.setDefaultTopic("TBW102");
        h.setDefaultTopicQueueNums(4);
        h.setQueueId(0);
        h.setSysFlag(0);
        h.setBornTimestamp(System.currentTimeMillis());
        h.setFlag(0);
        h.setBname("");
        Message m = new Message(topic, body.getBytes(StandardCharsets.UTF_8));
        return api.sendMessage(shim.brokerAddr(), "", m, h, RPC_MS, CommunicationMode.SYNC, null, null);
    }

    static int brokerCode(Throwable e) {
        Throwable t = e instanceof ExecutionException ? e.getCause() : e;
        if (t instanceof MQBrokerException) {
            return ((MQBrokerException) t).getResponseCode();
        }
        if (t instanceof MQClientException) {
            return ((MQClientException) t).getResponseCode();
        }
        throw new AssertionError("not a broker refusal: " + t, t);
    }

    @Test
    void signedClientsWorkAndOthersAreRefused() throws Exception {
        String topic = unique("a1");
        String denied = unique("a1_denied");
        String group = unique("a1_cg");
        String deniedGroup = unique("a1_cg_denied");
        MQClientAPIImpl admin = rawApi(signing(new SessionCredentials(ADMIN, ADMIN_SECRET)));
        try {
            for (String t : List.of(topic, denied)) {
                admin.createTopic(shim.brokerAddr(), "TBW102", new TopicConfig(t, 1, 1, 6), RPC_MS);
            }
            admin.createUser(shim.brokerAddr(), UserInfo.of(USER, USER_SECRET, "Normal"), RPC_MS);
            admin.createAcl(shim.brokerAddr(), AclInfo.of("User:" + USER, List.of("Topic:" + topic, "Group:" + group),
                List.of("Pub", "Sub"), List.of(), "Allow"), RPC_MS);

            // Right secret: produce with the real producer, then POP, CHANGE, ACK.
            DefaultMQProducer p = track(Sending.producer(shim, unique("a1_pg"), signing(new SessionCredentials(USER, USER_SECRET))));
            for (int i = 0; i < 3; i++) {
                SendResult r = p.send(new Message(topic, "TagA", ("a1-" + i).getBytes(StandardCharsets.UTF_8)));
                assertEquals(SendStatus.SEND_OK, r.getSendStatus(), diag());
            }
            // With a SecurityToken: it is signed too, and accepted.
            try (DirectApi api = DirectApi.connect(shim, topic, signing(new SessionCredentials(USER, USER_SECRET, "token-1")))) {
                PopResult r = api.pop(group, topic, 32, 60_000, 2_000, "*");
                assertEquals(PopStatus.FOUND, r.getPopStatus(), diag());
                assertEquals(3, r.getMsgFoundList().size(), diag());
                MessageExt first = r.getMsgFoundList().get(0);
                String handle = first.getProperty("POP_CK");
                AckResult changed = api.change(group, topic, handle, 30_000);
                assertEquals(AckStatus.OK, changed.getStatus(), diag());
                assertEquals(AckStatus.OK, api.ack(group, topic, changed.getExtraInfo()).getStatus(), diag());
                for (MessageExt m : r.getMsgFoundList().subList(1, 3)) {
                    assertEquals(AckStatus.OK, api.ack(group, topic, m.getProperty("POP_CK")).getStatus(), diag());
                }
                // A group the ACL does not grant: POP and ACK refused.
                ExecutionException e = assertThrows(ExecutionException.class, () -> api.pop(deniedGroup, topic, 32, 60_000, 0, "*"));
                assertEquals(NO_PERMISSION, brokerCode(e), diag());
                // The client turns a refused ACK into status NO_EXIST; the wire shows popshim's code.
                assertEquals(AckStatus.NO_EXIST, api.ack(deniedGroup, topic, handle).getStatus(), diag());
                List<WireLog.Exchange> acks = wire.of(ACK_MESSAGE, x -> deniedGroup.equals(x.req("consumerGroup")));
                assertEquals(1, acks.size(), diag());
                assertEquals(NO_PERMISSION, acks.get(0).responseCode(), diag());
                assertTrue(acks.get(0).remark().contains("Group:" + deniedGroup + " from 127.0.0.1, no matched policies."), acks.get(0).remark());
            }

            // A topic the ACL does not grant, wrong secret, unknown user, no signature: all refused.
            MQClientAPIImpl app = rawApi(signing(new SessionCredentials(USER, USER_SECRET)));
            MQClientAPIImpl wrong = rawApi(signing(new SessionCredentials(USER, "not-the-secret")));
            MQClientAPIImpl ghost = rawApi(signing(new SessionCredentials("nobody-here", USER_SECRET)));
            MQClientAPIImpl unsigned = rawApi(wire);
            try {
                MQBrokerException be = assertThrows(MQBrokerException.class, () -> rawSend(app, denied, "x"));
                assertEquals(NO_PERMISSION, be.getResponseCode());
                assertTrue(be.getErrorMessage().contains("no permission to access Topic:" + denied), be.getErrorMessage());
                be = assertThrows(MQBrokerException.class, () -> rawSend(wrong, topic, "x"));
                assertEquals(NO_PERMISSION, be.getResponseCode());
                assertEquals("check signature failed.", be.getErrorMessage());
                be = assertThrows(MQBrokerException.class, () -> rawSend(ghost, topic, "x"));
                assertEquals(NO_PERMISSION, be.getResponseCode());
                assertEquals("User:nobody-here is not found.", be.getErrorMessage());
                be = assertThrows(MQBrokerException.class, () -> rawSend(unsigned, topic, "x"));
                assertEquals(NO_PERMISSION, be.getResponseCode());
                assertEquals("username cannot be null.", be.getErrorMessage());
                // The name-server port refuses too.
                MQClientException ce = assertThrows(MQClientException.class, () -> wrong.getTopicRouteInfoFromNameServer(topic, RPC_MS));
                assertEquals(NO_PERMISSION, ce.getResponseCode());
            } finally {
                app.shutdown();
                wrong.shutdown();
                ghost.shutdown();
                unsigned.shutdown();
            }
            // Nothing was produced by the refused sends.
            assertEquals(3, admin.getMaxOffset(shim.brokerAddr(), new MessageQueue(topic, "", 0), RPC_MS), diag());
            assertEquals(0, admin.getMaxOffset(shim.brokerAddr(), new MessageQueue(denied, "", 0), RPC_MS), diag());
        } finally {
            admin.shutdown();
        }
    }
}
