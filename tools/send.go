package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"time"

	"github.com/popshim/popshim/codec"
)

// SendOptions configures Send. Zero fields take the documented default.
type SendOptions struct {
	// Namesrv is the name server, "host:port" (several joined by ';').
	// Required.
	Namesrv string
	// Conn holds TLS and signing settings (--tls, --tls-ca, --access-key,
	// --secret-key); the zero value is plaintext and unsigned.
	Conn ConnOptions
	// Topic is the topic to send to; unknown topics are created by the
	// first SEND (the broker's --auto-create-topic). Default "TopicTest".
	Topic string
	// ProducerGroup goes into every SEND header. Default "smoke_producer".
	ProducerGroup string
	// Count is how many messages to send, at least 1. Default 1.
	Count int
	// Body is every message's body, sent as given. Default "Hello popshim".
	Body string
	// Tags is the TAGS property; empty sends none.
	Tags string
	// Keys is the KEYS property (space-separated keys); empty sends none.
	Keys string
	// Timeout bounds the whole run (route look-up and every SEND).
	// Default 30 s.
	Timeout time.Duration
	// Out receives one line per message and a summary. Default io.Discard.
	Out io.Writer
}

// SendResult is one stored message, as the SEND_MESSAGE_V2 reply names it.
type SendResult struct {
	MsgID       string // UNIQ_KEY, the id applications see (SendResult.msgId)
	OffsetMsgID string // the reply's msgId: store host + commit-log offset
	Broker      string // broker name
	QueueID     int32  // queue written
	QueueOffset int64  // the message's offset in that queue
}

func (o *SendOptions) defaults() {
	if o.Topic == "" {
		o.Topic = "TopicTest"
	}
	if o.ProducerGroup == "" {
		o.ProducerGroup = "smoke_producer"
	}
	if o.Count == 0 {
		o.Count = 1
	}
	if o.Body == "" {
		o.Body = "Hello popshim"
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// Send sends o.Count messages with SEND_MESSAGE_V2 (310), round-robin over
// the topic's writable queues, and returns what each reply said, in send
// order. When the name server answers TOPIC_NOT_EXIST it uses TBW102's
// route (at most 4 queues per broker, as the Java producer) and fetches the
// topic's own route again after the first message created it. Errors: no
// name server or broker reachable, no route, a non-success SEND reply, or
// o.Timeout; the results sent before the error are returned with it.
func Send(ctx context.Context, o SendOptions) ([]SendResult, error) {
	o.defaults()
	if o.Count < 1 {
		return nil, fmt.Errorf("--count must be at least 1, got %d", o.Count)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	ns, conns, err := o.Conn.dial(ctx, o.Namesrv)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	defer conns.closeAll()
	queues, fallback, err := sendQueues(ctx, ns, o.Topic)
	if err != nil {
		return nil, err
	}
	props, err := sendProperties(o.Tags, o.Keys)
	if err != nil {
		return nil, err
	}
	ids := codec.NewUniqIDGenerator(netip.AddrFrom4([4]byte{127, 0, 0, 1}), int32(os.Getpid()), rand.Int32())
	out := make([]SendResult, 0, o.Count)
	next := rand.IntN(len(queues)) // sendWhichQueue starts at a random index
	for i := range o.Count {
		q := queues[next%len(queues)]
		next++
		r, err := sendOne(ctx, conns, &o, q, props, ids.Next(time.Now().UnixMilli()))
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("sent %d of %d messages %s: %w", i, o.Count, cutShort(ctx, o.Timeout), err)
			}
			return out, err
		}
		out = append(out, r)
		fmt.Fprintf(o.Out, "SEND_OK msgId=%s offsetMsgId=%s topic=%s broker=%s queueId=%d queueOffset=%d\n",
			r.MsgID, r.OffsetMsgID, o.Topic, r.Broker, r.QueueID, r.QueueOffset)
		if fallback {
			// The first SEND created the topic: use its own queues from now on.
			if own, fb, err := sendQueues(ctx, ns, o.Topic); err == nil && !fb {
				queues, fallback = own, false
			}
		}
	}
	fmt.Fprintf(o.Out, "sent %d messages to %s\n", len(out), o.Topic)
	return out, nil
}

// sendQueues resolves the queues to send topic's messages to; fallback
// reports that they are TBW102's.
func sendQueues(ctx context.Context, ns *nameServer, topic string) (_ []queueRoute, fallback bool, _ error) {
	r, err := ns.route(ctx, topic)
	limit := int32(0)
	if errors.Is(err, errTopicNotExist) {
		fallback, limit = true, defaultTopicQueueNums
		r, err = ns.route(ctx, DefaultTopic)
		if errors.Is(err, errTopicNotExist) {
			return nil, true, fmt.Errorf("topic %s does not exist and the broker does not auto-create topics (%s has no route): create it first (mqadmin updateTopic)", topic, DefaultTopic)
		}
	}
	if err != nil {
		return nil, fallback, err
	}
	queues := writeQueues(brokersOf(r), limit)
	if len(queues) == 0 {
		return nil, fallback, fmt.Errorf("the route of %s from %s has no writable queue on a broker with a master address", topic, ns.addr)
	}
	return queues, fallback, nil
}

// sendProperties builds the properties every message carries: TAGS and
// KEYS when given, WAIT=true (the producer waits for the store).
func sendProperties(tags, keys string) (map[string]string, error) {
	p := map[string]string{codec.PropertyWaitStoreMsgOK: "true"}
	if tags != "" {
		p[codec.PropertyTags] = tags
	}
	if keys != "" {
		p[codec.PropertyKeys] = keys
	}
	if _, err := codec.EncodeProperties(p); err != nil {
		return nil, fmt.Errorf("--tags/--keys: %w", err)
	}
	return p, nil
}

// sendOne sends one message with UNIQ_KEY uniq to q and decodes the reply.
func sendOne(ctx context.Context, conns *brokerConns, o *SendOptions, q queueRoute, base map[string]string, uniq string) (SendResult, error) {
	c, err := conns.get(ctx, q.Broker, q.Addr)
	if err != nil {
		return SendResult{}, err
	}
	props := make(map[string]string, len(base)+1)
	for k, v := range base {
		props[k] = v
	}
	props[codec.PropertyUniqClientMessageIDKeyIdx] = uniq
	encoded, err := codec.EncodeProperties(props)
	if err != nil {
		return SendResult{}, err
	}
	req := codec.NewRequest(codec.RequestSendMessageV2, 0, make(map[string]string, 12), []byte(o.Body))
	codec.SendMessageRequestHeader{ProducerGroup: o.ProducerGroup, Topic: o.Topic, DefaultTopic: DefaultTopic,
		DefaultTopicQueueNums: defaultTopicQueueNums, QueueID: q.QueueID, BornTimestamp: time.Now().UnixMilli(),
		Properties: encoded}.EncodeV2(req)
	resp, err := invoke(ctx, c, req, requestTimeout)
	if err != nil {
		return SendResult{}, fmt.Errorf("SEND to %s queue %d at broker %s (%s): %w", o.Topic, q.QueueID, q.Broker, q.Addr, err)
	}
	if resp.Code != codec.Success {
		return SendResult{}, fmt.Errorf("SEND to %s queue %d at broker %s (%s): %w", o.Topic, q.QueueID, q.Broker, q.Addr, replyError(resp))
	}
	h, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
	if err != nil {
		return SendResult{}, fmt.Errorf("SEND reply from %s: %w", q.Addr, err)
	}
	return SendResult{MsgID: uniq, OffsetMsgID: h.MsgID, Broker: q.Broker, QueueID: h.QueueID, QueueOffset: h.QueueOffset}, nil
}
