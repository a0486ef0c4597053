package org.popshim.interop;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Client-side record of every request the RocketMQ client sent and the response it got, taken through the
 * client's own {@link RPCHook}. Tests use it to prove which protocol path was used (ACK_MESSAGE vs
 * CHANGE_MESSAGE_INVISIBLETIME, what POP responses carried) without relying on popshim's metrics.
 */
final class WireLog implements RPCHook {
    /** One completed request/response exchange; fields are copies, safe to keep. */
    record Exchange(String addr, int code, Map<String, String> request, byte[] requestBody,
                    int responseCode, String remark, Map<String, String> response, byte[] responseBody) {
        String req(String name) {
            return request.get(name);
        }

        String resp(String name) {
            return response.get(name);
        }

        /** Messages in a POP or PULL response body, decoded the way the client does (no decompression). */
        List<MessageExt> messages() {
            if (responseBody == null || responseBody.length == 0) {
                return List.of();
            }
            return MessageDecoder.decodesBatch(ByteBuffer.wrap(responseBody), true, false, true);
        }

        @Override
        public String toString() {
            return "code=" + code + " to " + addr + " req=" + request + " bodyLen="
                + (requestBody == null ? 0 : requestBody.length) + " -> code=" + responseCode + " remark=" + remark
                + " resp=" + response;
        }
    }

    private final ConcurrentLinkedQueue<Exchange> exchanges = new ConcurrentLinkedQueue<>();
    private final Set<String> sentAckHandles = ConcurrentHashMap.newKeySet();

    @Override
    public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
        // Everything else is recorded with its response; ACK handles also when they leave, so a test can tell
        // "ack sent but its reply was lost" (popshim may have made it durable) from "never acked".
        if (request.getCode() == 200051) {
            String h = fields(request).get("extraInfo");
            if (h != null) {
                sentAckHandles.add(h);
            }
        }
    }

    /** extraInfo of every ACK_MESSAGE sent, answered or not. */
    boolean ackSent(String handle) {
        return handle != null && sentAckHandles.contains(handle);
    }

    @Override
    public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
        if (response == null) {
            return;
        }
        exchanges.add(new Exchange(remoteAddr, request.getCode(), fields(request), request.getBody(),
            response.getCode(), response.getRemark(), fields(response), response.getBody()));
    }

    /** All exchanges of one request code, in completion order. */
    List<Exchange> of(int code) {
        return exchanges.stream().filter(e -> e.code() == code).collect(Collectors.toList());
    }

    /** Exchanges of one request code that match a predicate. */
    List<Exchange> of(int code, Predicate<Exchange> p) {
        return of(code).stream().filter(p).collect(Collectors.toList());
    }

    /** Drops what was recorded so far. */
    void clear() {
        exchanges.clear();
        sentAckHandles.clear();
    }

    /** Short per-code summary "code:count(responseCode:count ...)" for failure messages. */
    String summary() {
        Map<Integer, Map<Integer, Integer>> byCode = new HashMap<>();
        for (Exchange e : exchanges) {
            byCode.computeIfAbsent(e.code(), k -> new HashMap<>()).merge(e.responseCode(), 1, Integer::sum);
        }
        return byCode.toString();
    }

    /**
     * Header fields as they went on the wire. The JSON encoder fills extFields from the custom header when
     * it encodes the frame, which has happened by the time a response arrives; the custom header object is
     * read as a fallback.
     */
    private static Map<String, String> fields(RemotingCommand cmd) {
        Map<String, String> out = new HashMap<>();
        if (cmd.getExtFields() != null) {
            out.putAll(cmd.getExtFields());
        }
        CommandCustomHeader h = cmd.readCustomHeader();
        if (h != null && out.isEmpty()) {
            for (Class<?> c = h.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                for (java.lang.reflect.Field f : c.getDeclaredFields()) {
                    if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                        continue;
                    }
                    try {
                        f.setAccessible(true);
                        Object v = f.get(h);
                        if (v != null) {
                            out.putIfAbsent(f.getName(), v.toString());
                        }
                    } catch (ReflectiveOperationException | RuntimeException ignored) {
                        // a field we cannot read is simply not recorded
                    }
                }
            }
        }
        return out;
    }

    /** Copy of every exchange so far. */
    List<Exchange> all() {
        return new ArrayList<>(exchanges);
    }
}
