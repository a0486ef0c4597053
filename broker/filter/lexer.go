package filter

import (
	"fmt"
	"strings"
)

// tokKind is the kind of one lexical token of the selector language
// (the TOKEN sections of RocketMQ's filter/.../parser/SelectorParser.jj).
type tokKind uint8

const (
	tEOF tokKind = iota
	tNot
	tAnd
	tOr
	tBetween
	tIn
	tTrue
	tFalse
	tNull
	tIs
	tContains
	tStartsWith
	tEndsWith
	tDecimal // 0, or [1-9][0-9]* with an optional l/L
	tFloat   // 1.5, 1., .5, 1e5, 1.5E-3
	tString  // 'text' with '' for a quote
	tID      // [A-Za-z_$][A-Za-z0-9_$]*
	tEq      // =
	tNe      // <>
	tGt      // >
	tGe      // >=
	tLt      // <
	tLe      // <=
	tLParen  // (
	tComma   // ,
	tRParen  // )
	tPlus    // +
	tMinus   // -
)

// keywords are matched without regard to ASCII case; a longer identifier
// ("NOTE", "INX") is an identifier.
var keywords = map[string]tokKind{
	"NOT": tNot, "AND": tAnd, "OR": tOr, "BETWEEN": tBetween, "IN": tIn,
	"TRUE": tTrue, "FALSE": tFalse, "NULL": tNull, "IS": tIs,
	"CONTAINS": tContains, "STARTSWITH": tStartsWith, "ENDSWITH": tEndsWith,
}

// kindNames name token kinds in error messages.
var kindNames = [...]string{
	tEOF: "end of expression", tNot: "NOT", tAnd: "AND", tOr: "OR", tBetween: "BETWEEN", tIn: "IN",
	tTrue: "TRUE", tFalse: "FALSE", tNull: "NULL", tIs: "IS", tContains: "CONTAINS",
	tStartsWith: "STARTSWITH", tEndsWith: "ENDSWITH", tDecimal: "integer literal",
	tFloat: "decimal literal", tString: "string literal", tID: "identifier",
	tEq: "'='", tNe: "'<>'", tGt: "'>'", tGe: "'>='", tLt: "'<'", tLe: "'<='",
	tLParen: "'('", tComma: "','", tRParen: "')'", tPlus: "'+'", tMinus: "'-'",
}

// token is one lexical token: its kind, its text as written (image) and
// its byte offset in the expression.
type token struct {
	kind  tokKind
	image string
	pos   int
}

// describe names t for an error message: the kind and, for tokens whose
// text varies, the text.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return kindNames[tEOF]
	case tDecimal, tFloat, tString, tID:
		return fmt.Sprintf("%s %s", kindNames[t.kind], quoteImage(t.image))
	}
	return kindNames[t.kind]
}

// quoteImage renders a token's text for an error message, shortened when
// long.
func quoteImage(s string) string {
	const maxShown = 40
	if len(s) > maxShown {
		s = s[:maxShown] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// lexer cuts an expression into tokens on demand. As in the JavaCC token
// manager RocketMQ uses, a token is only read when the parser looks at it,
// so text after a complete expression that the parser never looks at is
// never checked. Whitespace is space, tab, CR, LF and form feed; comments
// are "--" up to and including a line end (without a line end, "-" is a
// minus sign) and "/* ... */".
type lexer struct {
	src string
	pos int
}

// next reads the token at the lexer's position; a character no token can
// start with, an unterminated string literal or block comment is a
// *SyntaxError.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	s, p := l.src, l.pos
	if p >= len(s) {
		return token{kind: tEOF, pos: p}, nil
	}
	c := s[p]
	one := func(k tokKind) (token, error) {
		l.pos = p + 1
		return token{kind: k, image: s[p : p+1], pos: p}, nil
	}
	two := func(k tokKind) (token, error) {
		l.pos = p + 2
		return token{kind: k, image: s[p : p+2], pos: p}, nil
	}
	switch {
	case c == '=':
		return one(tEq)
	case c == '<':
		if p+1 < len(s) && s[p+1] == '>' {
			return two(tNe)
		}
		if p+1 < len(s) && s[p+1] == '=' {
			return two(tLe)
		}
		return one(tLt)
	case c == '>':
		if p+1 < len(s) && s[p+1] == '=' {
			return two(tGe)
		}
		return one(tGt)
	case c == '(':
		return one(tLParen)
	case c == ')':
		return one(tRParen)
	case c == ',':
		return one(tComma)
	case c == '+':
		return one(tPlus)
	case c == '-':
		return one(tMinus)
	case c == '\'':
		return l.stringLit()
	case isDigit(c) || (c == '.' && p+1 < len(s) && isDigit(s[p+1])):
		return l.number(), nil
	case isIDStart(c):
		e := p + 1
		for e < len(s) && isIDPart(s[e]) {
			e++
		}
		l.pos = e
		img := s[p:e]
		if k, ok := keywords[strings.ToUpper(img)]; ok {
			return token{kind: k, image: img, pos: p}, nil
		}
		return token{kind: tID, image: img, pos: p}, nil
	}
	return token{}, l.errorAt(p, fmt.Sprintf("unexpected character %s", quoteRune(s[p:])))
}

// skipSpace moves past whitespace and comments.
func (l *lexer) skipSpace() error {
	s := l.src
	for l.pos < len(s) {
		switch c := s[l.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.pos++
		case c == '-' && strings.HasPrefix(s[l.pos:], "--"):
			end := strings.IndexAny(s[l.pos:], "\n\r")
			if end < 0 {
				return nil // no line end: a minus sign
			}
			l.pos += end + 1
		case c == '/' && strings.HasPrefix(s[l.pos:], "/*"):
			end := strings.Index(s[l.pos+2:], "*/")
			if end < 0 {
				return l.errorAt(l.pos, "unterminated comment")
			}
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// stringLit reads a quoted string literal at the lexer's position.
func (l *lexer) stringLit() (token, error) {
	s, p := l.src, l.pos
	for i := p + 1; i < len(s); i++ {
		if s[i] != '\'' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			i++
			continue
		}
		l.pos = i + 1
		return token{kind: tString, image: s[p : i+1], pos: p}, nil
	}
	return token{}, l.errorAt(p, "unterminated string literal")
}

// number reads the longest integer or decimal literal at the lexer's
// position (a digit, or '.' before a digit).
func (l *lexer) number() token {
	s, p := l.src, l.pos
	digits := func(i int) int {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i
	}
	exponent := func(i int) int { // end of [eE][+-]?[0-9]+ at i, or i
		j := i
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			j++
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if k := digits(j); k > j {
				return k
			}
		}
		return i
	}
	intEnd := digits(p)
	decEnd := p + 1 // "0"
	if s[p] != '0' {
		decEnd = intEnd
		if decEnd < len(s) && (s[decEnd] == 'l' || s[decEnd] == 'L') {
			decEnd++
		}
	}
	if s[p] == '.' {
		decEnd = p // no integer form
	}
	floatEnd := p
	switch {
	case intEnd > p && intEnd < len(s) && s[intEnd] == '.':
		floatEnd = exponent(digits(intEnd + 1))
	case intEnd > p:
		if e := exponent(intEnd); e > intEnd {
			floatEnd = e
		}
	default: // '.' digits
		floatEnd = exponent(digits(p + 1))
	}
	if floatEnd > decEnd {
		l.pos = floatEnd
		return token{kind: tFloat, image: s[p:floatEnd], pos: p}
	}
	l.pos = decEnd
	return token{kind: tDecimal, image: s[p:decEnd], pos: p}
}

// errorAt is a *SyntaxError at byte offset pos.
func (l *lexer) errorAt(pos int, msg string) error {
	return newSyntaxError(l.src, pos, msg)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIDStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}
func isIDPart(c byte) bool { return isIDStart(c) || isDigit(c) }

// quoteRune quotes the first character of s.
func quoteRune(s string) string {
	for _, r := range s {
		return fmt.Sprintf("%q", r)
	}
	return `""`
}
