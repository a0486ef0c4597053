package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// sendResponseFrames returns the frame of a SEND response carrying h built
// with Encode (the ExtFields map) and with EncodeJSON.
func sendResponseFrames(h SendMessageResponseHeader) (viaMap, viaJSON []byte) {
	req := &Command{Opaque: 77}
	a := NewResponse(req, Success, "")
	h.Encode(a)
	b := NewResponse(req, Success, "")
	h.EncodeJSON(b)
	return AppendFrame(nil, a), AppendFrame(nil, b)
}

// EncodeJSON writes the bytes Encode does, for every combination of the
// optional fields, negative numbers, and strings that need escaping or
// are not valid UTF-8; the frame decodes back to the header.
func TestSendResponseEncodeJSONMatchesEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "C0A8011400002A9F0000000000100000", `q"u\o`, "tab\there", "\xff\xfe", "ünï", "a,b,c"}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	for i := range 2000 {
		h := SendMessageResponseHeader{MsgID: pick(), QueueID: rng.Int32N(64) - 8, QueueOffset: rng.Int64() - rng.Int64(),
			TransactionID: pick(), BatchUniqID: pick(), RecallHandle: pick(), MsgRegion: pick(), TraceOn: rng.IntN(2) == 0}
		viaMap, viaJSON := sendResponseFrames(h)
		if !bytes.Equal(viaMap, viaJSON) {
			t.Fatalf("case %d %+v:\n map  %q\n json %q", i, h, viaMap, viaJSON)
		}
		got, err := DecodeFrame(viaJSON)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		back, err := DecodeSendMessageResponseHeader(got.ExtMap())
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if back.QueueID != h.QueueID || back.QueueOffset != h.QueueOffset || back.TraceOn != h.TraceOn {
			t.Fatalf("case %d: decoded %+v from %+v", i, back, h)
		}
	}
}

// A SetExt after EncodeJSON leaves ExtFields alone in the frame.
func TestSendResponseSetExtAfterEncodeJSON(t *testing.T) {
	c := NewResponse(&Command{Opaque: 1}, Success, "")
	SendMessageResponseHeader{MsgID: "m", QueueID: 1}.EncodeJSON(c)
	c.SetExt("only", "this")
	got, err := DecodeFrame(AppendFrame(nil, c))
	if err != nil {
		t.Fatal(err)
	}
	if m := got.ExtMap(); len(m) != 1 || m["only"] != "this" {
		t.Fatalf("ext %v", m)
	}
}

func FuzzSendResponseEncodeJSON(f *testing.F) {
	f.Add("C0A8011400002A9F0000000000100000", int32(3), int64(99), "X", "", "", "", true)
	f.Fuzz(func(t *testing.T, msgID string, qid int32, off int64, txn, batch, recall, region string, trace bool) {
		h := SendMessageResponseHeader{MsgID: msgID, QueueID: qid, QueueOffset: off, TransactionID: txn, BatchUniqID: batch,
			RecallHandle: recall, MsgRegion: region, TraceOn: trace}
		viaMap, viaJSON := sendResponseFrames(h)
		if !bytes.Equal(viaMap, viaJSON) {
			t.Fatalf("%+v:\n map  %q\n json %q", h, viaMap, viaJSON)
		}
	})
}
