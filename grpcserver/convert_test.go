package grpcserver

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/codec"
)

var (
	testNow   = time.UnixMilli(1_700_000_000_000)
	testPeer  = netip.MustParseAddrPort("10.1.2.3:52011")
	testStore = netip.MustParseAddrPort("127.0.0.1:10911")
)

// goClientMessage is a message shaped as the Go v5 client sends it
// (grpc-v5 reference §9.1): tag, keys, 34-hex message id, IDENTITY body,
// born timestamp and host name, plus one user property.
func goClientMessage(topic string, body []byte) *v2.Message {
	return &v2.Message{
		Topic:          &v2.Resource{Name: topic},
		UserProperties: map[string]string{"idx": "7", "ünï": "cödé"},
		SystemProperties: &v2.SystemProperties{
			Tag:           ptr("TagA"),
			Keys:          []string{"key-7", "k2"},
			MessageId:     "01A1B2C3D4E5F60718293A4B5C6D7E8F90",
			BodyEncoding:  v2.Encoding_IDENTITY,
			MessageType:   v2.MessageType_NORMAL,
			BornTimestamp: timestamppb.New(testNow.Add(-time.Second)),
			BornHost:      "producer-host",
		},
		Body: body,
	}
}

// storeAndPop does with real bytes what the SEND and POP paths do with an
// input: the record is encoded as popshim stores it, given its offsets,
// popped with a POP_CK property, put in a POP body and decoded again.
func storeAndPop(t *testing.T, in SendInput, queueID int32, queueOffset, phys int64, reconsume int32) codec.MessageExt {
	t.Helper()
	ck := codec.ExtraInfo{CkQueueOffset: queueOffset, PopTime: testNow.UnixMilli(), InvisibleTime: 20000, ReviveQid: 3,
		BrokerName: "popshim-a", QueueID: queueID, QueueOffset: queueOffset}
	props, err := codec.SetProperty(in.Header.Properties, codec.PropertyPopCK, ck.String())
	if err != nil {
		t.Fatal(err)
	}
	rec := codec.MessageExt{
		Message:        codec.Message{Topic: in.Header.Topic, Flag: in.Header.Flag, Body: in.Body, Properties: props},
		QueueID:        queueID,
		QueueOffset:    queueOffset,
		PhysicalOffset: phys,
		SysFlag:        in.Header.SysFlag,
		BornTimestamp:  in.Header.BornTimestamp,
		BornHost:       in.BornHost,
		StoreTimestamp: testNow.UnixMilli(),
		StoreHost:      testStore,
		ReconsumeTimes: reconsume,
	}
	body, err := codec.AppendMessage(nil, &rec)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := codec.DecodeMessages(body)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("decode POP body: %d messages, %v", len(msgs), err)
	}
	return msgs[0]
}

func md5Upper(b []byte) string {
	s := md5.Sum(b)
	return strings.ToUpper(hex.EncodeToString(s[:]))
}

func TestSendReceiveRoundTrip(t *testing.T) {
	m := goClientMessage("TopicA", []byte("gov5 body 7"))
	m.SystemProperties.MessageGroup = ptr("order-42")
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(testNow.Add(10 * time.Second))
	m.SystemProperties.TraceContext = ptr("00-abc-def-01")
	in, st := SendInputOf(m, testPeer, testNow, DefaultSendLimits())
	if st != nil {
		t.Fatalf("refused: %v", st)
	}
	h := in.Header
	if h.Topic != "TopicA" || h.ProducerGroup != "TopicA" || h.QueueID != -1 || h.SysFlag != 0 ||
		h.BornTimestamp != testNow.Add(-time.Second).UnixMilli() {
		t.Fatalf("header %+v", h)
	}
	want := map[string]string{
		"idx": "7", "ünï": "cödé", "TAGS": "TagA", "KEYS": "key-7 k2", "UNIQ_KEY": m.SystemProperties.MessageId,
		"PGROUP": "TopicA", "__SHARDINGKEY": "order-42", "TIMER_DELIVER_MS": "1700000010000",
		"TRACE_CONTEXT": "00-abc-def-01", "__BORNHOST": "producer-host", "BORN_TIMESTAMP": "1699999999000",
	}
	got := codec.DecodeProperties(h.Properties)
	if len(got) != len(want) {
		t.Errorf("properties %q", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("property %s = %q, want %q", k, got[k], v)
		}
	}
	if in.MessageGroup != "order-42" || in.DeliverAtMillis != 1700000010000 || in.BornHost != testPeer || in.Type != v2.MessageType_NORMAL {
		t.Errorf("input %+v", in)
	}

	rec := storeAndPop(t, in, 2, 41, 123456789, 0)
	out, err := MessageOf(&rec, DeliveryOptions{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	sp := out.GetSystemProperties()
	if out.GetTopic().GetName() != "TopicA" || string(out.GetBody()) != "gov5 body 7" {
		t.Errorf("topic/body %v %q", out.GetTopic(), out.GetBody())
	}
	if len(out.GetUserProperties()) != 2 || out.GetUserProperties()["idx"] != "7" || out.GetUserProperties()["ünï"] != "cödé" {
		t.Errorf("user properties %v", out.GetUserProperties())
	}
	if sp.GetTag() != "TagA" || strings.Join(sp.GetKeys(), ",") != "key-7,k2" || sp.GetMessageId() != m.SystemProperties.MessageId {
		t.Errorf("tag/keys/id %v %v %v", sp.GetTag(), sp.GetKeys(), sp.GetMessageId())
	}
	if sp.GetReceiptHandle() != "41 1700000000000 20000 3 0 popshim-a 2 41 123456789" {
		t.Errorf("handle %q", sp.GetReceiptHandle())
	}
	if sp.GetInvisibleDuration().AsDuration() != 20*time.Second {
		t.Errorf("invisible %v", sp.GetInvisibleDuration())
	}
	if sp.GetQueueId() != 2 || sp.GetQueueOffset() != 41 || sp.GetDeliveryAttempt() != 1 {
		t.Errorf("queue %d offset %d attempt %d", sp.GetQueueId(), sp.GetQueueOffset(), sp.GetDeliveryAttempt())
	}
	if sp.GetMessageGroup() != "order-42" || sp.GetTraceContext() != "00-abc-def-01" {
		t.Errorf("group %q trace %q", sp.GetMessageGroup(), sp.GetTraceContext())
	}
	if sp.GetDeliveryTimestamp().AsTime().UnixMilli() != 1700000010000 || sp.GetMessageType() != v2.MessageType_DELAY {
		t.Errorf("delivery %v type %v", sp.GetDeliveryTimestamp(), sp.GetMessageType())
	}
	if sp.GetBornHost() != "producer-host" || sp.GetBornTimestamp().AsTime().UnixMilli() != 1699999999000 {
		t.Errorf("born %q %v", sp.GetBornHost(), sp.GetBornTimestamp())
	}
	if sp.GetStoreHost() != "127.0.0.1:10911" || sp.GetStoreTimestamp().AsTime().UnixMilli() != testNow.UnixMilli() {
		t.Errorf("store %q %v", sp.GetStoreHost(), sp.GetStoreTimestamp())
	}
	if sp.GetBodyEncoding() != v2.Encoding_IDENTITY || sp.GetBodyDigest().GetType() != v2.DigestType_MD5 ||
		sp.GetBodyDigest().GetChecksum() != md5Upper([]byte("gov5 body 7")) {
		t.Errorf("encoding %v digest %v", sp.GetBodyEncoding(), sp.GetBodyDigest())
	}
	// The result is a valid protobuf message (what the stream marshals).
	wire, err := proto.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back v2.Message
	if err := proto.Unmarshal(wire, &back); err != nil || !proto.Equal(&back, out) {
		t.Fatalf("protobuf round trip: %v", err)
	}
	// A redelivery counts attempts from the record's reconsumeTimes.
	rec = storeAndPop(t, in, 2, 41, 123456789, 3)
	out, _ = MessageOf(&rec, DeliveryOptions{Now: testNow})
	if out.GetSystemProperties().GetDeliveryAttempt() != 4 {
		t.Errorf("attempt after 3 reconsumes: %d", out.GetSystemProperties().GetDeliveryAttempt())
	}
}

// A record from a remoting producer: no UNIQ_KEY (message id = offset
// msgId), no __BORNHOST (born address), FIFO by __SHARDINGKEY, a DLQ origin.
func TestMessageOfRemotingRecord(t *testing.T) {
	props, _ := codec.EncodeProperties(map[string]string{
		"TAGS": "t", "__SHARDINGKEY": "g1", "DLQ_ORIGIN_TOPIC": "T0", "DLQ_ORIGIN_MESSAGE_ID": "ID0",
		"WAIT": "true", "CLUSTER": "DefaultCluster", "__RMQ.TRANSIENT.X": "1", "color": "red",
		"POP_CK": "5 1700000000000 60000 1 1 b 0 7",
	})
	rec := codec.MessageExt{
		Message: codec.Message{Topic: "%DLQ%g", Body: []byte("x"), Properties: props},
		QueueID: 0, QueueOffset: 7, PhysicalOffset: 99, BornHost: netip.MustParseAddrPort("[::ffff:192.0.2.9]:4000"),
		StoreHost: testStore,
	}
	out, err := MessageOf(&rec, DeliveryOptions{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	sp := out.GetSystemProperties()
	if sp.GetMessageId() != rec.OffsetMsgID() || sp.GetBornHost() != "192.0.2.9" || sp.GetMessageType() != v2.MessageType_FIFO {
		t.Errorf("id %q born %q type %v", sp.GetMessageId(), sp.GetBornHost(), sp.GetMessageType())
	}
	if dlq := sp.GetDeadLetterQueue(); dlq.GetTopic() != "T0" || dlq.GetMessageId() != "ID0" {
		t.Errorf("dlq %v", dlq)
	}
	if u := out.GetUserProperties(); len(u) != 1 || u["color"] != "red" {
		t.Errorf("user properties %v", u)
	}
	if sp.GetReceiptHandle() != "5 1700000000000 60000 1 1 b 0 7 99" || sp.DeliveryTimestamp != nil {
		t.Errorf("handle %q delivery %v", sp.GetReceiptHandle(), sp.DeliveryTimestamp)
	}
	rec.Properties = codec.DeleteProperty(props, "POP_CK")
	if _, err := MessageOf(&rec, DeliveryOptions{}); err == nil {
		t.Error("record without POP_CK accepted")
	}
	rec.Properties, _ = codec.SetProperty(props, "POP_CK", "5 x")
	if _, err := MessageOf(&rec, DeliveryOptions{}); err == nil {
		t.Error("record with a bad POP_CK accepted")
	}
	rec.Properties, _ = codec.SetProperty(props, "TIMER_DELAY_SEC", "30")
	out, _ = MessageOf(&rec, DeliveryOptions{Now: testNow})
	if ts := out.GetSystemProperties().GetDeliveryTimestamp(); ts.AsTime().UnixMilli() != testNow.UnixMilli()+30000 {
		t.Errorf("TIMER_DELAY_SEC delivery %v", ts)
	}
}

// A typed POP record (no POP_CK, its receipt beside it) converts to the
// same Message as the remoting record carrying that receipt as POP_CK.
func TestReceivedMessageOfMatchesMessageOf(t *testing.T) {
	const ck = "5 1700000000000 60000 1 1 b 0 7"
	props, _ := codec.EncodeProperties(map[string]string{"TAGS": "t", "UNIQ_KEY": "ID1", "color": "red", "POP_CK": ck})
	rec := codec.MessageExt{
		Message:     codec.Message{Topic: "T", Body: []byte("x"), Properties: props},
		QueueOffset: 7, PhysicalOffset: 99, ReconsumeTimes: 2, StoreHost: testStore,
	}
	want, err := MessageOf(&rec, DeliveryOptions{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	ei, err := codec.ParseExtraInfo(ck)
	if err != nil {
		t.Fatal(err)
	}
	typed := rec
	typed.Properties = codec.DeleteProperty(props, "POP_CK")
	got := ReceivedMessageOf(&typed, ei, DeliveryOptions{Now: testNow})
	if !proto.Equal(got, want) {
		t.Fatalf("typed record gives\n%v\nthe POP_CK record\n%v", got, want)
	}
	if got.GetSystemProperties().GetReceiptHandle() != ck+" 99" {
		t.Fatalf("handle %q", got.GetSystemProperties().GetReceiptHandle())
	}
}

func zlibOf(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReceiptHandles(t *testing.T) {
	h, err := ReceiptHandleOf("40 1700000000000 60000 3 0 broker-a 1 42", 123456789)
	if err != nil || h != "40 1700000000000 60000 3 0 broker-a 1 42 123456789" {
		t.Fatalf("%q %v", h, err)
	}
	if h2, _ := ReceiptHandleOf(h, 5); h2 != h {
		t.Errorf("ninth field replaced: %q", h2)
	}
	ei, err := ParseReceiptHandle(h)
	if err != nil || ei.CommitLogOffset != 123456789 || ei.QueueOffset != 42 {
		t.Fatalf("%+v %v", ei, err)
	}
	if RemotingExtraInfo(ei) != "40 1700000000000 60000 3 0 broker-a 1 42" {
		t.Errorf("remoting %q", RemotingExtraInfo(ei))
	}
	if c := ChangedReceiptHandle(ei, 1700000005000, 10000, 5); c != "42 1700000005000 10000 5 0 broker-a 1 42 123456789" {
		t.Errorf("changed %q", c)
	}
	ei8, _ := ParseReceiptHandle("40 1 2 3 2 b 1 42")
	if c := ChangedReceiptHandle(ei8, 7, 8, 9); c != "42 7 8 9 2 b 1 42 -1" {
		t.Errorf("changed without offset %q", c)
	}
	if !HandleExpired(ei, 1700000060000) || HandleExpired(ei, 1700000059999) {
		t.Error("expiry is pop time + invisible time")
	}
	for _, bad := range []string{"", "1 2 3", "a b c d e f g h", "1 2 3 4 5 b 1 2", "1 2 3 4 0 b 1 2 3 4"} {
		if _, err := ParseReceiptHandle(bad); err == nil {
			t.Errorf("accepted %q", bad)
		} else if st := StatusOfError(OpAck, err); st.Code != v2.Code_INVALID_RECEIPT_HANDLE {
			t.Errorf("%q: status %v", bad, st)
		}
	}
}
