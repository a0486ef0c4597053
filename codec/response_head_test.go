package codec

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"
)

// jsonFrame wraps a literal JSON header (and body) in a frame.
func jsonFrame(header, body string) []byte {
	f := make([]byte, 8, 8+len(header)+len(body))
	f = append(f, header...)
	f = append(f, body...)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	binary.BigEndian.PutUint32(f[4:], uint32(len(header)))
	return f
}

// requireSameHead checks DecodeResponseHead against DecodeFrame on frame:
// both fail (with the same sentinel) or both succeed with equal fields.
func requireSameHead(t *testing.T, name string, frame []byte) (ResponseHead, error) {
	t.Helper()
	h, err := DecodeResponseHead(frame)
	cmd, full := DecodeFrame(frame)
	if (err == nil) != (full == nil) {
		t.Fatalf("%s: DecodeResponseHead error %v, DecodeFrame error %v", name, err, full)
	}
	if err != nil {
		for _, sentinel := range []error{ErrBadFrame, ErrBadHeader} {
			if errors.Is(err, sentinel) != errors.Is(full, sentinel) {
				t.Fatalf("%s: errors wrap different sentinels: %v / %v", name, err, full)
			}
		}
		return h, err
	}
	want := ResponseHead{Code: cmd.Code, Opaque: cmd.Opaque, Flag: cmd.Flag, Remark: cmd.Remark}
	if h != want {
		t.Fatalf("%s: head %+v, DecodeFrame %+v", name, h, want)
	}
	return h, nil
}

// The replies a load generator sees: SUCCESS, SYSTEM_BUSY with a remark,
// an error with extFields and an escaped remark, plus the header shapes a
// Java or Go peer may send (nulls, strings for numbers, escaped keys,
// duplicates, whitespace, unknown members, binary header).
func TestDecodeResponseHead(t *testing.T) {
	busy := NewResponse(&Command{Opaque: 1_000_000_007}, SystemBusy, "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while")
	withExt := NewResponse(&Command{Opaque: 2147483647}, SystemError, "quote \" back \\ nl \n tab \t ctl \x01 é ✓ \xff")
	withExt.ExtFields = map[string]string{"popTime": "1700000000000", "invisibleTime": "60000", "reviveQid": "3", "k\"": "v\\"}
	withExt.Body = []byte("body bytes")
	cases := []struct {
		name   string
		frame  []byte
		code   int32
		opaque int32
		remark string
	}{
		{"success", AppendFrame(nil, NewResponse(&Command{Opaque: 1_234_567_890}, Success, "")), Success, 1_234_567_890, ""},
		{"system busy", AppendFrame(nil, busy), SystemBusy, 1_000_000_007, busy.Remark},
		{"error with extFields", AppendFrame(nil, withExt), SystemError, 2147483647, "quote \" back \\ nl \n tab \t ctl \x01 é ✓ \ufffd"},
		{"binary header", AppendFrameBinary(nil, withExt), SystemError, 2147483647, withExt.Remark},
		{"nulls and strings", jsonFrame(`{"code":"2","extFields":null,"flag":1,"language":null,"opaque":"-5","remark":null,"version":null}`, ""),
			SystemBusy, -5, ""},
		{"escaped keys, duplicates, whitespace", jsonFrame(" {\"c\\u006fde\" : 1 ,\"remark\":\"a\",\"x\":[{\"y\":[1,true,null]}],"+
			"\"remark\":\"\\ud83d\\ude00\\u00e9\",\"opaque\":7,\"opaque\":8,\"flag\":3,\"extFields\":{\"a\":1.5e3,\"b\":false,\"c\":null}}\n", "b"),
			1, 8, "😀é"},
		{"canonical extremes", jsonFrame(`{"code":-2147483648,"flag":1,"language":"","opaque":2147483647,"serializeTypeCurrentRPC":"JSON","version":-0}`, ""),
			-2147483648, 2147483647, ""},
		{"canonical with body", jsonFrame(`{"code":0,"flag":1,"language":"GO_1","opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`, "xyz"),
			0, 0, ""},
		{"language with escape", jsonFrame(`{"code":0,"flag":1,"language":"J\u0041VA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":479}`, ""),
			0, 3, ""},
	}
	for _, c := range cases {
		h, err := requireSameHead(t, c.name, c.frame)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if h.Code != c.code || h.Opaque != c.opaque || h.Remark != c.remark || !h.IsResponse() {
			t.Fatalf("%s: got %+v, want code %d opaque %d remark %q, response", c.name, h, c.code, c.opaque, c.remark)
		}
	}
	request := AppendFrame(nil, NewRequest(RequestAckMessage, 42, map[string]string{"topic": "T"}, nil))
	if h, _ := requireSameHead(t, "request", request); h.IsResponse() || h.Opaque != 42 {
		t.Fatalf("request: %+v", h)
	}
}

// Malformed frames fail exactly where DecodeFrame fails, including errors
// inside members the head does not keep (version, language, extFields,
// unknown members) and data after the object.
func TestDecodeResponseHeadErrors(t *testing.T) {
	ok := AppendFrame(nil, NewResponse(&Command{Opaque: 9}, Success, ""))
	short := ok[:7]
	badLen := append([]byte(nil), ok...)
	binary.BigEndian.PutUint32(badLen, 5)
	badHlen := append([]byte(nil), ok...)
	binary.BigEndian.PutUint32(badHlen[4:], 1<<20)
	badType := append([]byte(nil), ok...)
	badType[4] = 7
	badRemark := AppendFrameBinary(nil, NewResponse(&Command{}, 0, "r"))
	binary.BigEndian.PutUint32(badRemark[8+13:], 100)
	for name, frame := range map[string][]byte{
		"short": short, "length word": badLen, "header length": badHlen, "serialize type": badType,
		"version":           jsonFrame(`{"code":0,"version":4294967296}`, ""),
		"language":          jsonFrame(`{"code":0,"language":5}`, ""),
		"extFields object":  jsonFrame(`{"code":0,"extFields":{"a":{}}}`, ""),
		"extFields array":   jsonFrame(`{"code":0,"extFields":[]}`, ""),
		"extFields literal": jsonFrame(`{"code":0,"extFields":{"a":nul}}`, ""),
		"unknown member":    jsonFrame(`{"code":0,"x":[1,}`, ""),
		"trailing data":     jsonFrame(`{"code":0} x`, ""),
		"remark escape":     jsonFrame(`{"code":0,"remark":"\q"}`, ""),
		"opaque range":      jsonFrame(`{"opaque":2147483648}`, ""),
		"code float":        jsonFrame(`{"code":1.5}`, ""),
		"not an object":     jsonFrame(`null`, ""),
		"binary remark len": badRemark,
		"canonical + data":  jsonFrame(`{"code":0,"flag":1,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}}`, ""),
		"canonical 01":      jsonFrame(`{"code":01,"flag":1,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}`, ""),
		"canonical 1e2":     jsonFrame(`{"code":0,"flag":1,"language":"JAVA","opaque":1e2,"serializeTypeCurrentRPC":"JSON","version":479}`, ""),
		"canonical range":   jsonFrame(`{"code":0,"flag":1,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":2147483648}`, ""),
		"canonical -":       jsonFrame(`{"code":-,"flag":1,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}`, ""),
	} {
		if _, err := requireSameHead(t, name, frame); err == nil {
			t.Fatalf("%s: accepted", name)
		}
	}
}

// Every frame of the golden corpus (testdata/codec) decodes to the same
// head as DecodeFrame gives, whole and with each byte of its header
// flipped in turn (so that both accept and reject paths are compared).
func TestDecodeResponseHeadGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s: %v", goldenDir, err)
	}
	frames := 0
	for _, path := range files {
		g := readGolden(t, path)
		if g.dir["kind"] != "frame" {
			continue
		}
		frames++
		name := filepath.Base(path)
		if _, err := requireSameHead(t, name, g.data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		hlen := int(binary.BigEndian.Uint32(g.data[4:]) & 0xFFFFFF)
		for i := 8; i < 8+hlen && i < len(g.data); i++ {
			for _, b := range []byte{'"', '\\', '}', ',', 'x', 0} {
				mut := append([]byte(nil), g.data...)
				mut[i] = b
				_, _ = requireSameHead(t, name, mut)
			}
		}
	}
	if frames < 10 {
		t.Fatalf("only %d golden frames", frames)
	}
}

// An ACK reply without a remark takes the canonical-shape path and decodes
// without allocating.
func TestDecodeResponseHeadAllocs(t *testing.T) {
	frame := AppendFrame(nil, NewResponse(&Command{Opaque: 1_234_567_890}, Success, ""))
	var h ResponseHead
	if !decodeCanonicalHead(frame[8:], &h) || h != (ResponseHead{Code: Success, Opaque: 1_234_567_890, Flag: FlagResponse}) {
		t.Fatalf("ACK reply not decoded on the canonical path: %+v", h)
	}
	n := testing.AllocsPerRun(100, func() {
		if _, err := DecodeResponseHead(frame); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per ACK reply, want 0", n)
	}
}

// FuzzDecodeResponseHead: for any bytes, DecodeResponseHead agrees with
// DecodeFrame (same success, same fields, same error sentinel).
func FuzzDecodeResponseHead(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		f.Add(s)
	}
	f.Add(jsonFrame(`{"code":"2","extFields":{"a":1,"b":true,"c":null},"remark":"\u00e9\ud800","x":[{"y":null}]}`, "body"))
	f.Fuzz(func(t *testing.T, frame []byte) {
		_, err := requireSameHead(t, "fuzz", frame)
		if err != nil && !errors.Is(err, ErrBadFrame) && !errors.Is(err, ErrBadHeader) {
			t.Fatalf("error wraps neither ErrBadFrame nor ErrBadHeader: %v", err)
		}
	})
}

func BenchmarkDecodeAckReply(b *testing.B) {
	frame := AppendFrame(nil, NewResponse(&Command{Opaque: 1_234_567_890}, Success, ""))
	b.Run("DecodeFrame", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeFrame(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeResponseHead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeResponseHead(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
}
