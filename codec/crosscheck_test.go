package codec

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// goHost formats a host the way the Go client does ("%s:%d", no brackets).
func goHost(h netip.AddrPort) string { return fmt.Sprintf("%s:%d", h.Addr().Unmap(), h.Port()) }

// TestCrossCheckGoClientDecodesRecords encodes stored records with
// AppendMessage and decodes the concatenated body with the Go client's own
// primitive.DecodeMessage, comparing every field.
func TestCrossCheckGoClientDecodesRecords(t *testing.T) {
	var zbuf bytes.Buffer
	zw := zlib.NewWriter(&zbuf)
	if _, err := zw.Write(bytes.Repeat([]byte("compressed body "), 50)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil { // flushes the compressed stream
		t.Fatal(err)
	}

	base := sampleMessage()
	base.SysFlag = 0
	v6 := sampleMessage()
	v6.SysFlag = 0
	v6.BornHost = netip.MustParseAddrPort("[2001:db8::1]:40000")
	v6.StoreHost = netip.MustParseAddrPort("[fe80::2]:10911")
	v6.Properties = "TAGS\x01B\x02"
	zipped := sampleMessage()
	zipped.SysFlag = SysFlagCompressed
	zipped.Body = zbuf.Bytes()
	retry := sampleMessage()
	retry.SysFlag = 0
	retry.Topic = PopRetryTopicV2("GID_demo", "TopicA")
	retry.ReconsumeTimes = 5
	retry.QueueOffset = 1<<40 + 3
	noProps := sampleMessage()
	noProps.SysFlag, noProps.Properties, noProps.Body = 0, "", nil
	in := []MessageExt{base, v6, zipped, retry, noProps}

	var body []byte
	for i := range in {
		var err error
		if body, err = AppendMessage(body, &in[i]); err != nil {
			t.Fatal(err)
		}
	}
	out := primitive.DecodeMessage(body)
	if len(out) != len(in) {
		t.Fatalf("Go client decoded %d messages, want %d", len(out), len(in))
	}
	ours, err := DecodeMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range out {
		m := &ours[i]
		wantBody := m.Body
		if IsCompressed(m.SysFlag) {
			wantBody = bytes.Repeat([]byte("compressed body "), 50)
		}
		checks := []struct {
			name      string
			got, want any
		}{
			{"topic", g.Topic, in[i].Topic},
			{"body", string(g.Body), string(wantBody)},
			{"flag", g.Flag, in[i].Flag},
			{"queueId", int32(g.Queue.QueueId), in[i].QueueID},
			{"queueOffset", g.QueueOffset, in[i].QueueOffset},
			{"commitLogOffset", g.CommitLogOffset, in[i].PhysicalOffset},
			{"reconsumeTimes", g.ReconsumeTimes, in[i].ReconsumeTimes},
			{"sysFlag", g.SysFlag, m.SysFlag},
			{"storeSize", g.StoreSize, int32(MessageRecordSize(&in[i]))},
			{"bodyCRC", g.BodyCRC, BodyCRC32(in[i].Body)},
			{"bornTimestamp", g.BornTimestamp, in[i].BornTimestamp},
			{"storeTimestamp", g.StoreTimestamp, in[i].StoreTimestamp},
			{"bornHost", g.BornHost, goHost(in[i].BornHost)},
			{"storeHost", g.StoreHost, goHost(in[i].StoreHost)},
			{"preparedTransactionOffset", g.PreparedTransactionOffset, in[i].PreparedTransactionOffset},
			{"properties", g.GetProperties(), DecodeProperties(in[i].Properties)},
			{"tags", g.GetTags(), func() string { v, _ := in[i].Property(PropertyTags); return v }()},
			{"offsetMsgId", g.OffsetMsgId, m.OffsetMsgID()},
			{"msgId", g.MsgId, m.MsgID()},
		}
		for _, c := range checks {
			if c.name == "properties" && len(in[i].Properties) == 0 && len(g.GetProperties()) == 0 {
				continue
			}
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("message %d %s: Go client %v, popshim %v", i, c.name, c.got, c.want)
			}
		}
	}
}

// TestCrossCheckBatchBody checks the batch body both ways: entries the Go
// producer marshals decode with DecodeBatchBody, and AppendBatchEntry output
// equals the Go client's Message.Marshal byte for byte.
func TestCrossCheckBatchBody(t *testing.T) {
	gms := []*primitive.Message{
		primitive.NewMessage("TopicA", []byte("m1")),
		primitive.NewMessage("TopicA", []byte("m2")),
		primitive.NewMessage("TopicA", nil),
	}
	gms[0].WithProperty(PropertyUniqClientMessageIDKeyIdx, "ID1")
	gms[1].WithTag("TagB")
	gms[1].WithKeys([]string{"k1", "k2"})
	gms[2].Flag = 9
	body := producer.MarshalMessageBatch(gms...)
	got, err := DecodeBatchBody(body)
	if err != nil || len(got) != len(gms) {
		t.Fatalf("decode Go batch: %d messages, %v", len(got), err)
	}
	for i, g := range gms {
		if got[i].Flag != g.Flag || string(got[i].Body) != string(g.Body) || !reflect.DeepEqual(DecodeProperties(got[i].Properties), g.GetProperties()) {
			t.Errorf("entry %d: %+v vs Go %v", i, got[i], g)
		}
	}
	// Single-property entries have a deterministic Go encoding: compare bytes.
	one, err := AppendBatchEntry(nil, &Message{Body: []byte("m1"), Properties: "UNIQ_KEY\x01ID1\x02"})
	if err != nil {
		t.Fatal(err)
	}
	requireSameBytes(t, "batch entry vs Go Message.Marshal", gms[0].Marshal(), one)
}
