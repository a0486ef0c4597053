package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fuzzMaxFrame is a small frame cap so fuzzing reaches the too-large path.
const fuzzMaxFrame = 1 << 16

func goldenSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, c := range sampleCommands() {
		out = append(out, AppendFrame(nil, c), AppendFrameBinary(nil, c))
	}
	return out
}

func commandBytes(c *Command) int {
	n := len(c.Body) + len(c.Remark) + len(c.Language)
	for k, v := range c.ExtFields {
		n += len(k) + len(v)
	}
	return n
}

// FuzzDecodeFrame feeds the input through the streaming PeekFrame /
// DecodeFrame loop in pieces cut at fuzzer-chosen points and checks: no
// panic; the split result equals the one-piece result; the loop never holds
// more than one capped frame plus the piece just read; and no decoded command
// carries more than 3 bytes (UTF-8 repair) per frame byte.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		f.Add(s, uint64(0x0102030405060708))
		f.Add(append(s, s...), uint64(1))
	}
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}, uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, cuts uint64) {
		whole := frameStream{maxFrame: fuzzMaxFrame}
		want, wantErr := whole.feed(data)
		split := frameStream{maxFrame: fuzzMaxFrame}
		var got []*Command
		var gotErr error
		rest := data
		for i := 0; len(rest) > 0 && gotErr == nil; i++ {
			n := 1 + int(cuts>>(8*(i%8))&0xff)%len(rest)
			var cs []*Command
			cs, gotErr = split.feed(rest[:n])
			got = append(got, cs...)
			if split.maxHeld > fuzzMaxFrame+n {
				t.Fatalf("stream holds %d bytes with cap %d and piece %d", split.maxHeld, fuzzMaxFrame, n)
			}
			rest = rest[n:]
		}
		if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("split decoding differs: %d/%v vs %d/%v", len(got), gotErr, len(want), wantErr)
		}
		for _, c := range got {
			if commandBytes(c) > 3*fuzzMaxFrame {
				t.Fatalf("decoded command holds %d bytes from a frame of at most %d", commandBytes(c), fuzzMaxFrame)
			}
			if _, err := DecodeFrame(AppendFrame(nil, c)); err != nil {
				t.Fatalf("re-encoded frame does not decode: %v", err)
			}
		}
	})
}

// oracleHeader decodes a JSON header with encoding/json under the rules
// decodeJSONHeader documents: members apply in order, so every occurrence
// of a repeated member must be valid and the last one wins; null resets a
// member to its default (and deletes an extFields key).
func oracleHeader(b []byte) (Command, error) {
	c := Command{Language: "JAVA"}
	if !json.Valid(b) {
		return c, errors.New("invalid JSON")
	}
	members, err := oracleMembers(b)
	if err != nil {
		return c, err
	}
	num := func(v any, dst *int32) error {
		switch n := v.(type) {
		case nil:
			*dst = 0
		case string, json.Number:
			i, err := strconv.ParseInt(fmt.Sprint(n), 10, 32)
			if err != nil {
				return err
			}
			*dst = int32(i)
		default:
			return errors.New("not a number")
		}
		return nil
	}
	ints := map[string]*int32{"code": &c.Code, "version": &c.Version, "opaque": &c.Opaque, "flag": &c.Flag}
	for _, m := range members {
		if dst, ok := ints[m.key]; ok {
			v, err := oracleValue(m.raw)
			if err != nil {
				return c, err
			}
			if err := num(v, dst); err != nil {
				return c, err
			}
			continue
		}
		switch m.key {
		case "language", "remark":
			v, err := oracleValue(m.raw)
			if err != nil {
				return c, err
			}
			s, ok := v.(string)
			if v != nil && !ok {
				return c, errors.New(m.key)
			}
			if m.key == "remark" {
				c.Remark = s
			} else if c.Language = s; s == "" {
				c.Language = "JAVA"
			}
		case "extFields":
			if bytes.Equal(bytes.TrimSpace(m.raw), []byte("null")) {
				c.ExtFields = nil
				continue
			}
			ext, err := oracleMembers(m.raw)
			if err != nil {
				return c, errors.New("extFields")
			}
			c.ExtFields = map[string]string{}
			for _, e := range ext {
				v, err := oracleValue(e.raw)
				if err != nil {
					return c, err
				}
				switch x := v.(type) {
				case string:
					c.ExtFields[e.key] = x
				case json.Number:
					c.ExtFields[e.key] = string(x)
				case bool:
					c.ExtFields[e.key] = strconv.FormatBool(x)
				case nil:
					delete(c.ExtFields, e.key)
				default:
					return c, errors.New("ext value")
				}
			}
		}
	}
	return c, nil
}

// oracleMember is one member of a JSON object, in document order.
type oracleMember struct {
	key string
	raw json.RawMessage
}

// oracleMembers lists the members of the JSON object b in order, repeats
// included; b that is not an object is an error.
func oracleMembers(b []byte) ([]oracleMember, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []oracleMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var m oracleMember
		m.key, _ = tok.(string)
		if err := dec.Decode(&m.raw); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// oracleValue decodes one JSON value with numbers kept as json.Number.
func oracleValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// FuzzDecodeHeader checks the hand-written JSON header scanner against
// encoding/json: both accept or both reject, and accepted headers decode
// to the same command.
func FuzzDecodeHeader(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		if s[4] == SerializeJSON {
			f.Add(s[8 : 8+int(binary.BigEndian.Uint32(s[4:])&0xFFFFFF)])
		}
	}
	for _, s := range []string{`{"code":34,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{}}`,
		`{"extFields":{"a":1,"b":true,"c":null,"d":"\ud83d\ude00\ud800"},"x":[{"y":null}],"code":-0}`, `{"remark":"\u00e9\xff"}`, `null`, ` {} `,
		`{"opaque":"","opaque":10}`, `{"opaque":7,"opaque":null,"language":"GO","language":null}`, `{"extFields":{"a":[1],"a":"x"}}`, `{"extFields":{"a":"1","a":null},"extFields":{"b":2}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got Command
		err := decodeJSONHeaderAs(b, &got, false)
		if err != nil && strings.Contains(err.Error(), "nested too deep") {
			t.Skip()
		}
		want, wantErr := oracleHeader(b)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: scanner error %v, oracle error %v", b, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nscanner %+v\n oracle %+v", b, got, want)
		}
		if err != nil && !errors.Is(err, ErrBadHeader) {
			t.Fatalf("error does not wrap ErrBadHeader: %v", err)
		}
	})
}

// FuzzDecodeMessage decodes arbitrary bytes as stored records and batch
// bodies. No panic; copying and aliasing decoders agree; a decoded record
// re-encodes to a record that decodes to the same message.
func FuzzDecodeMessage(f *testing.F) {
	f.Add(encodeRecord(nil, sampleMessage()))
	v6 := sampleMessage()
	v6.StoreHost = netip.MustParseAddrPort("[2001:db8::9]:10911")
	f.Add(encodeRecord(nil, v6))
	b, _ := AppendBatchEntry(nil, &Message{Body: []byte("m1"), Properties: "UNIQ_KEY\x01ID1\x02"})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeBatchBody(b) // must not panic
		_, _ = DecodeMessages(b)
		m, n, err := DecodeMessage(b)
		u, un, uerr := UnsafeDecodeMessage(b)
		if (err == nil) != (uerr == nil) || n != un {
			t.Fatalf("copying and aliasing decoders disagree: %v / %v", err, uerr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(m, u) || n > len(b) {
			t.Fatalf("copying and aliasing decoders disagree:\n%+v\n%+v", m, u)
		}
		re, err := AppendMessage(nil, &m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2, _, err := DecodeMessage(re)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		norm := func(x MessageExt) MessageExt {
			x.BodyCRC, x.MagicCode, x.StoreSize = 0, 0, 0
			x.SysFlag &^= SysFlagBornHostV6 | SysFlagStoreHostV6
			x.BornHost = netipUnmap(x.BornHost)
			x.StoreHost = netipUnmap(x.StoreHost)
			return x
		}
		if !reflect.DeepEqual(norm(m), norm(m2)) {
			t.Fatalf("re-encode changed the message:\n%+v\n%+v", m, m2)
		}
	})
}
