package codec

import (
	"math/bits"
	"math/rand/v2"
	"strconv"
	"testing"
)

// parseDecimal must agree with strconv.ParseInt(s, 10, bits) on every
// input: value and accept/reject.
func TestParseDecimalMatchesStrconv(t *testing.T) {
	inputs := []string{
		"", "+", "-", "0", "-0", "+0", "42", "+42", "-42", "007", "1_000", " 1", "1 ", "1.0", "1e3", "0x10",
		"2147483647", "2147483648", "-2147483648", "-2147483649",
		"999999999999999999", "-999999999999999999", "1000000000000000000",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"12345678901234567890123", "١", "9a", "a9", "--1", "+-1",
	}
	for _, s := range inputs {
		for _, bits := range []int{32, 64} {
			want, err := strconv.ParseInt(s, 10, bits)
			got, ok := parseDecimal(s, bits)
			if ok != (err == nil) || (ok && got != want) {
				t.Errorf("parseDecimal(%q, %d) = %d, %v; strconv: %d, %v", s, bits, got, ok, want, err)
			}
		}
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-1", "+7", "2147483648", "9223372036854775808", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, bits := range []int{32, 64} {
			want, err := strconv.ParseInt(s, 10, bits)
			got, ok := parseDecimal(s, bits)
			if ok != (err == nil) || (ok && got != want) {
				t.Fatalf("parseDecimal(%q, %d) = %d, %v; strconv: %d, %v", s, bits, got, ok, want, err)
			}
		}
	})
}

// stringWordMask must find the first byte rawString has to look at in any
// word: zero when there is none, else its lowest flagged lane is exactly
// that byte. Each byte value is tried in each of the 8 lanes among
// ordinary fillers, then random words drawn mostly from bytes next to the
// special ranges (where borrows happen) are checked.
func TestStringWordMaskFindsFirstSpecial(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	check := func(w uint64) {
		first := -1
		for i := 0; i < 8; i++ {
			if special(byte(w >> (8 * i))) {
				first = i
				break
			}
		}
		m := stringWordMask(w)
		switch {
		case first < 0 && m != 0:
			t.Fatalf("word %#016x: mask %#x on a word with no special byte", w, m)
		case first >= 0 && m == 0:
			t.Fatalf("word %#016x: special byte in lane %d missed", w, first)
		case first >= 0 && bits.TrailingZeros64(m)>>3 != first:
			t.Fatalf("word %#016x: first flagged lane %d, want %d", w, bits.TrailingZeros64(m)>>3, first)
		}
	}
	for v := 0; v < 256; v++ {
		for lane := 0; lane < 8; lane++ {
			for _, fill := range []byte{'a', ' ', '~', '!', '#', '[', ']', 0x7f} {
				var w uint64
				for i := 0; i < 8; i++ {
					c := fill
					if i == lane {
						c = byte(v)
					}
					w |= uint64(c) << (8 * i)
				}
				check(w)
			}
		}
	}
	edge := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '!', '"', '#', '[', '\\', ']', 0x7f, 0x80, 0x81, 0x9f, 0xa0, 0xa1, 0xff, 'a'}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 1_000_000; n++ {
		var w uint64
		for i := 0; i < 8; i++ {
			w |= uint64(edge[rng.IntN(len(edge))]) << (8 * i)
		}
		check(w)
	}
}
