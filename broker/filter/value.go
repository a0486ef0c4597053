package filter

import (
	"cmp"
	"math"
	"strconv"
	"strings"
)

// kind is the Java type of a value during evaluation. Property values are
// always strings (MessageEvaluationContext hands out the message's
// properties map); literals are Integer (an integer literal within int
// range), Long, Double, String or Boolean; NULL is null. kErr stands for
// an exception thrown by RocketMQ's evaluation (a failed number
// conversion, a boolean compared with a string): it travels up unchanged
// and the message does not match.
type kind uint8

const (
	kNull kind = iota
	kBool
	kInt    // java.lang.Integer
	kLong   // java.lang.Long
	kDouble // java.lang.Double
	kString
	kErr
)

// value is one evaluated operand; which field holds it depends on k.
type value struct {
	k kind
	b bool    // kBool
	n int64   // kInt, kLong
	f float64 // kDouble
	s string  // kString
}

var (
	vNull  = value{k: kNull}
	vTrue  = value{k: kBool, b: true}
	vFalse = value{k: kBool}
	vErr   = value{k: kErr}
)

// boolValue is TRUE or FALSE.
func boolValue(b bool) value {
	if b {
		return vTrue
	}
	return vFalse
}

// isNumber reports a numeric kind.
func (v value) isNumber() bool { return v.k == kInt || v.k == kLong || v.k == kDouble }

// String renders v as RocketMQ's ConstantExpression.toString does, for
// error messages and Expr.String.
func (v value) String() string {
	switch v.k {
	case kNull:
		return "NULL"
	case kBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case kInt, kLong:
		return strconv.FormatInt(v.n, 10)
	case kDouble:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case kString:
		return "'" + strings.ReplaceAll(v.s, "'", "''") + "'"
	}
	return "<error>"
}

// compareValues orders two non-null values as RocketMQ's
// ComparisonExpression.__compare does with string conversion on (the
// broker always parses with it): values of one type compare naturally;
// otherwise the left converts up to the right's numeric type or the
// string side is parsed as the other side's type (Integer.valueOf,
// Long.valueOf, Double.valueOf, Boolean.valueOf). A string that does not
// parse, and a Boolean left of a string (a ClassCastException in Java),
// are errors (ok false). Any other mix (a Boolean and a number) orders the
// left first (-1), as Java does.
func compareValues(l, r value) (c int, ok bool) {
	if l.k == r.k {
		switch l.k {
		case kBool:
			return cmpBool(l.b, r.b), true
		case kInt, kLong:
			return cmp.Compare(l.n, r.n), true
		case kDouble:
			return cmpDouble(l.f, r.f), true
		case kString:
			return strings.Compare(l.s, r.s), true
		}
		return 0, false
	}
	switch l.k {
	case kBool:
		if r.k == kString {
			return 0, false
		}
		return -1, true
	case kInt, kLong:
		switch r.k {
		case kInt, kLong:
			return cmp.Compare(l.n, r.n), true
		case kDouble:
			return cmpDouble(float64(l.n), r.f), true
		case kString:
			n, ok := parseJavaInt(r.s, l.k == kLong)
			if !ok {
				return 0, false
			}
			return cmp.Compare(l.n, n), true
		}
		return -1, true
	case kDouble:
		switch r.k {
		case kInt, kLong:
			return cmpDouble(l.f, float64(r.n)), true
		case kString:
			f, ok := parseJavaDouble(r.s)
			if !ok {
				return 0, false
			}
			return cmpDouble(l.f, f), true
		}
		return -1, true
	case kString:
		switch r.k {
		case kBool:
			return cmpBool(strings.EqualFold(l.s, "true"), r.b), true
		case kInt, kLong:
			n, ok := parseJavaInt(l.s, r.k == kLong)
			if !ok {
				return 0, false
			}
			return cmp.Compare(n, r.n), true
		case kDouble:
			f, ok := parseJavaDouble(l.s)
			if !ok {
				return 0, false
			}
			return cmpDouble(f, r.f), true
		}
		return -1, true
	}
	return 0, false
}

// cmpBool is Boolean.compareTo: false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// cmpDouble is Double.compare: numeric order, except that -0.0 is below
// 0.0 and NaN equals itself and is above everything.
func cmpDouble(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if math.IsNaN(a) {
		ab = 0x7ff8000000000000
	}
	if math.IsNaN(b) {
		bb = 0x7ff8000000000000
	}
	return cmp.Compare(ab, bb)
}
