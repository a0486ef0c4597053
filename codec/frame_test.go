package codec

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func sampleCommands() []*Command {
	return []*Command{
		{Code: RequestAckMessage, Language: "JAVA", Version: 479, Opaque: 101, ExtFields: map[string]string{"topic": "T", "queueId": "1"}},
		{Code: Success, Language: "JAVA", Version: 479, Opaque: -7, Flag: FlagResponse, Remark: "FOUND"},
		{Code: RequestHeartBeat, Language: "GO", Version: 317, Opaque: 1, Flag: FlagOneway, Body: []byte(`{"clientID":"x"}`)},
		{Code: RequestSendMessageV2, Language: "JAVA", Version: 479, Opaque: 2147483647, Remark: "quote \" back \\ nl \n tab \t ctl \x01 é ✓",
			ExtFields: map[string]string{"i": "TAGS\x01A\x02KEYS\x01k1 k2\x02", "uni": "日本語", "empty": "x", "<&>": "a/b"}, Body: []byte{0, 1, 2, 0xff}},
		{Code: -1, Language: "NODE_JS", Version: -2, Opaque: -2147483648, Flag: -1},
	}
}

func TestFrameRoundTrip(t *testing.T) {
	for i, c := range sampleCommands() {
		for _, binaryHeader := range []bool{false, true} {
			enc := AppendFrame
			want := *c
			want.SerializeType = SerializeJSON
			if binaryHeader {
				enc = AppendFrameBinary
				want.SerializeType = SerializeRocketMQ
				want.Code = int32(int16(c.Code)) // ROCKETMQ carries 16-bit codes
				want.Version = int32(int16(c.Version))
			}
			frame := enc([]byte("prefix"), c)[len("prefix"):]
			n, err := PeekFrame(frame, DefaultMaxFrame)
			if err != nil || n != len(frame) {
				t.Fatalf("%d: PeekFrame = %d, %v; frame %d bytes", i, n, err, len(frame))
			}
			if n, _ := PeekFrame(frame[:len(frame)-1], DefaultMaxFrame); n != 0 {
				t.Fatalf("%d: PeekFrame on a partial frame = %d", i, n)
			}
			got, err := DecodeFrame(frame)
			if err != nil {
				t.Fatalf("%d binary=%v: %v", i, binaryHeader, err)
			}
			got = untyped(got)
			if len(want.ExtFields) == 0 {
				want.ExtFields = nil
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("%d binary=%v:\n got %+v\nwant %+v", i, binaryHeader, got, &want)
			}
			// The decoded command owns its memory.
			for j := range frame {
				frame[j] = 0xEE
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("%d: decoded command aliases the frame", i)
			}
		}
	}
}

func TestPeekFrameErrors(t *testing.T) {
	be := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	if n, err := PeekFrame([]byte{0, 0, 0}, 100); n != 0 || err != nil {
		t.Fatal("3 bytes must ask for more")
	}
	if _, err := PeekFrame(be(0xFFFFFFFF), 100); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("negative length: %v", err)
	}
	if _, err := PeekFrame(be(3), 100); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("length 3: %v", err)
	}
	if _, err := PeekFrame(be(97), 100); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("101-byte frame with max 100: %v", err)
	}
	if n, err := PeekFrame(be(96), 100); n != 0 || err != nil {
		t.Fatalf("100-byte frame with max 100 must wait: %d %v", n, err)
	}
	if _, err := PeekFrame(be(16777213), DefaultMaxFrame); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Java's limit is length 16777212: %v", err)
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	frame := func(typ byte, header, body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)+len(body)))
		b = binary.BigEndian.AppendUint32(b, uint32(typ)<<24|uint32(len(header)))
		return append(append(b, header...), body...)
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short", []byte{0, 0, 0, 4, 0}, ErrBadFrame},
		{"length mismatch", append(frame(0, `{}`, ""), 0), ErrBadFrame},
		{"hlen beyond frame", func() []byte { b := frame(0, `{}`, ""); b[7] = 9; return b }(), ErrBadFrame},
		{"unknown type", frame(2, `{}`, ""), ErrBadHeader},
		{"json garbage", frame(0, `{"code":`, ""), ErrBadHeader},
		{"json trailing", frame(0, `{} {}`, ""), ErrBadHeader},
		{"json code not int32", frame(0, `{"code":2147483648}`, ""), ErrBadHeader},
		{"json code fraction", frame(0, `{"code":1.5}`, ""), ErrBadHeader},
		{"json code string", frame(0, `{"code":"1x"}`, ""), ErrBadHeader},
		{"json ext array", frame(0, `{"extFields":{"a":[1]}}`, ""), ErrBadHeader},
		{"json not object", frame(0, `[]`, ""), ErrBadHeader},
		{"binary short", frame(1, strings.Repeat("\x00", 20), ""), ErrBadHeader},
		{"binary remark too long", frame(1, "\x00\x22\x00\x01\xdf\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x00", ""), ErrBadHeader},
		{"binary ext len mismatch", frame(1, "\x00\x22\x00\x01\xdf\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05", ""), ErrBadHeader},
		{"binary ext entry short", frame(1, "\x00\x22\x00\x01\xdf\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x05a", ""), ErrBadHeader},
	}
	for _, c := range cases {
		if _, err := DecodeFrame(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestJSONHeaderShapes(t *testing.T) {
	cases := []struct {
		json string
		want Command
	}{
		// Go client: struct order, remark and extFields always present.
		{`{"code":34,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{}}`,
			Command{Code: 34, Language: "GO", Version: 317, Opaque: 1, ExtFields: map[string]string{}}},
		// Missing members keep defaults; unknown members of every type are skipped.
		{` { "opaque" : 5 , "x":{"y":[1,2.5e3,{"z":null}],"w":"\u00e9"},"t":true,"f":false,"n":null,"s":"\\\"" } `,
			Command{Language: "JAVA", Opaque: 5}},
		// Non-string scalar ext values keep their JSON text; null drops the entry.
		{`{"extFields":{"a":1,"b":-2.5e1,"c":true,"d":false,"e":null,"f":"x"}}`,
			Command{Language: "JAVA", ExtFields: map[string]string{"a": "1", "b": "-2.5e1", "c": "true", "d": "false", "f": "x"}}},
		// Escapes, surrogate pairs, lone surrogates, raw UTF-8.
		{`{"remark":"\ud83d\ude00 \ud800 x\/y \u0001","extFields":{"k\u0041":"v\n"}}`,
			Command{Language: "JAVA", Remark: "😀 \uFFFD x/y \x01", ExtFields: map[string]string{"kA": "v\n"}}},
		// null members fall back to defaults; later duplicates win.
		{`{"code":3,"code":null,"language":"GO","language":null,"remark":"a","remark":"b"}`,
			Command{Language: "JAVA", Remark: "b"}},
		{`{"language":""}`, Command{Language: "JAVA"}},
		{`{"language":"KLINGON"}`, Command{Language: "KLINGON"}},
	}
	for _, c := range cases {
		var got Command
		if err := decodeJSONHeader([]byte(c.json), &got); err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", c.json, got, c.want)
		}
	}
}

// frameStream is the streaming loop a connection runs: append what
// arrived, peek, decode every whole frame, keep the rest.
type frameStream struct {
	buf      []byte
	maxFrame int
	maxHeld  int
}

func (s *frameStream) feed(p []byte) ([]*Command, error) {
	s.buf = append(s.buf, p...)
	s.maxHeld = max(s.maxHeld, len(s.buf))
	var out []*Command
	for {
		n, err := PeekFrame(s.buf, s.maxFrame)
		if err != nil {
			return out, err
		}
		if n == 0 {
			return out, nil
		}
		c, err := DecodeFrame(s.buf[:n])
		if err != nil {
			return out, err
		}
		out = append(out, c)
		s.buf = s.buf[n:]
	}
}

func TestStreamSplits(t *testing.T) {
	var all []byte
	var want []*Command
	for _, c := range sampleCommands() {
		all = AppendFrame(all, c)
		all = AppendFrameBinary(all, c)
		a, _ := DecodeFrame(AppendFrame(nil, c))
		b, _ := DecodeFrame(AppendFrameBinary(nil, c))
		want = append(want, a, b)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		s := frameStream{maxFrame: DefaultMaxFrame}
		var got []*Command
		for rest := all; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 1+round%40))
			cs, err := s.feed(rest[:n])
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, cs...)
			rest = rest[n:]
		}
		if !reflect.DeepEqual(got, want) || len(s.buf) != 0 {
			t.Fatalf("round %d: split decoding differs (%d vs %d commands, %d bytes left)", round, len(got), len(want), len(s.buf))
		}
	}
}

// TestLanguageCodeName: LanguageCode.java names pass as they are; the v5
// SDKs' protobuf names map to the nearest enum name, anything else to
// OTHER.
func TestLanguageCodeName(t *testing.T) {
	for in, want := range map[string]string{
		"JAVA": "JAVA", "GO": "GO", "NODE_JS": "NODE_JS", "HTTP": "HTTP", "RUST": "RUST", "PYTHON": "PYTHON",
		"GOLANG": "GO", "DOT_NET": "DOTNET", "": "OTHER", "golang": "OTHER", "KOTLIN": "OTHER",
	} {
		if got := LanguageCodeName(in); got != want {
			t.Errorf("LanguageCodeName(%q) = %q, want %q", in, got, want)
		}
	}
}
