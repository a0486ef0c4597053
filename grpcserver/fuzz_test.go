package grpcserver

import (
	"bytes"
	"compress/zlib"
	"io"
	"net/netip"
	"strings"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"

	"github.com/popshim/popshim/codec"
)

// FuzzZlibToGzip: whatever the input, a re-framed body inflates (as gzip)
// to exactly what the input inflates to (as zlib).
func FuzzZlibToGzip(f *testing.F) {
	f.Add(zlibOf(f, []byte("hello hello hello")))
	f.Add(zlibOf(f, nil))
	f.Add(zlibOf(f, bytes.Repeat([]byte{0, 1, 2, 3}, 1000)))
	f.Add([]byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	f.Add([]byte{0x78, 0xbb, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, z []byte) {
		gz, err := zlibToGzip(z, 1<<20)
		if err != nil {
			return
		}
		zr, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatalf("re-framed a body the zlib reader refuses: %v", err)
		}
		want, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("re-framed a body that does not inflate as zlib: %v", err)
		}
		if got := gunzip(t, gz); !bytes.Equal(got, want) {
			t.Fatalf("gzip inflates to %d bytes, zlib to %d", len(got), len(want))
		}
	})
}

func seedRecord(f *testing.F, sysFlag int32, body []byte, props string) {
	rec := codec.MessageExt{
		Message: codec.Message{Topic: "T", Body: body, Properties: props},
		QueueID: 1, QueueOffset: 9, PhysicalOffset: 77, SysFlag: sysFlag,
		BornHost: netip.MustParseAddrPort("192.0.2.1:1"), StoreHost: netip.MustParseAddrPort("[2001:db8::1]:10911"),
	}
	b, err := codec.AppendMessage(nil, &rec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

// FuzzMessageOf: any record codec decodes either converts to a v5 Message
// equal to the plain map-based conversion's (mapMessageOf) that marshals, whose handle parses back to the record's queue, offset
// and commit-log offset and whose digest is of the body sent, or is refused
// with an error.
func FuzzMessageOf(f *testing.F) {
	ck := "POP_CK\x019 1700000000000 60000 3 0 popshim-a 1 9\x02"
	seedRecord(f, 0, []byte("body"), ck+"TAGS\x01a\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01ID\x02x\x01y\x02")
	seedRecord(f, codec.SysFlagCompressed, zlibOf(f, []byte("zzzzzzzzzz")), ck+"TIMER_DELAY_SEC\x0110\x02")
	seedRecord(f, 0, nil, "POP_CK\x011 2\x02")
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, _, err := codec.DecodeMessage(b)
		if err != nil {
			return
		}
		sameAsMapMessageOf(t, &rec, DeliveryOptions{MaxInflatedBytes: 1 << 20})
		m, err := MessageOf(&rec, DeliveryOptions{MaxInflatedBytes: 1 << 20})
		if err != nil {
			return
		}
		if _, err := proto.Marshal(m); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		sp := m.GetSystemProperties()
		ei, err := ParseReceiptHandle(sp.GetReceiptHandle())
		if err != nil {
			t.Fatalf("issued handle %q does not parse: %v", sp.GetReceiptHandle(), err)
		}
		if ei.QueueID == rec.QueueID && ei.QueueOffset == rec.QueueOffset && ei.CommitLogOffset != rec.PhysicalOffset {
			ck, _ := rec.Property(codec.PropertyPopCK)
			if strings.Count(ck, " ") == 7 {
				t.Fatalf("handle %q lost the commit-log offset %d", sp.GetReceiptHandle(), rec.PhysicalOffset)
			}
		}
		if sp.GetBodyDigest().GetChecksum() != md5Upper(m.GetBody()) {
			t.Fatal("digest is not of the body sent")
		}
		for k := range m.GetUserProperties() {
			if IsReservedProperty(k) {
				t.Fatalf("reserved property %q shown to the consumer", k)
			}
		}
	})
}

// FuzzSendInputOf: a message is refused with a Status, or its properties
// string decodes back to the values that went in.
func FuzzSendInputOf(f *testing.F) {
	f.Add("TopicA", "TagA", "key", "01ABC", "color", "red", "grp", []byte("body"))
	f.Add("T", "", "", "id", "UNIQ_KEY", "x", "", []byte("b"))
	f.Add("T", "a|b", " ", "id", "k", "v\x02", "g", []byte{})
	f.Fuzz(func(t *testing.T, topic, tag, key, id, pk, pv, group string, body []byte) {
		m := &v2.Message{
			Topic:          &v2.Resource{Name: topic},
			UserProperties: map[string]string{pk: pv},
			SystemProperties: &v2.SystemProperties{
				Tag: &tag, Keys: []string{key}, MessageId: id, MessageGroup: &group,
			},
			Body: body,
		}
		in, st := SendInputOf(m, testPeer, testNow, DefaultSendLimits())
		if st != nil {
			if st.GetCode() == v2.Code_OK || st.GetMessage() == "" {
				t.Fatalf("refusal without code or message: %v", st)
			}
			return
		}
		p := codec.DecodeProperties(in.Header.Properties)
		if pv != "" && p[pk] != pv {
			t.Fatalf("user property %q=%q stored as %q", pk, pv, p[pk])
		}
		if p[codec.PropertyUniqClientMessageIDKeyIdx] != id || (tag != "" && p[codec.PropertyTags] != tag) {
			t.Fatalf("id/tag not stored: %q", p)
		}
		if group != "" && p[codec.PropertyShardingKey] != group {
			t.Fatalf("group not stored: %q", p)
		}
		if !bytes.Equal(in.Body, body) {
			t.Fatal("IDENTITY body changed")
		}
	})
}
