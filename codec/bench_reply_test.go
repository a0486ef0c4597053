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

// BenchmarkAppendFrameSendResponse encodes the SUCCESS reply to a SEND
// (msgId, queueId, queueOffset, transactionId, MSG_REGION, TRACE_ON) built
// with the ExtFields map (Encode) and pre-encoded (EncodeJSON, what
// handler.replySend uses), into a reused buffer.
func BenchmarkAppendFrameSendResponse(b *testing.B) {
	req := &Command{Code: RequestSendMessageV2, Opaque: 123456}
	h := SendMessageResponseHeader{MsgID: "7F00000100002A9F0000000012345678", QueueID: 3, QueueOffset: 1234567,
		TransactionID: "7F0000010001513B9F7E5A3C1D2E0000"}
	for _, c := range []struct {
		name   string
		encode func(SendMessageResponseHeader, *Command)
	}{{"map", SendMessageResponseHeader.Encode}, {"json", SendMessageResponseHeader.EncodeJSON}} {
		b.Run(c.name, func(b *testing.B) {
			out := make([]byte, 0, 512)
			b.ReportAllocs()
			for b.Loop() {
				resp := NewResponse(req, Success, "")
				c.encode(h, resp)
				out = AppendFrame(out[:0], resp)
			}
		})
	}
}
