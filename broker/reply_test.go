package broker_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
)

// recordingPusher is a broker.ReplyPusher that keeps the pushes it is
// given and completes each with err.
type recordingPusher struct {
	mu     sync.Mutex
	pushes []broker.ReplyPush
	err    error
}

func (p *recordingPusher) PushReply(r *broker.ReplyPush, done func(error)) {
	p.mu.Lock()
	p.pushes = append(p.pushes, *r)
	err := p.err
	p.mu.Unlock()
	done(err)
}

func (p *recordingPusher) got() []broker.ReplyPush {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]broker.ReplyPush(nil), p.pushes...)
}

// replyReq is a reply from createReplyMessage for the requester clientID.
func replyReq(t *testing.T, topic, clientID, body string) broker.ReplyRequest {
	r := broker.ReplyRequest{SendRequest: sendReq(topic, -1, body, props(t, codec.PropertyMessageType, "reply",
		codec.PropertyCorrelationID, "corr-1", codec.PropertyMessageReplyToClient, clientID, codec.PropertyMessageTTL, "3000")),
		DefaultTopic: codec.AutoCreateTopicKey, DefaultTopicQueueNums: 4}
	r.ProducerGroup = "ReplierPG"
	return r
}

func reply(t *testing.T, f *brokertest.Fixture, r broker.ReplyRequest) (broker.ReplyResult, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.ReplyResult, error)) { f.Broker.Reply(r, done) })
}

// TestCoreReplyPushesAndStores: a reply to a requester known as a
// producer is pushed to its connection with the request's fields,
// PUSH_REPLY_TIME added and the replier as born host, and stored in the
// cluster's reply topic (created at start, one queue) with its
// properties as sent; the result names the stored record.
func TestCoreReplyPushesAndStores(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	p := &recordingPusher{}
	f.Broker.SetReplyPusher(p)
	f.Broker.Clients.RegisterProducer("RequesterPG", clients.ClientChannel{ClientID: "10.0.0.9@req", ConnID: 77})
	topic := meta.ReplyTopic(f.Cfg.ClusterName)
	if m, ok := f.Broker.Topics.Get(topic); !ok || m.WriteQueueNums != 1 {
		t.Fatalf("reply topic %s: %+v %v", topic, m, ok)
	}

	r := replyReq(t, topic, "10.0.0.9@req", "pong")
	res, err := reply(t, f, r)
	if err != nil {
		t.Fatal(err)
	}
	stored := readAll(t, f, topic, 0)
	if !res.Stored || res.QueueID != 0 || len(stored) != 1 || stored[0].OffsetMsgID() != res.OffsetMsgID || res.QueueOffset != 0 {
		t.Fatalf("result %+v, %d stored", res, len(stored))
	}
	if string(stored[0].Body) != "pong" || !strings.HasPrefix(stored[0].Properties, r.Properties) {
		t.Fatalf("stored %q with %q, want the body and properties as sent %q (then MSG_REGION and TRACE_ON)", stored[0].Body, stored[0].Properties, r.Properties)
	}
	got := p.got()
	if len(got) != 1 {
		t.Fatalf("%d pushes", len(got))
	}
	g := got[0]
	if g.ConnID != 77 || g.ClientID != "10.0.0.9@req" || g.Topic != topic || g.ProducerGroup != "ReplierPG" ||
		g.QueueID != -1 || g.BornHost != "10.1.2.3:45678" || g.StoreHost != f.Broker.StoreHost().String() || string(g.Body) != "pong" ||
		g.DefaultTopic != codec.AutoCreateTopicKey || g.DefaultTopicQueueNums != 4 || g.BornTimestamp != r.BornTimestamp {
		t.Fatalf("push %+v", g)
	}
	pushed := codec.DecodeProperties(g.Properties)
	if pushed[codec.PropertyCorrelationID] != "corr-1" || pushed[codec.PropertyPushReplyTime] == "" {
		t.Fatalf("pushed properties %v", pushed)
	}
	// buildMsgContext's two properties, on the push and the stored copy
	// (a 5.5.1 broker's pushed reply carries them; rocketmq-client 4.9.8).
	storedProps := codec.DecodeProperties(stored[0].Properties)
	for _, k := range []string{codec.PropertyMsgRegion, codec.PropertyTraceSwitch} {
		if pushed[k] == "" || storedProps[k] != pushed[k] {
			t.Fatalf("%s: pushed %q, stored %q", k, pushed[k], storedProps[k])
		}
	}
}

// TestCoreReplyRefusals: without REPLY_TO_CLIENT, for a requester that is
// no producer here, and for a push the requester failed, Reply answers
// SYSTEM_ERROR with Java's remarks (the reply is stored all the same, as
// Java does); with --store-reply-message-enable off a delivered reply
// answers msgId "0"; a topic that does not exist is refused as a SEND.
func TestCoreReplyRefusals(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateTopic = false
	f := brokertest.Start(t, cfg, nil)
	p := &recordingPusher{}
	f.Broker.SetReplyPusher(p)
	f.Broker.Clients.RegisterProducer("RequesterPG", clients.ClientChannel{ClientID: "10.0.0.9@req", ConnID: 77})
	topic := meta.ReplyTopic(f.Cfg.ClusterName)

	code := func(r broker.ReplyRequest) (int32, string) {
		t.Helper()
		_, err := reply(t, f, r)
		var e *broker.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v, want *broker.Error", err)
		}
		return e.Code, e.Remark
	}
	noTo := replyReq(t, topic, "", "x")
	noTo.Properties = props(t, codec.PropertyCorrelationID, "c")
	if c, m := code(noTo); c != codec.SystemError || m != "reply message properties[REPLY_TO_CLIENT] is null" {
		t.Fatalf("no REPLY_TO_CLIENT: %d %q", c, m)
	}
	if c, m := code(replyReq(t, topic, "10.0.0.8@gone", "x")); c != codec.SystemError || m != "push reply message fail, channel of <10.0.0.8@gone> not found." {
		t.Fatalf("unknown requester: %d %q", c, m)
	}
	p.err = errors.New("requester answered code 1")
	if c, m := code(replyReq(t, topic, "10.0.0.9@req", "x")); c != codec.SystemError || m != "push reply message to 10.0.0.9@reqfail." {
		t.Fatalf("failed push: %d %q", c, m)
	}
	if n := len(readAll(t, f, topic, 0)); n != 3 {
		t.Fatalf("%d replies stored, want the 3 refused ones (Java stores after a failed push too)", n)
	}
	if c, _ := code(replyReq(t, "NoSuchReplyTopic", "10.0.0.9@req", "x")); c != codec.TopicNotExist {
		t.Fatalf("unknown topic: %d", c)
	}

	p.err = nil
	f.Cfg.StoreReplyMessageEnable = false
	res, err := reply(t, f, replyReq(t, topic, "10.0.0.9@req", "y"))
	if err != nil || res.Stored || res.OffsetMsgID != "0" || res.QueueOffset != 0 {
		t.Fatalf("store off: %+v %v", res, err)
	}
	if n := len(readAll(t, f, topic, 0)); n != 3 {
		t.Fatalf("%d replies stored with the store off", n)
	}
}
