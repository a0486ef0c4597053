package filter

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseJavaInt parses s as Integer.parseInt (is64 false: int range) or
// Long.parseLong (is64 true) do: an optional sign, then at least one
// decimal digit of any script (Character.digit: a Unicode Nd character of
// the Basic Multilingual Plane), no spaces, no overflow.
func parseJavaInt(s string, is64 bool) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(math.MaxInt32)
	if is64 {
		limit = math.MaxInt64
	}
	if neg {
		limit++
	}
	var n uint64
	for len(s) > 0 {
		var d int
		if c := s[0]; c < utf8.RuneSelf {
			if c < '0' || c > '9' {
				return 0, false
			}
			d = int(c - '0')
			s = s[1:]
		} else {
			r, size := utf8.DecodeRuneInString(s)
			if d = digitValue(r); d < 0 {
				return 0, false
			}
			s = s[size:]
		}
		if n > (limit-uint64(d))/10 {
			return 0, false
		}
		n = n*10 + uint64(d)
	}
	if neg {
		return -int64(n), true // n ≤ limit, so MinInt32/MinInt64 wrap correctly
	}
	return int64(n), true
}

// digitValue is Character.digit(r, 10) for a character outside ASCII: the
// value of a decimal digit (Unicode category Nd) of the Basic Multilingual
// Plane (Java reads strings as UTF-16, so a digit beyond it is two chars
// and no digit), else -1. Unicode lays out every Nd run as 0..9 and the
// ranges of unicode.Nd start at a zero.
func digitValue(r rune) int {
	if r > 0xFFFF || r == utf8.RuneError || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10
		}
	}
	return -1
}

// parseJavaDouble parses s as Double.valueOf does
// (jdk.internal.math.FloatingDecimal.readJavaFormatString): blanks and
// control characters (≤ U+0020) trimmed from both ends; an optional sign;
// then "NaN", "Infinity", a hexadecimal 0x<hex>[.<hex>]p<exp>, or ASCII
// digits with an optional '.' and e/E exponent; one trailing f, F, d or D
// allowed. Out-of-range values become ±Infinity or 0, as in Java.
func parseJavaDouble(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if s == "" {
		return 0, false
	}
	body := s
	neg := false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if body == "" {
		return 0, false
	}
	if c := body[len(body)-1]; c == 'f' || c == 'F' || c == 'd' || c == 'D' {
		body = body[:len(body)-1]
		s = s[:len(s)-1]
	}
	var ok bool
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		ok = validHexFloat(body[2:])
	} else {
		ok = validDecimalFloat(body)
	}
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return f, true // ±Inf or 0, as Java
		}
		return 0, false
	}
	return f, true
}

// validDecimalFloat checks digits [. digits] [e|E [+|-] digits] with at
// least one mantissa digit, ASCII only.
func validDecimalFloat(s string) bool {
	i, mant := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		mant++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			mant++
		}
	}
	if mant == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}

// validHexFloat checks what follows "0x" in Java's hexadecimal form:
// hex digits with an optional '.', at least one digit, then a binary
// exponent p|P [+|-] decimal digits, which is required.
func validHexFloat(s string) bool {
	i, mant := 0, 0
	for i < len(s) && isHex(s[i]) {
		i++
		mant++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isHex(s[i]) {
			i++
			mant++
		}
	}
	if mant == 0 || i >= len(s) || (s[i] != 'p' && s[i] != 'P') {
		return false
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i > j && i == len(s)
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
