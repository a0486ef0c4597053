package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// ConsumeOptions configures Consume. Zero fields take the documented
// default.
type ConsumeOptions struct {
	// Namesrv is the name server, "host:port" (several joined by ';').
	// Required.
	Namesrv string
	// Conn holds TLS and signing settings (--tls, --tls-ca, --access-key,
	// --secret-key); the zero value is plaintext and unsigned.
	Conn ConnOptions
	// Topic to consume. Default "TopicTest".
	Topic string
	// Group is the consumer group; the broker creates it on the first POP
	// (--auto-create-subscription-group). Default "smoke_consumer".
	Group string
	// QueueID pops one queue of every broker; AnyQueue (-1) pops any
	// queue, retry topics included. 0 is queue 0: start from
	// NewConsumeOptions for AnyQueue.
	QueueID int32
	// Tags is the TAG filter expression ("TagA || TagB"). Default "*".
	Tags string
	// Count is how many messages to consume (pop and ack), at least 1.
	// Default 1.
	Count int
	// Timeout bounds the whole run: waiting for the topic's route, every
	// long poll and every ACK. Default 30 s.
	Timeout time.Duration
	// PollTime is the long-poll time of one POP, capped by what is left of
	// Timeout. Default 5 s.
	PollTime time.Duration
	// InvisibleTime is how long a popped message stays invisible to other
	// POPs before it is redelivered unless acked. Default 60 s.
	InvisibleTime time.Duration
	// Out receives one line per message and a summary. Default io.Discard.
	Out io.Writer
	// Notes receives progress notes (waiting for the topic). Default
	// io.Discard.
	Notes io.Writer
}

// AnyQueue is ConsumeOptions.QueueID for "pop from any queue" (-1).
const AnyQueue int32 = -1

// Consumed is one message consumed (popped and acked).
type Consumed struct {
	Topic          string // the topic the message was popped from (a %RETRY% topic for retries)
	Broker         string
	QueueID        int32
	QueueOffset    int64
	MsgID          string // UNIQ_KEY when present, else the offset msgId
	ReconsumeTimes int32
	Tags           string
	Keys           string
	Body           []byte // as stored; a compressed body is not inflated
}

// NewConsumeOptions returns ConsumeOptions with QueueID AnyQueue; the other
// zero fields take their defaults in Consume.
func NewConsumeOptions() ConsumeOptions { return ConsumeOptions{QueueID: AnyQueue} }

func (o *ConsumeOptions) defaults() {
	if o.Topic == "" {
		o.Topic = "TopicTest"
	}
	if o.Group == "" {
		o.Group = "smoke_consumer"
	}
	if o.Tags == "" {
		o.Tags = "*"
	}
	if o.Count == 0 {
		o.Count = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.PollTime <= 0 {
		o.PollTime = 5 * time.Second
	}
	if o.InvisibleTime <= 0 {
		o.InvisibleTime = 60 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Notes == nil {
		o.Notes = io.Discard
	}
}

// Consume pops messages of o.Topic as o.Group with long polling and acks
// each one (ACK_MESSAGE) before counting it, until o.Count were consumed.
// It waits for the topic's route (a consumer may start before the first
// SEND creates the topic). POP replies other than SUCCESS, POLLING_TIMEOUT,
// SYSTEM_BUSY and POLLING_FULL end the run with an error, as does a failed
// ACK. The error when o.Timeout passes first says how many were consumed;
// what was consumed is returned with any error.
func Consume(ctx context.Context, o ConsumeOptions) ([]Consumed, error) {
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
	var out []Consumed
	// timedOut describes running out of o.Timeout; why is the step that
	// was waiting (a POP or ACK cut short adds nothing: pass ctx.Err()).
	timedOut := func(why error) error {
		return fmt.Errorf("consumed %d of %d messages from %s as group %s %s: %w", len(out), o.Count, o.Topic, o.Group, cutShort(ctx, o.Timeout), why)
	}
	brokers, err := waitRoute(ctx, ns, &o)
	if err != nil {
		if ctx.Err() != nil {
			return nil, timedOut(err)
		}
		return nil, err
	}
	for i := 0; len(out) < o.Count; i++ {
		b := brokers[i%len(brokers)]
		c, err := conns.get(ctx, b.Name, b.Addr)
		if err != nil {
			return out, err
		}
		got, err := popAndAck(ctx, c, &o, b, o.Count-len(out))
		out = append(out, got...)
		if err != nil {
			if ctx.Err() != nil {
				return out, timedOut(ctx.Err())
			}
			return out, err
		}
	}
	fmt.Fprintf(o.Out, "consumed %d messages from %s as group %s\n", len(out), o.Topic, o.Group)
	return out, nil
}

// waitRoute returns the readable brokers of o.Topic, asking the name server
// again every 500 ms while it answers TOPIC_NOT_EXIST.
func waitRoute(ctx context.Context, ns *nameServer, o *ConsumeOptions) ([]brokerRoute, error) {
	noted := false
	for {
		r, err := ns.route(ctx, o.Topic)
		if err == nil {
			var out []brokerRoute
			for _, b := range brokersOf(r) {
				if b.Perm&codec.PermRead != 0 && b.ReadQueues > 0 {
					out = append(out, b)
				}
			}
			if len(out) == 0 {
				return nil, fmt.Errorf("the route of %s from %s has no readable queue on a broker with a master address", o.Topic, ns.addr)
			}
			return out, nil
		}
		if !errors.Is(err, errTopicNotExist) {
			if noted && ctx.Err() != nil {
				// --timeout ran out during a look-up after earlier ones
				// answered TOPIC_NOT_EXIST: that is the news, not the cut-off call.
				return nil, fmt.Errorf("topic %s does not exist: %w", o.Topic, ctx.Err())
			}
			return nil, err
		}
		if !noted {
			fmt.Fprintf(o.Notes, "topic %s does not exist yet; waiting for the first SEND to create it\n", o.Topic)
			noted = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("topic %s does not exist: %w", o.Topic, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// popAndAck sends one long-polling POP of at most want messages to broker b
// and acks what it returns. A POLLING_TIMEOUT, SYSTEM_BUSY or POLLING_FULL
// answer returns nothing and no error (after a short pause for the last
// two), so the caller polls again.
func popAndAck(ctx context.Context, c *client.Conn, o *ConsumeOptions, b brokerRoute, want int) ([]Consumed, error) {
	poll := o.PollTime
	if dl, ok := ctx.Deadline(); ok {
		poll = min(poll, time.Until(dl)-200*time.Millisecond)
	}
	if poll <= 0 {
		<-ctx.Done() // too little time left for another long poll
		return nil, ctx.Err()
	}
	req := codec.NewRequest(codec.RequestPopMessage, 0, make(map[string]string, 12), nil)
	codec.PopMessageRequestHeader{ConsumerGroup: o.Group, Topic: o.Topic, QueueID: o.QueueID, MaxMsgNums: int32(min(want, 32)),
		InvisibleTime: o.InvisibleTime.Milliseconds(), PollTime: poll.Milliseconds(), BornTime: time.Now().UnixMilli(),
		InitMode: codec.ConsumeInitModeMin, ExpType: "TAG", Exp: o.Tags, BrokerName: b.Name}.Encode(req)
	resp, err := invoke(ctx, c, req, poll+requestTimeout)
	if err != nil {
		return nil, fmt.Errorf("POP of %s at broker %s (%s): %w", o.Topic, b.Name, b.Addr, err)
	}
	switch resp.Code {
	case codec.Success:
	case codec.PollingTimeout:
		return nil, nil
	case codec.SystemBusy, codec.PollingFull:
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("POP of %s at broker %s: %w", o.Topic, b.Name, replyError(resp))
		case <-time.After(100 * time.Millisecond):
			return nil, nil
		}
	default:
		return nil, fmt.Errorf("POP of %s as group %s at broker %s (%s): %w", o.Topic, o.Group, b.Name, b.Addr, replyError(resp))
	}
	msgs, err := codec.DecodeMessages(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("POP reply from %s: %w", b.Addr, err)
	}
	receipts, err := client.ReceiptsFromPop(nil, resp, o.Topic, o.Group, b.Name)
	if err != nil {
		return nil, fmt.Errorf("POP reply from %s: %w", b.Addr, err)
	}
	if len(receipts) != len(msgs) {
		return nil, fmt.Errorf("POP reply from %s: %d messages but %d receipt handles", b.Addr, len(msgs), len(receipts))
	}
	out := make([]Consumed, 0, len(msgs))
	for i := range msgs {
		if err := ack(ctx, c, o.Group, &receipts[i]); err != nil {
			return out, fmt.Errorf("ACK of %s queue %d offset %d at broker %s: %w", receipts[i].Topic, receipts[i].QueueID, receipts[i].Offset, b.Name, err)
		}
		m := consumed(&msgs[i], b.Name)
		out = append(out, m)
		fmt.Fprintf(o.Out, "topic=%s queueId=%d queueOffset=%d msgId=%s reconsumeTimes=%d tags=%s keys=%s body=%q\n",
			m.Topic, m.QueueID, m.QueueOffset, m.MsgID, m.ReconsumeTimes, m.Tags, m.Keys, m.Body)
	}
	return out, nil
}

// ack sends ACK_MESSAGE (200051) for r and checks the reply.
func ack(ctx context.Context, c *client.Conn, group string, r *client.Receipt) error {
	req := codec.NewRequest(codec.RequestAckMessage, 0, make(map[string]string, 6), nil)
	codec.AckMessageRequestHeader{ConsumerGroup: group, Topic: r.Topic, QueueID: r.QueueID, Offset: r.Offset, ExtraInfo: r.ExtraInfo}.Encode(req)
	resp, err := invoke(ctx, c, req, requestTimeout)
	if err != nil {
		return err
	}
	if resp.Code != codec.Success {
		return replyError(resp)
	}
	return nil
}

// consumed describes m, popped from broker.
func consumed(m *codec.MessageExt, broker string) Consumed {
	tags, _ := m.Property(codec.PropertyTags)
	keys, _ := m.Property(codec.PropertyKeys)
	return Consumed{Topic: m.Topic, Broker: broker, QueueID: m.QueueID, QueueOffset: m.QueueOffset, MsgID: m.MsgID(),
		ReconsumeTimes: m.ReconsumeTimes, Tags: tags, Keys: strings.TrimSpace(keys), Body: m.Body}
}
