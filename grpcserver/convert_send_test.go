package grpcserver

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/codec"
)

func TestSendRefusals(t *testing.T) {
	lim := DefaultSendLimits()
	many := map[string]string{}
	for i := 0; i < 129; i++ {
		many[strings.Repeat("p", i+1)] = "v"
	}
	cases := []struct {
		name string
		edit func(m *v2.Message)
		want v2.Code
	}{
		{"empty body", func(m *v2.Message) { m.Body = nil }, v2.Code_MESSAGE_BODY_EMPTY},
		{"large body", func(m *v2.Message) { m.Body = make([]byte, 4<<20+1) }, v2.Code_MESSAGE_BODY_TOO_LARGE},
		{"bad topic", func(m *v2.Message) { m.Topic.Name = "a b" }, v2.Code_ILLEGAL_TOPIC},
		{"no id", func(m *v2.Message) { m.SystemProperties.MessageId = " " }, v2.Code_ILLEGAL_MESSAGE_ID},
		{"reserved property", func(m *v2.Message) { m.UserProperties["UNIQ_KEY"] = "x" }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"transient property", func(m *v2.Message) { m.UserProperties["__RMQ.TRANSIENT.a"] = "x" }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"separator in value", func(m *v2.Message) { m.UserProperties["a"] = "x\x02y" }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"control in key", func(m *v2.Message) { m.UserProperties["a\x01"] = "x" }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"C1 control", func(m *v2.Message) { m.UserProperties["a"] = "x\u0085" }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"too many properties", func(m *v2.Message) { m.UserProperties = many }, v2.Code_MESSAGE_PROPERTIES_TOO_LARGE},
		{"properties too large", func(m *v2.Message) { m.UserProperties["big"] = strings.Repeat("x", 16<<10) }, v2.Code_MESSAGE_PROPERTIES_TOO_LARGE},
		{"blank tag", func(m *v2.Message) { m.SystemProperties.Tag = ptr("  ") }, v2.Code_ILLEGAL_MESSAGE_TAG},
		{"tag with |", func(m *v2.Message) { m.SystemProperties.Tag = ptr("a||b") }, v2.Code_ILLEGAL_MESSAGE_TAG},
		{"blank key", func(m *v2.Message) { m.SystemProperties.Keys = []string{"\t"} }, v2.Code_ILLEGAL_MESSAGE_KEY},
		{"long group", func(m *v2.Message) { m.SystemProperties.MessageGroup = ptr(strings.Repeat("g", 64)) }, v2.Code_ILLEGAL_MESSAGE_GROUP},
		{"blank group", func(m *v2.Message) { m.SystemProperties.MessageGroup = ptr(" ") }, v2.Code_ILLEGAL_MESSAGE_GROUP},
		{"far delivery", func(m *v2.Message) {
			m.SystemProperties.DeliveryTimestamp = timestamppb.New(testNow.Add(24*time.Hour + time.Second))
		}, v2.Code_ILLEGAL_DELIVERY_TIME},
		// Seconds whose milliseconds wrap around int64: this one (sent by a
		// raw client on 2026-12-05) came out as a time a few seconds ahead and
		// passed the 3-day bound; 2^62 wraps to 0.
		{"wrapping delivery", func(m *v2.Message) {
			m.SystemProperties.DeliveryTimestamp = &timestamppb.Timestamp{Seconds: 2471863707673524218}
		}, v2.Code_ILLEGAL_DELIVERY_TIME},
		{"delivery 2^62 s", func(m *v2.Message) {
			m.SystemProperties.DeliveryTimestamp = &timestamppb.Timestamp{Seconds: 1 << 62}
		}, v2.Code_ILLEGAL_DELIVERY_TIME},
		{"delivery -1e12 s", func(m *v2.Message) {
			m.SystemProperties.DeliveryTimestamp = &timestamppb.Timestamp{Seconds: -1e12}
		}, v2.Code_ILLEGAL_DELIVERY_TIME},
	}
	for _, c := range cases {
		m := goClientMessage("T", []byte("b"))
		c.edit(m)
		if _, st := SendInputOf(m, testPeer, testNow, lim); st.GetCode() != c.want {
			t.Errorf("%s: %v, want %s", c.name, st, c.want)
		}
	}
	// The remark names what is wrong with a key.
	for key, want := range map[string]string{"": "cannot be empty", "a\x01": "control character"} {
		m := goClientMessage("T", []byte("b"))
		m.UserProperties[key] = "x"
		if _, st := SendInputOf(m, testPeer, testNow, lim); !strings.Contains(st.GetMessage(), want) {
			t.Errorf("key %q: %v, want a remark with %q", key, st, want)
		}
	}
	// Limits at their edges are accepted.
	m := goClientMessage("T", make([]byte, 4<<20))
	m.SystemProperties.MessageGroup = ptr(strings.Repeat("g", 63))
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(testNow.Add(24 * time.Hour))
	if _, st := SendInputOf(m, testPeer, testNow, lim); st != nil {
		t.Errorf("edge values refused: %v", st)
	}
}

func TestSendInputsRequest(t *testing.T) {
	lim := DefaultSendLimits()
	if _, st := SendInputs(&v2.SendMessageRequest{}, testPeer, testNow, lim); st.GetCode() != v2.Code_MESSAGE_CORRUPTED {
		t.Errorf("no message: %v", st)
	}
	req := &v2.SendMessageRequest{Messages: []*v2.Message{goClientMessage("T", []byte("a")), goClientMessage("U", []byte("b"))}}
	if _, st := SendInputs(req, testPeer, testNow, lim); st.GetCode() != v2.Code_MESSAGE_CORRUPTED {
		t.Errorf("two topics: %v", st)
	}
	tx := goClientMessage("T", []byte("a"))
	tx.SystemProperties.MessageType = v2.MessageType_TRANSACTION
	req = &v2.SendMessageRequest{Messages: []*v2.Message{goClientMessage("T", []byte("a")), tx}}
	if ins, st := SendInputs(req, testPeer, testNow, lim); st != nil || len(ins) != 2 || ins[1].Type != v2.MessageType_TRANSACTION ||
		storedType(ins[1]) != v2.MessageType_TRANSACTION || storedType(ins[0]) != v2.MessageType_NORMAL {
		t.Errorf("transaction: %v %+v", st, ins)
	}
	req = &v2.SendMessageRequest{Messages: []*v2.Message{goClientMessage("T", []byte("a")), goClientMessage("T", []byte("b"))}}
	ins, st := SendInputs(req, testPeer, testNow, lim)
	if st != nil || len(ins) != 2 || string(ins[1].Body) != "b" {
		t.Errorf("batch: %v %d", st, len(ins))
	}
}

// A transactional message is converted the way the proxy does: the
// prepared sysFlag, TRAN_MSG, the immunity time, PGROUP = topic.
func TestSendInputOfTransaction(t *testing.T) {
	m := goClientMessage("T", []byte("a"))
	m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
	m.SystemProperties.OrphanedTransactionRecoveryDuration = durationpb.New(30 * time.Second)
	m.SystemProperties.DeliveryAttempt = ptr(int32(2))
	in, st := SendInputOf(m, netip.AddrPort{}, testNow, DefaultSendLimits())
	if st != nil {
		t.Fatal(st)
	}
	p := codec.DecodeProperties(in.Header.Properties)
	if codec.TransactionType(in.Header.SysFlag) != codec.SysFlagTransactionPrepared || p["TRAN_MSG"] != "true" ||
		p["CHECK_IMMUNITY_TIME_IN_SECONDS"] != "30" || p["RECONSUME_TIME"] != "2" || p["PGROUP"] != "T" || in.Header.ProducerGroup != "T" {
		t.Errorf("sysFlag %#x properties %q", in.Header.SysFlag, p)
	}
	m.SystemProperties.BornHost = ""
	in, _ = SendInputOf(m, testPeer, testNow, DefaultSendLimits())
	if v, _ := codec.PropertyValue(in.Header.Properties, "__BORNHOST"); v != testPeer.String() {
		t.Errorf("born host falls back to the peer: %q", v)
	}
}
