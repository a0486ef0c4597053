package filter

import (
	"math"
	"strconv"
	"strings"
)

// The node builders below carry the checks RocketMQ's expression classes
// make while the parser builds them (ComparisonExpression.create*,
// ConstantExpression.create*, SelectorParser.asBooleanExpression); a
// failed check is a compile error, as in Java.

// asBoolean is SelectorParser.asBooleanExpression: boolean nodes pass, a
// property is cast, anything else is an error.
func (p *parser) asBoolean(n *node, at token) (*node, error) {
	if n.boolean() {
		return n, nil
	}
	if n.op == opProp {
		return &node{op: opCast, l: n}, nil
	}
	return nil, p.semantic(at, "expression will not result in a boolean value: %s", n)
}

// equal builds '=' with ComparisonExpression.createEqual's checks: no NULL
// literal on either side, and a TRUE/FALSE literal on the left only with
// a non-literal or a boolean literal on the right.
func (p *parser) equal(l, r *node, at token) (*node, error) {
	for _, n := range [2]*node{l, r} {
		if n.op == opConst && n.v.k == kNull {
			return nil, p.semantic(at, "'NULL' cannot be compared")
		}
	}
	if l.op == opConst && r.op == opConst && l.v.k == kBool && r.v.k != kBool {
		return nil, p.semantic(at, "'%s' cannot be compared with '%s'", l, r)
	}
	return &node{op: opEq, l: l, r: r}, nil
}

// ordered builds '>', '>=', '<' or '<=' with checkLessThanOperand: a
// literal operand must be a number, and no operand may be boolean.
func (p *parser) ordered(op opcode, l, r *node, at token) (*node, error) {
	for _, n := range [2]*node{l, r} {
		if (n.op == opConst && !n.v.isNumber()) || (n.op != opConst && n.boolean()) {
			return nil, p.semantic(at, "value '%s' cannot be compared with %s", n, opNames[op])
		}
	}
	return &node{op: op, l: l, r: r}, nil
}

// between parses "low AND high" after [NOT] BETWEEN: v BETWEEN a AND b is
// v >= a AND v <= b, with ComparisonExpression.createBetween's check that
// two literal bounds are in order; NOT BETWEEN is v < a OR v > b.
func (p *parser) between(v *node, not bool, at token) (*node, error) {
	low, err := p.unary()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tAnd); err != nil {
		return nil, err
	}
	high, err := p.unary()
	if err != nil {
		return nil, err
	}
	if not {
		lt, err := p.ordered(opLt, v, low, at)
		if err != nil {
			return nil, err
		}
		gt, err := p.ordered(opGt, v, high, at)
		if err != nil {
			return nil, err
		}
		return &node{op: opOr, l: lt, r: gt}, nil
	}
	if lc, hc := low, high; lc.op == opConst && hc.op == opConst {
		if lc.v.k == kNull || hc.v.k == kNull {
			return nil, p.semantic(at, "illegal values of BETWEEN, values can not be NULL")
		}
		if c, ok := compareValues(hc.v, lc.v); !ok || c < 0 {
			return nil, p.semantic(at, "illegal values of BETWEEN, left value (%s) must be less than or equal to right value (%s)", lc, hc)
		}
	}
	ge, err := p.ordered(opGe, v, low, at)
	if err != nil {
		return nil, err
	}
	le, err := p.ordered(opLe, v, high, at)
	if err != nil {
		return nil, err
	}
	return &node{op: opAnd, l: ge, r: le}, nil
}

// in parses "( 'a', 'b', ... )" after [NOT] IN; the left side must be a
// property (ComparisonExpression.createInFilter).
func (p *parser) in(v *node, not bool, at token) (*node, error) {
	if _, err := p.expect(tLParen); err != nil {
		return nil, err
	}
	var list []string
	for {
		s, err := p.stringLit()
		if err != nil {
			return nil, err
		}
		list = append(list, s)
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != tComma {
			break
		}
		p.advance()
	}
	if _, err := p.expect(tRParen); err != nil {
		return nil, err
	}
	if v.op != opProp {
		return nil, p.semantic(at, "expected a property for IN, got: %s", v)
	}
	n := &node{op: opIn, l: v, list: list, not: not}
	if len(list) >= 5 {
		n.set = make(map[string]struct{}, len(list))
		for _, s := range list {
			n.set[s] = struct{}{}
		}
	}
	return n, nil
}

// stringLit consumes a string literal and returns its text (a doubled
// quote stands for one quote).
func (p *parser) stringLit() (string, error) {
	t, err := p.expect(tString)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(t.image[1:len(t.image)-1], "''", "'"), nil
}

// decimal is ConstantExpression.createFromDecimal: a Long (an l/L suffix
// is dropped), an Integer when it fits.
func (p *parser) decimal(t token) (*node, error) {
	n, err := strconv.ParseInt(strings.TrimRight(t.image, "lL"), 10, 64)
	if err != nil {
		return nil, p.semantic(t, "integer literal %s is out of the range of a Java long", t.image)
	}
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return &node{op: opConst, v: value{k: kInt, n: n}}, nil
	}
	return &node{op: opConst, v: value{k: kLong, n: n}}, nil
}

// float is ConstantExpression.createFloat: a Double that must be finite
// and at least Double.MIN_VALUE (so 0.0 itself is refused, as in Java).
func (p *parser) float(t token) (*node, error) {
	f, ok := parseJavaDouble(t.image)
	switch {
	case !ok:
		return nil, p.semantic(t, "bad decimal literal %s", t.image)
	case f > math.MaxFloat64:
		return nil, p.semantic(t, "decimal literal %s is greater than %g", t.image, math.MaxFloat64)
	case f < math.SmallestNonzeroFloat64:
		return nil, p.semantic(t, "decimal literal %s is less than %g (RocketMQ refuses zero)", t.image, math.SmallestNonzeroFloat64)
	}
	return &node{op: opConst, v: value{k: kDouble, f: f}}, nil
}
