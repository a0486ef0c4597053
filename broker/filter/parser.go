package filter

import "fmt"

// parser is a recursive-descent parser of the selector grammar of
// RocketMQ's SelectorParser.jj, one method per grammar rule:
//
//	selector   := or                                  (must be boolean)
//	or         := and { OR and }
//	and        := equality { AND equality }
//	equality   := comparison { '=' comparison | '<>' comparison
//	                          | IS NULL | IS NOT NULL }
//	comparison := unary { ('>'|'>='|'<'|'<=') unary
//	                    | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) string
//	                    | [NOT] BETWEEN unary AND unary
//	                    | [NOT] IN '(' string {',' string} ')' }
//	unary      := '+' unary | '-' unary | NOT unary | primary
//	primary    := literal | identifier | '(' or ')'
//
// NOT binds tighter than any comparison, as in RocketMQ: "NOT a = 1" is
// "(NOT a) = 1". Like the generated Java parser, it stops after a complete
// selector without requiring the end of the input: what follows the first
// token that cannot continue the expression is never read.
type parser struct {
	lx    lexer
	tok   token // current token, valid when have
	have  bool
	ahead []token // tokens read past tok (two-token look-ahead)
	names map[string]int
	depth int // nesting of unary(), bounded by maxDepth
}

// peek returns the current token, reading it when needed.
func (p *parser) peek() (token, error) {
	if !p.have {
		if len(p.ahead) > 0 {
			p.tok, p.ahead = p.ahead[0], p.ahead[1:]
		} else {
			t, err := p.lx.next()
			if err != nil {
				return token{}, err
			}
			p.tok = t
		}
		p.have = true
	}
	return p.tok, nil
}

// peek2 returns the token after the current one.
func (p *parser) peek2() (token, error) {
	if _, err := p.peek(); err != nil {
		return token{}, err
	}
	if len(p.ahead) == 0 {
		t, err := p.lx.next()
		if err != nil {
			return token{}, err
		}
		p.ahead = append(p.ahead, t)
	}
	return p.ahead[0], nil
}

// advance consumes the current token.
func (p *parser) advance() { p.have = false }

// expect consumes a token of kind k or fails naming what was found.
func (p *parser) expect(k tokKind) (token, error) {
	t, err := p.peek()
	if err != nil {
		return token{}, err
	}
	if t.kind != k {
		return token{}, p.unexpected(t, kindNames[k])
	}
	p.advance()
	return t, nil
}

// unexpected is the error for token t where want was needed.
func (p *parser) unexpected(t token, want string) error {
	return newSyntaxError(p.lx.src, t.pos, fmt.Sprintf("unexpected %s, expecting %s", t.describe(), want))
}

// semantic is the error for a construct RocketMQ refuses while building
// the expression, at token t.
func (p *parser) semantic(t token, format string, args ...any) error {
	return newSyntaxError(p.lx.src, t.pos, fmt.Sprintf(format, args...))
}

func (p *parser) selector() (*node, error) {
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	return p.asBoolean(n, t)
}

func (p *parser) or() (*node, error) {
	return p.logic(tOr, p.and)
}

func (p *parser) and() (*node, error) {
	return p.logic(tAnd, p.equality)
}

// logic parses operand { op operand } for AND (op tAnd) or OR (tOr).
func (p *parser) logic(op tokKind, operand func() (*node, error)) (*node, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != op {
			return left, nil
		}
		p.advance()
		right, err := operand()
		if err != nil {
			return nil, err
		}
		if left, err = p.asBoolean(left, t); err != nil {
			return nil, err
		}
		if right, err = p.asBoolean(right, t); err != nil {
			return nil, err
		}
		code := opAnd
		if op == tOr {
			code = opOr
		}
		left = &node{op: code, l: left, r: right}
	}
}

func (p *parser) equality() (*node, error) {
	left, err := p.comparison()
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tEq, tNe:
			p.advance()
			right, err := p.comparison()
			if err != nil {
				return nil, err
			}
			if left, err = p.equal(left, right, t); err != nil {
				return nil, err
			}
			if t.kind == tNe {
				left = &node{op: opNot, l: left}
			}
		case tIs:
			p.advance()
			nt, err := p.peek()
			if err != nil {
				return nil, err
			}
			not := nt.kind == tNot
			if not {
				p.advance()
			}
			if _, err := p.expect(tNull); err != nil {
				return nil, err
			}
			left = &node{op: opEq, l: left, r: &node{op: opConst, v: vNull}}
			if not {
				left = &node{op: opNot, l: left}
			}
		default:
			return left, nil
		}
	}
}

// cmpOps and strOps map operator tokens to node operators.
var (
	cmpOps = map[tokKind]opcode{tGt: opGt, tGe: opGe, tLt: opLt, tLe: opLe}
	strOps = map[tokKind]opcode{tContains: opContains, tStartsWith: opStartsWith, tEndsWith: opEndsWith}
)

func (p *parser) comparison() (*node, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		not := false
		op := t
		switch t.kind {
		case tGt, tGe, tLt, tLe:
			p.advance()
			right, err := p.unary()
			if err != nil {
				return nil, err
			}
			if left, err = p.ordered(cmpOps[t.kind], left, right, t); err != nil {
				return nil, err
			}
			continue
		case tNot:
			nt, err := p.peek2()
			if err != nil {
				return nil, err
			}
			switch nt.kind {
			case tContains, tStartsWith, tEndsWith, tBetween, tIn:
			default:
				return nil, p.unexpected(nt, "CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN after NOT")
			}
			p.advance() // NOT
			if op, err = p.peek(); err != nil {
				return nil, err
			}
			not = true
		case tContains, tStartsWith, tEndsWith, tBetween, tIn:
		default:
			return left, nil
		}
		p.advance() // the operator
		switch op.kind {
		case tContains, tStartsWith, tEndsWith:
			s, err := p.stringLit()
			if err != nil {
				return nil, err
			}
			left = &node{op: strOps[op.kind], not: not, l: left, search: s}
		case tBetween:
			left, err = p.between(left, not, op)
		case tIn:
			left, err = p.in(left, not, op)
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) unary() (*node, error) {
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	if p.depth++; p.depth > maxDepth {
		return nil, p.semantic(t, "expression nested more than %d levels deep", maxDepth)
	}
	defer func() { p.depth-- }()
	switch t.kind {
	case tPlus:
		p.advance()
		return p.unary()
	case tMinus:
		p.advance()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: opNeg, l: x}, nil
	case tNot:
		p.advance()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if x, err = p.asBoolean(x, t); err != nil {
			return nil, err
		}
		return &node{op: opNot, l: x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (*node, error) {
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tTrue:
		p.advance()
		return &node{op: opConst, v: vTrue}, nil
	case tFalse:
		p.advance()
		return &node{op: opConst, v: vFalse}, nil
	case tNull:
		p.advance()
		return &node{op: opConst, v: vNull}, nil
	case tString:
		s, err := p.stringLit()
		if err != nil {
			return nil, err
		}
		return &node{op: opConst, v: value{k: kString, s: s}}, nil
	case tDecimal:
		p.advance()
		return p.decimal(t)
	case tFloat:
		p.advance()
		return p.float(t)
	case tID:
		p.advance()
		slot, ok := p.names[t.image]
		if !ok {
			slot = len(p.names)
			p.names[t.image] = slot
		}
		return &node{op: opProp, name: t.image, slot: slot}, nil
	case tLParen:
		p.advance()
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRParen); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, p.unexpected(t, "a literal, a property name, '(', '+', '-' or NOT")
}
