package codec

import (
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

// stringWordSpecial must flag every word holding a byte rawString has to
// look at. Each byte value is tried in each of the 8 lanes, among filler
// bytes that are not special.
func TestStringWordSpecialNeverMisses(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	for v := 0; v < 256; v++ {
		for lane := 0; lane < 8; lane++ {
			for _, fill := range []byte{'a', ' ', '~', '!', '#', '[', ']'} {
				var w uint64
				for i := 0; i < 8; i++ {
					c := fill
					if i == lane {
						c = byte(v)
					}
					w |= uint64(c) << (8 * i)
				}
				if got := stringWordSpecial(w); got != special(byte(v)) && special(byte(v)) {
					t.Fatalf("byte %#x in lane %d (fill %q): stringWordSpecial = %v", v, lane, fill, got)
				} else if !special(byte(v)) && got {
					t.Fatalf("byte %#x in lane %d (fill %q): false alarm on a word with no special byte", v, lane, fill)
				}
			}
		}
	}
}
