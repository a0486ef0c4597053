package codec

import (
	"encoding/binary"
	"fmt"
)

// ResponseHead is the part of a frame's header that a caller matching
// responses to requests needs: the response code, the opaque, the flag bits
// and the remark (RemotingCommand.java code, opaque, flag, remark). It is
// what a load generator checks of an ACK_MESSAGE reply; everything else of
// the header (language, version, extFields) and the body are left out.
type ResponseHead struct {
	Code   int32
	Opaque int32
	Flag   int32
	// Remark is "" when absent or null. It is the only field that may
	// allocate (a copy of the remark bytes, escapes resolved).
	Remark string
}

// IsResponse reports whether flag bit 0 is set.
func (h *ResponseHead) IsResponse() bool { return h.Flag&FlagResponse != 0 }

// DecodeResponseHead decodes the code, opaque, flag and remark of one whole
// frame (length prefix included, as sized by PeekFrame). For every frame it
// agrees with DecodeFrame: it fails exactly when DecodeFrame fails (errors
// wrap ErrBadFrame or ErrBadHeader, with DecodeFrame's offsets for frame
// errors), and otherwise its fields equal those of DecodeFrame's Command.
// A JSON header is validated as fully as decodeJSONHeader does it (every
// member, extFields values included) without building the ext map, the
// language or the Command, so decoding a header without a remark allocates
// nothing. A ROCKETMQ binary header is decoded by DecodeFrame (no peer
// answers in it; it exists for completeness). Any goroutine; frame is only
// read and not retained.
func DecodeResponseHead(frame []byte) (ResponseHead, error) {
	if len(frame) < 8 {
		return ResponseHead{}, fmt.Errorf("%w: %d bytes, need at least 8", ErrBadFrame, len(frame))
	}
	length := int(binary.BigEndian.Uint32(frame))
	if length != len(frame)-4 {
		return ResponseHead{}, fmt.Errorf("%w: length word %d, frame has %d", ErrBadFrame, length, len(frame)-4)
	}
	word := binary.BigEndian.Uint32(frame[4:])
	hlen := int(word & 0xFFFFFF)
	if byte(word>>24) != SerializeJSON || hlen > length-4 {
		cmd, err := DecodeFrame(frame)
		if err != nil {
			return ResponseHead{}, err
		}
		return ResponseHead{Code: cmd.Code, Opaque: cmd.Opaque, Flag: cmd.Flag, Remark: cmd.Remark}, nil
	}
	var h ResponseHead
	header := frame[8 : 8+hlen]
	if decodeCanonicalHead(header, &h) {
		return h, nil
	}
	h = ResponseHead{}
	if err := decodeJSONHead(header, &h); err != nil {
		return ResponseHead{}, err
	}
	return h, nil
}

// The members of the header shape that appendJSONHeader writes, as a Java
// broker's fastjson does: compact, alphabetical order.
const (
	canonCode   = `{"code":`
	canonFlag   = `,"flag":`
	canonLang   = `,"language":"`
	canonOpaque = `","opaque":`
	canonTail   = `,"serializeTypeCurrentRPC":"JSON","version":`
)

// decodeCanonicalHead decodes a header of exactly the shape appendJSONHeader
// writes without extFields and remark, i.e. a popshim or Java broker's
// reply to an ACK: {"code":N,"flag":N,"language":"NAME","opaque":N,
// "serializeTypeCurrentRPC":"JSON","version":N} with no whitespace, N a
// plain JSON integer within int32 and NAME of letters, digits and '_'. It
// reports false, leaving h partly written, on any deviation; the caller
// then decodes b with the general scanner. Every header it accepts is valid
// JSON that decodeJSONHeader decodes to the same code, flag and opaque (and
// no remark).
func decodeCanonicalHead(b []byte, h *ResponseHead) bool {
	var ok bool
	if b, ok = cutLiteral(b, canonCode); !ok {
		return false
	}
	if h.Code, b, ok = cutInt32(b); !ok {
		return false
	}
	if b, ok = cutLiteral(b, canonFlag); !ok {
		return false
	}
	if h.Flag, b, ok = cutInt32(b); !ok {
		return false
	}
	if b, ok = cutLiteral(b, canonLang); !ok {
		return false
	}
	i := 0
	for i < len(b) && (b[i] >= 'A' && b[i] <= 'Z' || b[i] >= 'a' && b[i] <= 'z' || b[i] >= '0' && b[i] <= '9' || b[i] == '_') {
		i++
	}
	if b, ok = cutLiteral(b[i:], canonOpaque); !ok {
		return false
	}
	if h.Opaque, b, ok = cutInt32(b); !ok {
		return false
	}
	if b, ok = cutLiteral(b, canonTail); !ok {
		return false
	}
	if _, b, ok = cutInt32(b); !ok {
		return false
	}
	return len(b) == 1 && b[0] == '}'
}

// cutLiteral returns b without the prefix lit, and whether b had it.
func cutLiteral(b []byte, lit string) ([]byte, bool) {
	if len(b) < len(lit) || string(b[:len(lit)]) != lit {
		return b, false
	}
	return b[len(lit):], true
}

// cutInt32 parses a JSON integer at the start of b: an optional '-', then
// "0" or a non-zero digit and up to nine more, within int32. It returns the
// value and the rest of b (whose next byte the caller checks: a digit, '.'
// or 'e' there makes the caller's next literal fail).
func cutInt32(b []byte) (int32, []byte, bool) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i++
	}
	start := i
	var n int64
	for i < len(b) && i-start < 11 && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 10 || digits > 1 && b[start] == '0' {
		return 0, b, false
	}
	if neg {
		n = -n
	}
	if n != int64(int32(n)) {
		return 0, b, false
	}
	return int32(n), b[i:], true
}

// decodeJSONHead is decodeJSONHeader keeping only code, opaque, flag and
// remark: the same grammar, member rules (free order, last duplicate wins,
// null means absent, int32 members as numbers or strings) and errors.
func decodeJSONHead(b []byte, h *ResponseHead) error {
	s := jsonScanner{b: b}
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return s.end()
	}
	for {
		key, plain, err := s.rawString()
		if err != nil {
			return err
		}
		if !plain {
			key = unescape(nil, key)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if s.isNull() {
			switch string(key) {
			case "code":
				h.Code = 0
			case "opaque":
				h.Opaque = 0
			case "flag":
				h.Flag = 0
			case "remark":
				h.Remark = ""
			}
		} else {
			switch string(key) {
			case "code":
				h.Code, err = s.int32Value("code")
			case "version":
				_, err = s.int32Value("version")
			case "opaque":
				h.Opaque, err = s.int32Value("opaque")
			case "flag":
				h.Flag, err = s.int32Value("flag")
			case "language":
				_, _, err = s.rawString()
			case "remark":
				var raw []byte
				if raw, plain, err = s.rawString(); err == nil {
					h.Remark = ownedString(raw, plain)
				}
			case "extFields":
				err = s.skipExtFields()
			default:
				err = s.skip()
			}
			if err != nil {
				return err
			}
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return s.end()
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}

// ownedString returns a raw JSON string's decoded value as a new string.
func ownedString(raw []byte, plain bool) string {
	if plain {
		return string(raw)
	}
	return string(unescape(make([]byte, 0, len(raw)), raw))
}

// skipExtFields validates an extFields object as jsonScanner.extFields
// does (string keys; string, number, boolean or null values) and skips it.
func (s *jsonScanner) skipExtFields() error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if _, _, err := s.rawString(); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		var err error
		switch c := s.peek(); {
		case c == '"':
			_, _, err = s.rawString()
		case c == '-' || c >= '0' && c <= '9':
			_, err = s.number()
		case c == 'n':
			if !s.isNull() {
				err = s.errorf("bad literal")
			}
		case c == 't' || c == 'f':
			_, err = s.literal()
		default:
			err = s.errorf("extFields value is not a string, number or boolean")
		}
		if err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}
