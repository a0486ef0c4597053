package codec

import (
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"testing"
)

func benchGolden(b *testing.B, name string) []byte {
	b.Helper()
	g := readGolden(b, filepath.Join(goldenDir, name))
	return g.data
}

func BenchmarkDecodeFrameAckJSON(b *testing.B) {
	frame := benchGolden(b, "e01_ack_request.txt")
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := DecodeFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFrameSendV2JSON(b *testing.B) {
	frame := benchGolden(b, "e06_send_v2_request.txt")
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := DecodeFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFrameSendResponseBinary(b *testing.B) {
	frame := benchGolden(b, "e07_send_response_rocketmq.txt")
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := DecodeFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeHeaderStdlib is the encoding/json baseline for the
// scanner used by BenchmarkDecodeFrameAckJSON (same E1 header).
func BenchmarkDecodeHeaderStdlib(b *testing.B) {
	frame := benchGolden(b, "e01_ack_request.txt")
	header := frame[8 : 8+int(binary.BigEndian.Uint32(frame[4:])&0xFFFFFF)]
	var h struct {
		Code      int32             `json:"code"`
		Language  string            `json:"language"`
		Version   int32             `json:"version"`
		Opaque    int32             `json:"opaque"`
		Flag      int32             `json:"flag"`
		Remark    string            `json:"remark"`
		ExtFields map[string]string `json:"extFields"`
	}
	b.ReportAllocs()
	for b.Loop() {
		h.ExtFields = nil
		if err := json.Unmarshal(header, &h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAckRoundTrip(b *testing.B) {
	frame := benchGolden(b, "e01_ack_request.txt")
	out := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = ackRoundTrip(frame, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodePopResponse builds a POP SUCCESS frame with 32 records,
// as the POP handler does.
func BenchmarkEncodePopResponse(b *testing.B) {
	m := sampleMessage()
	var body []byte
	for i := 0; i < 32; i++ {
		m.QueueOffset = int64(i)
		body, _ = AppendMessage(body, &m)
	}
	offs := make([]int64, 32)
	for i := range offs {
		offs[i] = int64(i)
	}
	req := &Command{Opaque: 1}
	out := make([]byte, 0, 16<<10)
	var so, mo []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		resp := Command{Code: Success, Language: "JAVA", Version: CurrentVersion, Opaque: req.Opaque, Flag: FlagResponse, Remark: "FOUND", Body: body}
		so = AppendStartOffsetInfo(so[:0], RetryFlagNormal, 1, 0)
		mo = AppendMsgOffsetInfo(mo[:0], RetryFlagNormal, 1, offs)
		PopMessageResponseHeader{PopTime: 1700000000000, InvisibleTime: 60000, ReviveQid: 3, RestNum: 10,
			StartOffsetInfo: string(so), MsgOffsetInfo: string(mo)}.Encode(&resp)
		out = AppendFrame(out[:0], &resp)
	}
}

func BenchmarkAppendMessage(b *testing.B) {
	m := sampleMessage()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendMessage(buf[:0], &m)
	}
}

func BenchmarkDecodeMessage(b *testing.B) {
	rec := encodeRecord(nil, sampleMessage())
	b.ReportAllocs()
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		if _, _, err := DecodeMessage(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnsafeDecodeMessage(b *testing.B) {
	rec := encodeRecord(nil, sampleMessage())
	b.ReportAllocs()
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		if _, _, err := UnsafeDecodeMessage(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseExtraInfo(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseExtraInfo("40 1700000000000 60000 3 0 broker-a 1 42"); err != nil {
			b.Fatal(err)
		}
	}
}
