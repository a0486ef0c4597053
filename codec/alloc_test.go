package codec

import (
	"path/filepath"
	"testing"
)

func e1Frame(tb testing.TB) []byte {
	tb.Helper()
	g := readGolden(tb, filepath.Join(goldenDir, "e01_ack_request.txt"))
	return g.data
}

// ackRoundTrip is the per-request work of an ACK on the event loop:
// decode the frame, decode the typed header and the receipt, and encode
// the SUCCESS response into a reused buffer.
func ackRoundTrip(frame, out []byte) ([]byte, error) {
	req, err := DecodeFrame(frame)
	if err != nil {
		return out, err
	}
	h, err := DecodeAckMessageRequest(req)
	if err != nil {
		return out, err
	}
	if _, err := ParseExtraInfo(h.ExtraInfo); err != nil {
		return out, err
	}
	resp := Command{Code: Success, Language: "JAVA", Version: CurrentVersion, Opaque: req.Opaque, Flag: FlagResponse}
	return AppendFrame(out[:0], &resp), nil
}

// maxAckAllocs pins the allocations of ackRoundTrip: the Command and one
// arena holding every decoded string. The ACK's fields go into the
// Command's slots, not an extFields map (typed_ext.go); the typed header,
// the receipt and the response encoding allocate nothing.
const maxAckAllocs = 2

func TestAllocsAck(t *testing.T) {
	frame := e1Frame(t)
	out := make([]byte, 0, 256)
	var err error
	n := testing.AllocsPerRun(200, func() { out, err = ackRoundTrip(frame, out) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ACK decode + response encode: %.0f allocations", n)
	if n > maxAckAllocs {
		t.Fatalf("ACK decode + response encode: %.0f allocations, want ≤ %d", n, maxAckAllocs)
	}
	ext := map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "1", "offset": "42", "extraInfo": "40 1700000000000 60000 3 0 broker-a 1 42"}
	if n := testing.AllocsPerRun(200, func() {
		h, _ := DecodeAckMessageRequestHeader(ext)
		_, _ = ParseExtraInfo(h.ExtraInfo)
	}); n != 0 {
		t.Fatalf("typed ACK header + receipt: %.0f allocations, want 0", n)
	}
	rec := encodeRecord(nil, sampleMessage())
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(200, func() {
		m, _, _ := UnsafeDecodeMessage(rec)
		buf, _ = AppendMessage(buf[:0], &m)
	}); n != 0 {
		t.Fatalf("UnsafeDecodeMessage + AppendMessage: %.0f allocations, want 0", n)
	}
}

// maxSendAllocs pins the allocations of decoding a SEND_MESSAGE_V2 frame
// and its header: the Command, the arena of decoded strings and the body
// copy. Its fourteen fields go into the slots (typed_ext.go); through an
// ExtFields map the same decode took a map and its growth besides.
const maxSendAllocs = 3

func TestAllocsSendV2(t *testing.T) {
	src := &Command{Code: RequestSendMessageV2, Language: "JAVA", Version: CurrentVersion, Opaque: 7,
		Body: []byte("hello, popshim")}
	SendMessageRequestHeader{ProducerGroup: "PG", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 1, BornTimestamp: 1700000000000, Properties: "UNIQ_KEY\x01AB\x02WAIT\x01true\x02"}.EncodeV2(src)
	frame := AppendFrame(nil, src)
	decode := func(typed bool) (SendMessageRequestHeader, error) {
		c, err := decodeFrameAs(frame, typed)
		if err != nil {
			return SendMessageRequestHeader{}, err
		}
		if typed {
			return DecodeSendRequest(c)
		}
		return DecodeSendRequestHeader(c.Code, c.ExtFields)
	}
	var h SendMessageRequestHeader
	var err error
	typed := testing.AllocsPerRun(200, func() { h, err = decode(true) })
	if err != nil || h.Topic != "T" || h.QueueID != 1 || h.Properties == "" {
		t.Fatalf("typed decode: %+v %v", h, err)
	}
	viaMap := testing.AllocsPerRun(200, func() { h, err = decode(false) })
	if err != nil || h.Topic != "T" {
		t.Fatalf("map decode: %+v %v", h, err)
	}
	t.Logf("SEND_MESSAGE_V2 decode: %.0f allocations typed, %.0f through the map", typed, viaMap)
	if typed > maxSendAllocs || typed >= viaMap {
		t.Fatalf("SEND_MESSAGE_V2 decode: %.0f allocations typed (want ≤ %d), %.0f through the map", typed, maxSendAllocs, viaMap)
	}
}
