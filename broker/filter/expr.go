package filter

import (
	"strings"
	"sync"

	"github.com/popshim/popshim/codec"
)

// MaxLen bounds the length of an expression Compile accepts, bytes. RocketMQ
// has no bound; popshim has one so that a request cannot make every
// scanned message cost an arbitrarily large evaluation.
const MaxLen = 64 << 10

// maxDepth bounds the nesting of parentheses and unary operators, so that
// parsing never recurses without bound (Java would end in a
// StackOverflowError, which its parser reports as a parse failure).
const maxDepth = 500

// Expr is a compiled SQL92 selector. Immutable after Compile: safe for
// concurrent use by any number of goroutines.
type Expr struct {
	src   string
	root  *node
	names []string // property names, by slot
}

// Compile parses an SQL92 selector (RocketMQ's SqlFilter.compile). Errors
// are *SyntaxError: what the grammar does not allow, and what RocketMQ's
// expression classes refuse while the expression is built (see
// SyntaxError), plus expressions longer than MaxLen or nested deeper than
// 500 levels. Any goroutine.
func Compile(sql string) (*Expr, error) {
	if len(sql) > MaxLen {
		return nil, newSyntaxError(sql, MaxLen, "expression longer than 65536 bytes")
	}
	p := &parser{lx: lexer{src: sql}, names: make(map[string]int)}
	root, err := p.selector()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(p.names))
	for n, slot := range p.names {
		names[slot] = n
	}
	return &Expr{src: sql, root: root, names: names}, nil
}

// Source returns the expression as given to Compile.
func (e *Expr) Source() string { return e.src }

// String renders the parsed expression fully parenthesized, in the style
// of RocketMQ's toString of its expression tree (for logs and tests).
func (e *Expr) String() string { return e.root.String() }

// Match reports whether a message with the given properties string (the
// stored record's "name\x01value\x02..." form, codec's layout) passes the
// selector: the expression evaluates to TRUE. NULL (unknown) and an
// evaluation error (a property that does not parse as the number it is
// compared with) do not match, as in RocketMQ's
// ExpressionMessageFilter.isMatchedByCommitLog. The properties are read
// in one pass without building a map; no allocation for expressions
// naming at most 8 properties. Any goroutine.
func (e *Expr) Match(props string) bool {
	v := e.eval(props)
	return v.k == kBool && v.b
}

// eval evaluates the expression against props.
func (e *Expr) eval(props string) value {
	var en env
	if len(e.names) > len(en.vals) {
		en.more = make([]string, len(e.names)-len(en.vals))
		en.moreHas = make([]bool, len(en.more))
	}
	if len(e.names) > 0 {
		en.scan(props, e.names)
	}
	return e.root.eval(&en)
}

// env holds the values of the properties an expression names, by slot:
// the first 8 in arrays (no allocation), the rest in more.
type env struct {
	vals    [8]string
	has     [8]bool
	more    []string
	moreHas []bool
}

// get returns slot's property as a string value, or NULL.
func (en *env) get(slot int) value {
	if slot < len(en.vals) {
		if !en.has[slot] {
			return vNull
		}
		return value{k: kString, s: en.vals[slot]}
	}
	if slot -= len(en.vals); !en.moreHas[slot] {
		return vNull
	}
	return value{k: kString, s: en.more[slot]}
}

// set stores slot's property value.
func (en *env) set(slot int, v string) {
	if slot < len(en.vals) {
		en.vals[slot], en.has[slot] = v, true
		return
	}
	en.more[slot-len(en.vals)], en.moreHas[slot-len(en.vals)] = v, true
}

// scan fills the slots of names from a properties string, with the rules
// of codec's property readers (MessageDecoder.string2messageProperties):
// pairs end at 0x02 (a final unterminated pair counts), the name ends at
// the first 0x01, pairs with an empty name or value are ignored, and the
// last pair of a name wins.
func (en *env) scan(s string, names []string) {
	for len(s) > 0 {
		seg := s
		if i := strings.IndexByte(s, codec.PropertySeparator); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		kv := strings.IndexByte(seg, codec.PropertyNameValueSeparator)
		if kv <= 0 || kv >= len(seg)-1 {
			continue
		}
		k := seg[:kv]
		for slot, n := range names {
			if n == k {
				en.set(slot, seg[kv+1:])
				break
			}
		}
	}
}

// cacheMax bounds the compiled expressions Cached keeps (RocketMQ's
// SelectorParser keeps 100); cacheMaxLen bounds the length of one.
const (
	cacheMax    = 256
	cacheMaxLen = 4 << 10
)

// cache holds compiled expressions and compile errors by source text.
var cache struct {
	mu sync.Mutex
	m  map[string]cached // REQUIRES: mu held
}

type cached struct {
	e   *Expr
	err error
}

// Cached is Compile through a process-wide cache of recent expressions
// (up to 256 of at most 4 KiB each; when full it starts over), so the
// POP and PULL requests of one subscription share one *Expr and pay the
// parse once. Errors are cached too. Any goroutine.
func Cached(sql string) (*Expr, error) {
	if len(sql) > cacheMaxLen {
		return Compile(sql)
	}
	cache.mu.Lock()
	c, ok := cache.m[sql]
	cache.mu.Unlock()
	if ok {
		return c.e, c.err
	}
	e, err := Compile(sql)
	cache.mu.Lock()
	if cache.m == nil || len(cache.m) >= cacheMax {
		cache.m = make(map[string]cached, cacheMax)
	}
	cache.m[strings.Clone(sql)] = cached{e, err}
	cache.mu.Unlock()
	return e, err
}
