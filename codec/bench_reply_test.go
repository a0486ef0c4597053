package codec

import "testing"

// BenchmarkAppendFrameAckResponse encodes the SUCCESS reply to an ACK (no
// extFields, no remark, no body) into a reused buffer, as conn.reply does.
func BenchmarkAppendFrameAckResponse(b *testing.B) {
	req := &Command{Code: RequestAckMessage, Opaque: 123456}
	out := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		out = AppendFrame(out[:0], NewResponse(req, Success, ""))
	}
}
