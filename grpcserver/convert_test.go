package grpcserver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
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

func gunzip(t testing.TB, b []byte) []byte {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("gzip data: %v", err)
	}
	return out
}

// A body compressed by a remoting producer (zlib, sysFlag 0x1) reaches a v5
// consumer as GZIP that gzip readers inflate; LZ4 bodies pass unchanged.
func TestCompressedBodies(t *testing.T) {
	plain := bytes.Repeat([]byte("compressible body 0123456789 "), 400)
	z := zlibOf(t, plain)
	rec := codec.MessageExt{
		Message: codec.Message{Topic: "T", Body: z, Properties: "POP_CK\x011 2 3 4 0 b 0 1\x02"},
		SysFlag: codec.SysFlagCompressed,
	}
	out, err := MessageOf(&rec, DeliveryOptions{MaxInflatedBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	sp := out.GetSystemProperties()
	if sp.GetBodyEncoding() != v2.Encoding_GZIP || out.GetBody()[0] != 0x1f || out.GetBody()[1] != 0x8b {
		t.Fatalf("encoding %v body % x", sp.GetBodyEncoding(), out.GetBody()[:4])
	}
	if !bytes.Equal(gunzip(t, out.GetBody()), plain) {
		t.Fatal("gzip body does not inflate to the original")
	}
	if len(out.GetBody()) != len(z)-6+18 {
		t.Errorf("re-framed size %d, zlib %d: deflate data not kept as is", len(out.GetBody()), len(z))
	}
	if sp.GetBodyDigest().GetChecksum() != md5Upper(out.GetBody()) {
		t.Error("digest is not of the body sent")
	}
	// Over the inflation bound: sent as stored.
	out, _ = MessageOf(&rec, DeliveryOptions{MaxInflatedBytes: 100})
	if !bytes.Equal(out.GetBody(), z) || out.GetSystemProperties().GetBodyEncoding() != v2.Encoding_GZIP {
		t.Error("bounded inflation: body should pass unchanged")
	}
	rec.SysFlag = codec.SysFlagCompressed | codec.CompressionLZ4<<8
	rec.Body = []byte{0x04, 0x22, 0x4d, 0x18, 1, 2, 3}
	out, _ = MessageOf(&rec, DeliveryOptions{})
	if !bytes.Equal(out.GetBody(), rec.Body) || out.GetSystemProperties().GetBodyEncoding() != v2.Encoding_GZIP {
		t.Error("LZ4 body should pass unchanged labelled GZIP")
	}
}

// A GZIP body from a v5 producer is stored as zlib with the compressed bit.
func TestSendGzipBody(t *testing.T) {
	plain := bytes.Repeat([]byte("v5 gzip "), 300)
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := goClientMessage("T", buf.Bytes())
	m.SystemProperties.BodyEncoding = v2.Encoding_GZIP
	in, st := SendInputOf(m, testPeer, testNow, DefaultSendLimits())
	if st != nil {
		t.Fatal(st)
	}
	if in.Header.SysFlag != codec.SysFlagCompressed|codec.CompressionZLIB<<8 {
		t.Errorf("sysFlag %#x", in.Header.SysFlag)
	}
	r, err := zlib.NewReader(bytes.NewReader(in.Body))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(r); !bytes.Equal(got, plain) {
		t.Error("stored zlib body differs")
	}
	// And back to a v5 consumer: gzip of the same content.
	rec := storeAndPop(t, in, 0, 0, 0, 0)
	out, _ := MessageOf(&rec, DeliveryOptions{})
	if !bytes.Equal(gunzip(t, out.GetBody()), plain) {
		t.Error("consumer body differs")
	}
	m.Body = []byte("not gzip")
	if _, st := SendInputOf(m, testPeer, testNow, DefaultSendLimits()); st.GetCode() != v2.Code_MESSAGE_CORRUPTED {
		t.Errorf("bad gzip: %v", st)
	}
	limits := DefaultSendLimits()
	limits.MaxInflatedBytes = 100
	m.Body = buf.Bytes()
	if _, st := SendInputOf(m, testPeer, testNow, limits); st.GetCode() != v2.Code_MESSAGE_CORRUPTED {
		t.Errorf("gzip bomb bound: %v", st)
	}
}

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
