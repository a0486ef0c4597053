package codec

import "encoding/binary"

// ResponseHead is the part of a frame's header that a caller matching
// responses to requests needs: the response code, the opaque, the flag bits
// and the remark (RemotingCommand.java code, opaque, flag, remark). It is
// what a load generator checks of an ACK_MESSAGE reply; everything else of
// the header (language, version, extFields) and the body are left out.
type ResponseHead struct {
	Code   int32
	Opaque int32
	Flag   int32
	// Remark is "" when absent or null.
	Remark string
}

// IsResponse reports whether flag bit 0 is set.
func (h *ResponseHead) IsResponse() bool { return h.Flag&FlagResponse != 0 }

// CanonicalResponseHead reads the head of one whole frame (length prefix
// included) in place, without allocating, when its header is JSON of
// exactly the shape popshim and a Java broker write for a reply without
// extFields and remark, such as an ACK_MESSAGE reply:
// {"code":N,"flag":N,"language":"NAME","opaque":N,"serializeTypeCurrentRPC":"JSON","version":N}.
// ok is false for every other frame, well-formed or not; those need
// DecodeFrame. When ok is true, DecodeFrame decodes the frame too, with the
// same code, opaque and flag and no remark (FuzzDecodeResponseHead checks
// it). Any goroutine; frame is only read and not retained.
func CanonicalResponseHead(frame []byte) (h ResponseHead, ok bool) {
	if len(frame) < 8 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		return ResponseHead{}, false
	}
	word := binary.BigEndian.Uint32(frame[4:])
	hlen := int(word & 0xFFFFFF)
	if byte(word>>24) != SerializeJSON || hlen > len(frame)-8 || !decodeCanonicalHead(frame[8:8+hlen], &h) {
		return ResponseHead{}, false
	}
	return h, true
}

// DecodeResponseHead decodes the code, opaque, flag and remark of one whole
// frame (length prefix included, as sized by PeekFrame): by
// CanonicalResponseHead when it can, else by DecodeFrame. It fails exactly
// when DecodeFrame fails (errors wrap ErrBadFrame or ErrBadHeader), and
// otherwise its fields equal those of DecodeFrame's Command. Any goroutine;
// frame is only read and not retained.
func DecodeResponseHead(frame []byte) (ResponseHead, error) {
	if h, ok := CanonicalResponseHead(frame); ok {
		return h, nil
	}
	cmd, err := DecodeFrame(frame)
	if err != nil {
		return ResponseHead{}, err
	}
	return ResponseHead{Code: cmd.Code, Opaque: cmd.Opaque, Flag: cmd.Flag, Remark: cmd.Remark}, nil
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
