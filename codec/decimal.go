package codec

import "strconv"

// parseDecimal parses s as strconv.ParseInt(s, 10, bitSize) does (and as
// Java's Long.parseLong / Integer.parseInt do for radix 10): an optional
// '+' or '-', then one or more ASCII digits, range checked for bitSize
// (32 or 64). It returns ok=false for anything ParseInt rejects.
//
// Up to 18 digits cannot overflow int64 and are summed directly, which is
// every number a remoting header carries; longer input goes to
// strconv.ParseInt. It never allocates.
func parseDecimal(s string, bitSize int) (int64, bool) {
	digits := s
	neg := false
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		n, err := strconv.ParseInt(s, 10, bitSize)
		return n, err == nil
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		d := digits[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if neg {
		n = -n
	}
	if bitSize == 32 && int64(int32(n)) != n {
		return 0, false
	}
	return n, true
}
