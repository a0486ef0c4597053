package bench

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Request builders. Each returns a fresh JSON-header request the way the
// Java client sends it; the Client sets opaque and flag.

func newRequest(code int32) *codec.Command {
	return codec.NewRequest(code, 0, make(map[string]string, 12), nil)
}

// ackRequest is ACK_MESSAGE (200051) for r.
func ackRequest(group string, r *client.Receipt) *codec.Command {
	c := newRequest(codec.RequestAckMessage)
	codec.AckMessageRequestHeader{ConsumerGroup: group, Topic: r.Topic, QueueID: r.QueueID, Offset: r.Offset, ExtraInfo: r.ExtraInfo}.Encode(c)
	return c
}

// changeRequest is CHANGE_MESSAGE_INVISIBLETIME (200053) for r.
func changeRequest(group string, r *client.Receipt, invisible time.Duration) *codec.Command {
	c := newRequest(codec.RequestChangeMessageInvisibleTime)
	codec.ChangeInvisibleTimeRequestHeader{ConsumerGroup: group, Topic: r.Topic, QueueID: r.QueueID, Offset: r.Offset,
		ExtraInfo: r.ExtraInfo, InvisibleTime: invisible.Milliseconds()}.Encode(c)
	return c
}

// popRequest is POP_MESSAGE (200050) of one queue. bornTime is now: a Java
// broker answers POLLING_TIMEOUT when now - bornTime - pollTime > 500 ms.
func popRequest(group, topic string, queueID, maxMsgNums int32, invisible, poll time.Duration) *codec.Command {
	c := newRequest(codec.RequestPopMessage)
	codec.PopMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: queueID, MaxMsgNums: maxMsgNums,
		InvisibleTime: invisible.Milliseconds(), PollTime: poll.Milliseconds(), BornTime: time.Now().UnixMilli(),
		InitMode: codec.ConsumeInitModeMin, ExpType: "TAG", Exp: "*"}.Encode(c)
	return c
}

// sendRequest is SEND_MESSAGE_V2 (310) of body to (topic, queueID), with a
// UNIQ_KEY property as a producer sets it, then extraProps (a properties
// string, may be ""). body is shared, not copied.
func sendRequest(group, topic string, queueID int32, queues int, seq int64, body []byte, extraProps string) *codec.Command {
	c := newRequest(codec.RequestSendMessageV2)
	props := codec.PropertyUniqClientMessageIDKeyIdx + "\x01bench" + strconv.FormatInt(seq, 16) + "\x02" + extraProps
	codec.SendMessageRequestHeader{ProducerGroup: group, Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: int32(queues),
		QueueID: queueID, BornTimestamp: time.Now().UnixMilli(), Properties: props}.EncodeV2(c)
	c.Body = body
	return c
}

// keysProperty is a KEYS property of n space-separated keys derived from
// seq ("order-<seq>-<i>"), in properties-string form; "" when n is 0.
func keysProperty(seq int64, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(codec.PropertyKeys)
	b.WriteByte(codec.PropertyNameValueSeparator)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("order-")
		b.WriteString(strconv.FormatInt(seq, 16))
		b.WriteByte('-')
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteByte(codec.PropertySeparator)
	return b.String()
}

// sendBatchRequest is SEND_BATCH_MESSAGE (320) of n messages of body to
// (topic, queueID), each with its own UNIQ_KEY, as the Java producer sends
// a MessageBatch (header flag m=true, entries as MessageDecoder.encodeMessages).
func sendBatchRequest(group, topic string, queueID int32, queues int, seq int64, n int, body []byte) *codec.Command {
	c := newRequest(codec.RequestSendBatchMessage)
	codec.SendMessageRequestHeader{ProducerGroup: group, Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: int32(queues),
		QueueID: queueID, BornTimestamp: time.Now().UnixMilli(), Batch: true}.EncodeV2(c)
	buf := make([]byte, 0, n*(len(body)+64))
	for i := range n {
		m := codec.Message{Body: body, Properties: codec.PropertyUniqClientMessageIDKeyIdx + "\x01bench" +
			strconv.FormatInt(seq, 16) + "_" + strconv.Itoa(i) + "\x02"}
		buf, _ = codec.AppendBatchEntry(buf, &m) // cannot fail: short properties, small body
	}
	c.Body = buf
	return c
}

// createTopicRequest is UPDATE_AND_CREATE_TOPIC (17): queues read and write
// queues, perm read+write.
func createTopicRequest(topic string, queues int) *codec.Command {
	c := newRequest(codec.RequestUpdateAndCreateTopic)
	codec.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: int32(queues), WriteQueueNums: int32(queues),
		Perm: codec.PermRead | codec.PermWrite, TopicFilterType: codec.TopicFilterSingleTag}.Encode(c)
	return c
}

// heartbeatRequest is HEART_BEAT (34) of one client with one producer
// group and no consumers: the smallest heartbeat a real client sends, so
// the round trip measures the remoting path rather than consumer
// registration.
func heartbeatRequest(clientID, producerGroup string) *codec.Command {
	c := newRequest(codec.RequestHeartBeat)
	c.Body = codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: clientID,
		ProducerDataSet: []codec.ProducerData{{GroupName: producerGroup}}, ConsumerDataSet: []codec.ConsumerData{}})
	return c
}

// ackFrames holds the ACK_MESSAGE frame of every receipt, encoded before
// the measured phase (codec.AppendPreparedFrame) in one arena, so the ACK
// stream spends its CPU on sending rather than on JSON encoding: the broker
// receives the same bytes ackRequest would produce.
type ackFrames struct {
	arena []byte
	ends  []int // frame i is arena[ends[i-1]:ends[i]] (ends[-1] = 0)
	at    []int // opaque offset within frame i
}

// prepareAckFrames encodes the ACK of each receipt, passed through sign
// (Options.sign: adds AccessKey and Signature when set).
func prepareAckFrames(group string, receipts []client.Receipt, sign func(*codec.Command) *codec.Command) *ackFrames {
	f := &ackFrames{ends: make([]int, len(receipts)), at: make([]int, len(receipts))}
	if len(receipts) > 0 {
		one, _ := codec.AppendPreparedFrame(nil, sign(ackRequest(group, &receipts[0])))
		f.arena = make([]byte, 0, len(receipts)*(len(one)+16))
	}
	for i := range receipts {
		f.arena, f.at[i] = codec.AppendPreparedFrame(f.arena, sign(ackRequest(group, &receipts[i])))
		f.ends[i] = len(f.arena)
	}
	return f
}

// frame returns frame i and its opaque offset. Read-only: any goroutine.
func (f *ackFrames) frame(i int) ([]byte, int) {
	start := 0
	if i > 0 {
		start = f.ends[i-1]
	}
	return f.arena[start:f.ends[i]], f.at[i]
}

// randomPoolSize is the random byte pool message bodies are cut from with
// --random-body: large enough that two bodies stored next to each other
// (in one 4 KiB table block) almost never share bytes a compressor could
// match.
const randomPoolSize = 16 << 20

// bodies returns the body of message seq: one constant buffer by default,
// or with o.RandomBody a slice of a random pool at an offset that varies
// with seq (distinct, incompressible bodies without generating bytes per
// message). The returned slices are shared, never to be modified.
func bodies(o *Options) func(seq int64) []byte {
	if !o.RandomBody {
		body := make([]byte, o.BodySize)
		for i := range body {
			body[i] = 'a' + byte(i%26)
		}
		return func(int64) []byte { return body }
	}
	pool := make([]byte, randomPoolSize+o.BodySize)
	r := rand.NewChaCha8([32]byte{'p', 'o', 'p', 's', 'h', 'i', 'm'})
	_, _ = r.Read(pool)
	return func(seq int64) []byte {
		off := (uint64(seq) * 0x9E3779B97F4A7C15 >> 40) % randomPoolSize
		return pool[off : off+uint64(o.BodySize) : off+uint64(o.BodySize)]
	}
}
