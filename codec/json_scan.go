package codec

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// jsonScanner is a small JSON reader for remoting headers. It validates
// the full JSON grammar (RFC 8259) of everything it passes over, including
// skipped members, and decodes strings as encoding/json does (escapes
// resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD).
//
// Decoded strings are appended to arena and handed out with unsafe.String.
// That is safe because arena bytes are never written again once a string
// points at them: appends either write past every existing string or move
// to a new array, leaving the old one (still referenced) untouched.
type jsonScanner struct {
	b     []byte
	i     int
	arena []byte
	depth int
}

// maxJSONDepth bounds nesting in skipped values.
const maxJSONDepth = 1000

func (s *jsonScanner) errorf(format string, args ...any) error {
	lo, hi := max(0, s.i-12), min(len(s.b), s.i+12)
	return fmt.Errorf("%w: JSON at offset %d near %q: %s", ErrBadHeader, s.i, s.b[lo:hi], fmt.Sprintf(format, args...))
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end. Compact JSON
// (every client's) has no whitespace between tokens, so the byte at s.i is
// checked first without entering the whitespace loop.
func (s *jsonScanner) peek() byte {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return s.b[s.i]
	}
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScanner) expect(c byte) error {
	if s.peek() != c {
		return s.errorf("want %q", c)
	}
	s.i++
	return nil
}

// rawString scans a string starting at '"' and returns its raw contents
// (between the quotes) and whether it needs unescaping or UTF-8 repair.
//
// Runs of ordinary bytes are skipped eight at a time (stringWordMask);
// utf8.Valid runs only for unescaped strings that hold a byte >= 0x80, so
// the all-ASCII strings of every RocketMQ header are validated in the same
// pass that finds their end.
func (s *jsonScanner) rawString() (raw []byte, plain bool, err error) {
	if s.peek() != '"' {
		return nil, false, s.errorf("want string")
	}
	b := s.b
	i := s.i + 1
	start := i
	plain = true
	ascii := true
	for {
		// Skip whole words of ordinary bytes, then jump straight to the
		// first special byte of the word that has one.
		for i+8 <= len(b) {
			m := stringWordMask(binary.LittleEndian.Uint64(b[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			raw = b[start:i]
			s.i = i + 1
			if plain && !ascii && !utf8.Valid(raw) {
				plain = false
			}
			return raw, plain, nil
		case c < 0x20:
			s.i = i
			return nil, false, s.errorf("control character in string")
		case c >= utf8.RuneSelf:
			ascii = false
		case c == '\\':
			plain = false
			i++
			if i >= len(b) {
				s.i = i
				return nil, false, s.errorf("unterminated escape")
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					s.i = i
					return nil, false, s.errorf("short \\u escape")
				}
				for _, h := range b[i+1 : i+5] {
					if _, ok := unhex(h); !ok {
						s.i = i
						return nil, false, s.errorf("bad \\u escape")
					}
				}
				i += 4
			default:
				s.i = i
				return nil, false, s.errorf("bad escape")
			}
		}
		i++
	}
	s.i = i
	return nil, false, s.errorf("unterminated string")
}

// Byte-lane constants for stringWordMask.
const (
	laneOnes = 0x0101010101010101
	laneHigh = 0x8080808080808080
)

// stringWordMask flags, in the high bit of each byte lane, the bytes of the
// 8 packed little-endian in w that rawString must look at: '"', '\\', a
// control byte (< 0x20) or a byte >= 0x80. The lowest flagged lane is
// always a real special byte, so bits.TrailingZeros64(mask)/8 is the index
// of the first one; higher lanes may be false positives caused by a borrow
// out of a real hit, which the byte loop then sorts out. Zero means none.
func stringWordMask(w uint64) uint64 {
	q := w ^ (laneOnes * '"')
	e := w ^ (laneOnes * '\\')
	return ((q-laneOnes)&^q | (e-laneOnes)&^e | (w - laneOnes*0x20) | w) & laneHigh
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		v, _ := unhex(c)
		r = r<<4 | rune(v)
	}
	return r
}

// unescape appends the decoded form of an already validated raw string.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '\\' {
			switch raw[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(raw[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						r2 = hex4(raw[i+2 : i+6])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						i += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // " \ /
				dst = append(dst, raw[i+1])
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, raw[i:i+size]...)
		}
		i += size
	}
	return dst
}

// str scans a string and returns it as a string backed by the arena.
func (s *jsonScanner) str() (string, error) {
	raw, plain, err := s.rawString()
	if err != nil {
		return "", err
	}
	return s.keep(raw, plain), nil
}

func (s *jsonScanner) keep(raw []byte, plain bool) string {
	if len(raw) == 0 {
		return ""
	}
	start := len(s.arena)
	if plain {
		s.arena = append(s.arena, raw...)
	} else {
		s.arena = unescape(s.arena, raw)
	}
	v := s.arena[start:]
	return unsafe.String(unsafe.SliceData(v), len(v))
}

// number scans a JSON number and returns its text.
func (s *jsonScanner) number() ([]byte, error) {
	s.ws()
	start := s.i
	b := s.b
	digits := func() int {
		n := 0
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(b) && b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case digits() == 0:
		return nil, s.errorf("bad number")
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.errorf("bad fraction")
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, s.errorf("bad exponent")
		}
	}
	return b[start:s.i], nil
}

// literal consumes true, false or null and returns it.
func (s *jsonScanner) literal() ([]byte, error) {
	s.ws()
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return s.b[s.i-len(lit) : s.i], nil
		}
	}
	return nil, s.errorf("bad literal")
}

func (s *jsonScanner) isNull() bool {
	if s.peek() == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// int32Value scans an integer within int32, written as a JSON number or,
// as fastjson and encoding/json's Number also accept, as a string holding one.
func (s *jsonScanner) int32Value(name string) (int32, error) {
	var num []byte
	var err error
	if s.peek() == '"' {
		var plain bool
		if num, plain, err = s.rawString(); err == nil && !plain {
			num = unescape(nil, num)
		}
	} else {
		num, err = s.number()
	}
	if err != nil {
		return 0, err
	}
	v, ok := parseDecimal(unsafe.String(unsafe.SliceData(num), len(num)), 32)
	if !ok {
		return 0, s.errorf("member %q is not an int32: %s", name, num)
	}
	return int32(v), nil
}

// skip validates and skips any JSON value.
func (s *jsonScanner) skip() error {
	switch c := s.peek(); {
	case c == '"':
		_, _, err := s.rawString()
		return err
	case c == '{' || c == '[':
		if s.depth++; s.depth > maxJSONDepth {
			return s.errorf("nested too deep")
		}
		defer func() { s.depth-- }()
		s.i++
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		if s.peek() == closer {
			s.i++
			return nil
		}
		for {
			if c == '{' {
				if _, _, err := s.rawString(); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skip(); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.i++
			case closer:
				s.i++
				return nil
			default:
				return s.errorf("want ',' or %q", closer)
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		_, err := s.number()
		return err
	default:
		_, err := s.literal()
		return err
	}
}
