package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * What one test message must look like, independent of how it was sent. Built deterministically from an
 * index so that a consumed message can be checked field by field against what the producer sent.
 */
final class Spec {
    /** Size of the one large body; above the producer's 4 KiB compressMsgBodyOverHowmuch, so it is compressed. */
    static final int BIG_BODY_BYTES = 8 * 1024 + 123;
    /** Index of the message with the large body (sent synchronously, since batches are never compressed). */
    static final int BIG_INDEX = 7;

    final int idx;
    final String topic;
    final String tags;
    final List<String> keys;
    final Map<String, String> props;
    final byte[] body;
    /** UNIQ_KEY the producer stamped on the message; set after sending. */
    volatile String uniqKey;

    private Spec(int idx, String topic, String tags, List<String> keys, Map<String, String> props, byte[] body) {
        this.idx = idx;
        this.topic = topic;
        this.tags = tags;
        this.keys = keys;
        this.props = props;
        this.body = body;
    }

    /**
     * {@code n} messages for {@code topic}: tags TagA..TagD round robin, two keys each, four user properties
     * (one non-ASCII) and a body naming the run; message {@link #BIG_INDEX} has a large compressible body.
     */
    static List<Spec> generate(String topic, int n) {
        List<String> tags = List.of("TagA", "TagB", "TagC", "TagD");
        List<Spec> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(make(topic, i, tags.get(i % tags.size())));
        }
        return out;
    }

    /** One message with the given tag (null means no tag). */
    static Spec make(String topic, int i, String tag) {
        Map<String, String> props = new LinkedHashMap<>();
        props.put("idx", Integer.toString(i));
        props.put("run", topic);
        props.put("color", List.of("red", "green", "blue").get(i % 3));
        props.put("note", "h\u00e9llo w\u00f6rld \u03bb-" + i);
        byte[] body;
        if (i == BIG_INDEX) {
            StringBuilder sb = new StringBuilder();
            while (sb.length() < BIG_BODY_BYTES) {
                sb.append("big body of ").append(topic).append(" #").append(i).append(' ').append(sb.length()).append('\n');
            }
            body = sb.substring(0, BIG_BODY_BYTES).getBytes(StandardCharsets.UTF_8);
        } else {
            body = ("body " + i + " of " + topic + " " + "x".repeat(i % 97)).getBytes(StandardCharsets.UTF_8);
        }
        return new Spec(i, topic, tag, List.of("k-" + i, "alt-" + i), props, body);
    }

    /** A fresh client Message carrying this spec. */
    Message toMessage() {
        Message m = new Message(topic, tags, null, body);
        m.setKeys(keys);
        props.forEach(m::putUserProperty);
        return m;
    }

    /** Index carried by a consumed message, or -1 if it has none. */
    static int indexOf(MessageExt m) {
        String v = m.getUserProperty("idx");
        return v == null ? -1 : Integer.parseInt(v);
    }

    /** One-line description of a consumed message without its body, for failure messages. */
    static String describe(MessageExt m) {
        if (m == null) {
            return "null";
        }
        return "{topic=" + m.getTopic() + " queueId=" + m.getQueueId() + " queueOffset=" + m.getQueueOffset()
            + " sysFlag=" + m.getSysFlag() + " reconsumeTimes=" + m.getReconsumeTimes() + " bodyLen="
            + (m.getBody() == null ? -1 : m.getBody().length) + " props=" + m.getProperties() + "}";
    }

    /** Asserts that a consumed message carries exactly what was sent. */
    void assertMatches(MessageExt m) {
        String where = "message idx=" + idx + " " + describe(m);
        assertEquals(topic, m.getTopic(), "topic of " + where);
        assertArrayEquals(body, m.getBody(), "body of " + where);
        assertEquals(tags, m.getTags(), "tags of " + where);
        assertEquals(String.join(MessageConst.KEY_SEPARATOR, keys), m.getKeys(), "keys of " + where);
        props.forEach((k, v) -> assertEquals(v, m.getUserProperty(k), "user property " + k + " of " + where));
        if (uniqKey != null) {
            assertEquals(uniqKey, m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
                "UNIQ_KEY of " + where);
        }
    }
}
