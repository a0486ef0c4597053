package grpcserver

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/codec"
)

// mapMessageOf is MessageOf written the plain way, as popshim first did
// it: the properties decoded into a map, read by name, then pruned to the
// user properties; every protobuf object allocated on its own. Tests hold
// MessageOf and RecordMessage to it.
func mapMessageOf(m *codec.MessageExt, opt DeliveryOptions) (*v2.Message, error) {
	props := map[string]string{}
	for k, v := range codec.Properties(m.Properties) {
		props[validUTF8(k)] = validUTF8(v)
	}
	ck, ok := props[codec.PropertyPopCK]
	var handle string
	var ei codec.ExtraInfo
	if ok {
		var err error
		if handle, ei, err = receiptHandleOf(ck, m.PhysicalOffset); err != nil {
			return nil, err
		}
	}
	sp := &v2.SystemProperties{
		MessageId: props[codec.PropertyUniqClientMessageIDKeyIdx], QueueId: m.QueueID,
		QueueOffset: proto.Int64(m.QueueOffset), DeliveryAttempt: proto.Int32(m.ReconsumeTimes + 1),
		BornTimestamp:  timestamppb.New(time.UnixMilli(m.BornTimestamp)),
		StoreTimestamp: timestamppb.New(time.UnixMilli(m.StoreTimestamp)),
		MessageType:    v2.MessageType_NORMAL, BodyEncoding: v2.Encoding_IDENTITY,
	}
	if sp.MessageId == "" {
		sp.MessageId = m.OffsetMsgID()
	}
	switch {
	case props[codec.PropertyTransactionPrepared] == "true":
		sp.MessageType = v2.MessageType_TRANSACTION
	case props[codec.PropertyDelayTimeLevel] != "", props[codec.PropertyTimerDeliverMS] != "", props[codec.PropertyTimerDelaySec] != "":
		sp.MessageType = v2.MessageType_DELAY
	case props[codec.PropertyShardingKey] != "":
		sp.MessageType = v2.MessageType_FIFO
	}
	if v := props[codec.PropertyTags]; v != "" {
		sp.Tag = proto.String(v)
	}
	if v := props[codec.PropertyKeys]; v != "" {
		sp.Keys = strings.Fields(v)
	}
	if v := props[codec.PropertyBornHost]; strings.TrimSpace(v) != "" {
		sp.BornHost = v
	} else if m.BornHost.IsValid() {
		sp.BornHost = m.BornHost.Addr().Unmap().String()
	}
	if m.StoreHost.IsValid() {
		sp.StoreHost = m.StoreHost.String()
	}
	if sec, err := strconv.ParseInt(props[codec.PropertyTimerDelaySec], 10, 64); err == nil {
		sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(opt.Now.UnixMilli() + sec*1000))
	} else if ms, err := strconv.ParseInt(props[codec.PropertyTimerDeliverMS], 10, 64); err == nil {
		sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(ms))
	}
	if v := props[codec.PropertyShardingKey]; v != "" {
		sp.MessageGroup = proto.String(v)
	}
	if v := props[codec.PropertyTraceContext]; v != "" {
		sp.TraceContext = proto.String(v)
	}
	if t, id := props[codec.PropertyDLQOriginTopic], props[codec.PropertyDLQOriginMessageID]; t != "" && id != "" {
		sp.DeadLetterQueue = &v2.DeadLetterQueue{Topic: t, MessageId: id}
	}
	body := m.Body
	if codec.IsCompressed(m.SysFlag) {
		sp.BodyEncoding = v2.Encoding_GZIP
		if codec.CompressionType(m.SysFlag) == codec.CompressionZLIB {
			if gz, err := zlibToGzip(body, opt.MaxInflatedBytes); err == nil {
				body = gz
			}
		}
	}
	sp.BodyDigest = &v2.Digest{Type: v2.DigestType_MD5, Checksum: md5Upper(body)}
	for k := range props {
		if IsReservedProperty(k) || shownAsSystemProperty[k] {
			delete(props, k)
		}
	}
	if ok {
		sp.ReceiptHandle = &handle
		sp.InvisibleDuration = durationpb.New(time.Duration(ei.InvisibleTime) * time.Millisecond)
	}
	return &v2.Message{Topic: &v2.Resource{Name: validUTF8(m.Topic)}, UserProperties: props, SystemProperties: sp, Body: body}, nil
}

// sameAsMapMessageOf fails t unless MessageOf and RecordMessage of rec
// give what mapMessageOf gives.
func sameAsMapMessageOf(t *testing.T, rec *codec.MessageExt, opt DeliveryOptions) {
	t.Helper()
	want, werr := mapMessageOf(rec, opt)
	got, err := MessageOf(rec, opt)
	_, hasCK := rec.Property(codec.PropertyPopCK)
	if (err != nil) != (werr != nil || !hasCK) {
		t.Fatalf("MessageOf error %v, plain conversion error %v (POP_CK present: %v)", err, werr, hasCK)
	}
	if err == nil && !proto.Equal(got, want) {
		t.Fatalf("MessageOf differs:\n got %v\nwant %v", got, want)
	}
	if err == nil {
		wireRoundTrip(t, got)
	}
	if werr == nil {
		want.SystemProperties.ReceiptHandle, want.SystemProperties.InvisibleDuration = nil, nil
		if got := RecordMessage(rec, opt); !proto.Equal(got, want) {
			t.Fatalf("RecordMessage differs:\n got %v\nwant %v", got, want)
		}
	}
}

// MessageOf and RecordMessage give what the plain map-based conversion
// gives, for records with every property they read, repeated names,
// reserved, transient and user properties, invalid UTF-8 and bad values.
func TestMessageOfMatchesMapConversion(t *testing.T) {
	ck := "POP_CK\x015 1700000000000 60000 1 0 b 0 7\x02"
	cases := []string{
		ck,
		ck + "UNIQ_KEY\x01ID1\x02TAGS\x01bench\x02PGROUP\x01T\x02__BORNHOST\x01h:1\x02BORN_TIMESTAMP\x011\x02WAIT\x01true\x02",
		ck + "TAGS\x01a\x02TAGS\x01b\x02KEYS\x01 k1  k2 \x02color\x01red\x02color\x01blue\x02size\x01L\x02",
		ck + "__SHARDINGKEY\x01g\x02TRACE_CONTEXT\x01tc\x02__transactionCheckImmunityTimeInSeconds\x0130\x02",
		ck + "DLQ_ORIGIN_TOPIC\x01T0\x02DLQ_ORIGIN_MESSAGE_ID\x01ID0\x02__RMQ.TRANSIENT.X\x011\x02CLUSTER\x01c\x02",
		ck + "DLQ_ORIGIN_TOPIC\x01T0\x02TRAN_MSG\x01true\x02DELAY\x013\x02",
		ck + "TIMER_DELAY_SEC\x0130\x02TIMER_DELIVER_MS\x011700000009999\x02",
		ck + "TIMER_DELAY_SEC\x01x\x02TIMER_DELIVER_MS\x011700000009999\x02",
		ck + "TIMER_DELIVER_MS\x01soon\x02__BORNHOST\x01 \x02",
		ck + "TAGS\x01\xff\xfe\x02k\xc3\x01v\xe2\x82\x02UNIQ_KEY\x01\x80\x02",
		"POP_CK\x015 1700000000000 60000 1 0 b 0 7 1234\x02",
		"POP_CK\x015 x\x02TAGS\x01a\x02",
		"TAGS\x01a\x02u\x01v\x02",
	}
	for _, props := range cases {
		t.Run(strconv.Quote(props), func(t *testing.T) {
			rec := codec.MessageExt{
				Message: codec.Message{Topic: "T\xff", Body: []byte("body"), Properties: props},
				QueueID: 3, QueueOffset: 7, PhysicalOffset: 99, ReconsumeTimes: 2,
				BornTimestamp: -1, StoreTimestamp: 1_700_000_000_123,
				BornHost: netip.MustParseAddrPort("[::ffff:192.0.2.9]:4000"), StoreHost: testStore,
			}
			sameAsMapMessageOf(t, &rec, DeliveryOptions{Now: testNow})
			rec.StoreHost = netip.MustParseAddrPort("[2001:db8::1]:10911")
			rec.BornHost = netip.AddrPort{}
			sameAsMapMessageOf(t, &rec, DeliveryOptions{Now: testNow})
		})
	}
}

// benchRecord is a popped record shaped as the message of a v5 producer
// (popshim bench grpc-send): no user properties, a 128-byte body.
func benchRecord() codec.MessageExt {
	return codec.MessageExt{
		Message: codec.Message{Topic: "BenchTopic", Body: make([]byte, 128),
			Properties: "UNIQ_KEY\x0101A1B2C3D4E5F60718293A4B5C6D7E8F90\x02TAGS\x01bench\x02PGROUP\x01BenchTopic\x02" +
				"__BORNHOST\x01bench-host\x02BORN_TIMESTAMP\x011700000000000\x02POP_CK\x0141 1700000000000 20000 3 0 popshim-a 2 41\x02"},
		QueueID: 2, QueueOffset: 41, PhysicalOffset: 123456789, StoreHost: testStore,
	}
}

// BenchmarkMessageOf converts a record shaped as a v5 producer's message
// comes back from a POP (no user properties); the map sub-benchmark is
// the plain conversion, for comparison.
func BenchmarkMessageOf(b *testing.B) {
	rec := benchRecord()
	for _, c := range []struct {
		name string
		conv func(*codec.MessageExt, DeliveryOptions) (*v2.Message, error)
	}{{"parts", MessageOf}, {"map", mapMessageOf}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.conv(&rec, DeliveryOptions{Now: testNow}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
