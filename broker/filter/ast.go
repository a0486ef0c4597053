package filter

import "strings"

// opcode is what a node computes. Each follows the evaluate method of the
// RocketMQ expression class named in its comment, including the order of
// evaluation (which operand is read first, when the second is skipped),
// so an error in one operand shows exactly when Java's exception would.
type opcode uint8

const (
	// opConst is a literal (ConstantExpression; TRUE, FALSE and NULL are
	// BooleanConstantExpression): v.
	opConst opcode = iota
	// opProp reads a message property (PropertyExpression): its string
	// value, NULL when the message has none.
	opProp
	// opNeg is unary minus (UnaryExpression.createNegate): numbers
	// negate, anything else is NULL.
	opNeg
	// opCast lets a property stand where a boolean is needed
	// (UnaryExpression.createBooleanCast): NULL when absent; a property
	// value is a string, never a Boolean, so FALSE otherwise.
	opCast
	// opNot is NOT (UnaryExpression.createNOT): NULL stays NULL.
	opNot
	// opAnd and opOr are LogicExpression: the right side is skipped when
	// the left decides; otherwise a NULL side gives NULL unless the right
	// side decides.
	opAnd
	opOr
	// opEq is '=' and IS NULL (ComparisonExpression.doCreateEqual): both
	// sides are read; NULL on the left only gives NULL, on the right only
	// FALSE, on both TRUE; else the values compare equal (compareValues).
	opEq
	// opGt, opGe, opLt and opLe are ComparisonExpression.evaluate: NULL on
	// the left gives NULL without reading the right; two strings compare
	// as Double.valueOf of each (an error when one is not a number); else
	// compareValues.
	opGt
	opGe
	opLt
	opLe
	// opIn is IN / NOT IN over string literals
	// (UnaryExpression.createInExpression): NULL unless the property is a
	// string.
	opIn
	// opContains, opStartsWith and opEndsWith (with not: the NOT forms)
	// are RocketMQ 5.x's ContainsExpression and siblings: FALSE, never
	// NULL, for an empty search string (the operand is then not read), an
	// absent property or a value that is not a string.
	opContains
	opStartsWith
	opEndsWith
)

// opNames name the operators in String.
var opNames = [...]string{opAnd: "AND", opOr: "OR", opEq: "=", opGt: ">", opGe: ">=", opLt: "<", opLe: "<=",
	opContains: "CONTAINS", opStartsWith: "STARTSWITH", opEndsWith: "ENDSWITH"}

// node is one compiled sub-expression; which fields are set depends on op.
type node struct {
	op     opcode
	l, r   *node               // operands (unary: l)
	v      value               // opConst
	slot   int                 // opProp: index into env.vals
	name   string              // opProp
	not    bool                // opIn, opContains..opEndsWith
	search string              // opContains..opEndsWith
	list   []string            // opIn
	set    map[string]struct{} // opIn with 5 or more strings
}

// boolean reports whether RocketMQ builds the node as a BooleanExpression
// (what AND, OR, NOT and the whole selector need).
func (n *node) boolean() bool {
	switch n.op {
	case opConst:
		return n.v.k == kBool || n.v.k == kNull
	case opProp, opNeg:
		return false
	}
	return true
}

// eval computes the node's value for the properties in e.
func (n *node) eval(e *env) value {
	switch n.op {
	case opConst:
		return n.v
	case opProp:
		return e.get(n.slot)
	case opNeg:
		v := n.l.eval(e)
		switch v.k {
		case kErr:
			return v
		case kInt:
			return value{k: kInt, n: int64(-int32(v.n))}
		case kLong:
			return value{k: kLong, n: -v.n}
		case kDouble:
			return value{k: kDouble, f: -v.f}
		}
		return vNull
	case opCast:
		v := n.l.eval(e)
		if v.k == kErr || v.k == kNull || v.k == kBool {
			return v
		}
		return vFalse
	case opNot:
		v := n.l.eval(e)
		if v.k == kBool {
			return boolValue(!v.b)
		}
		return v
	case opAnd, opOr:
		return n.logic(e)
	case opEq:
		return n.equal(e)
	case opGt, opGe, opLt, opLe:
		return n.order(e)
	case opIn:
		return n.in(e)
	}
	return n.text(e)
}

// logic evaluates opAnd and opOr.
func (n *node) logic(e *env) value {
	or := n.op == opOr
	l := n.l.eval(e)
	if l.k == kErr || (l.k == kBool && l.b == or) {
		return l
	}
	r := n.r.eval(e)
	if r.k == kErr || (r.k == kBool && r.b == or) {
		return r
	}
	if l.k == kNull || r.k == kNull {
		return vNull
	}
	return boolValue(!or)
}

// equal evaluates opEq.
func (n *node) equal(e *env) value {
	l := n.l.eval(e)
	if l.k == kErr {
		return l
	}
	r := n.r.eval(e)
	switch {
	case r.k == kErr:
		return r
	case l.k == kNull && r.k == kNull:
		return vTrue
	case l.k == kNull:
		return vNull
	case r.k == kNull:
		return vFalse
	}
	c, ok := compareValues(l, r)
	if !ok {
		return vErr
	}
	return boolValue(c == 0)
}

// order evaluates opGt, opGe, opLt and opLe.
func (n *node) order(e *env) value {
	l := n.l.eval(e)
	if l.k == kErr || l.k == kNull {
		return l
	}
	r := n.r.eval(e)
	if r.k == kErr || r.k == kNull {
		return r
	}
	var c int
	if l.k == kString && r.k == kString {
		lf, ok1 := parseJavaDouble(l.s)
		rf, ok2 := parseJavaDouble(r.s)
		if !ok1 || !ok2 {
			return vErr
		}
		c = cmpDouble(lf, rf)
	} else {
		var ok bool
		if c, ok = compareValues(l, r); !ok {
			return vErr
		}
	}
	switch n.op {
	case opGt:
		return boolValue(c > 0)
	case opGe:
		return boolValue(c >= 0)
	case opLt:
		return boolValue(c < 0)
	}
	return boolValue(c <= 0)
}

// in evaluates opIn.
func (n *node) in(e *env) value {
	v := n.l.eval(e)
	if v.k != kString {
		return vNull
	}
	var hit bool
	if n.set != nil {
		_, hit = n.set[v.s]
	} else {
		for _, s := range n.list {
			if s == v.s {
				hit = true
				break
			}
		}
	}
	return boolValue(hit != n.not)
}

// text evaluates opContains, opStartsWith and opEndsWith.
func (n *node) text(e *env) value {
	if n.search == "" {
		return vFalse
	}
	v := n.l.eval(e)
	if v.k == kErr {
		return v
	}
	if v.k != kString {
		return vFalse
	}
	var hit bool
	switch n.op {
	case opContains:
		hit = strings.Contains(v.s, n.search)
	case opStartsWith:
		hit = strings.HasPrefix(v.s, n.search)
	default:
		hit = strings.HasSuffix(v.s, n.search)
	}
	return boolValue(hit != n.not)
}

// String renders the node fully parenthesized.
func (n *node) String() string {
	notPrefix := ""
	if n.not {
		notPrefix = "NOT "
	}
	switch n.op {
	case opConst:
		return n.v.String()
	case opProp:
		return n.name
	case opNeg:
		return "(- " + n.l.String() + ")"
	case opCast:
		return n.l.String()
	case opNot:
		return "(NOT " + n.l.String() + ")"
	case opIn:
		quoted := make([]string, len(n.list))
		for i, s := range n.list {
			quoted[i] = value{k: kString, s: s}.String()
		}
		return "(" + n.l.String() + " " + notPrefix + "IN (" + strings.Join(quoted, ", ") + "))"
	case opContains, opStartsWith, opEndsWith:
		return "(" + n.l.String() + " " + notPrefix + opNames[n.op] + " " + value{k: kString, s: n.search}.String() + ")"
	}
	return "(" + n.l.String() + " " + opNames[n.op] + " " + n.r.String() + ")"
}
