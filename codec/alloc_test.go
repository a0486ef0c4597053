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
