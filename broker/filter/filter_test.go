package filter

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// props builds a properties string from name, value pairs.
func props(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(kv[i] + "\x01" + kv[i+1] + "\x02")
	}
	return b.String()
}

func TestMatchTypical(t *testing.T) {
	e, err := Compile("a > 5 AND b = 'x'")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		props string
		want  bool
	}{
		{props("a", "6", "b", "x"), true},
		{props("b", "x", "a", "6"), true},
		{props("a", "6", "b", "y"), false},
		{props("a", "5", "b", "x"), false},
		{props("a", "6"), false},             // b unknown: NULL
		{props("a", "6.5", "b", "x"), false}, // Integer.valueOf fails
		{"", false},
		{"a\x016\x02b\x01x", true}, // last pair without terminator still counts
	} {
		if got := e.Match(c.props); got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.props, got, c.want)
		}
	}
	if e.Source() != "a > 5 AND b = 'x'" || e.String() != "((a > 5) AND (b = 'x'))" {
		t.Errorf("Source %q String %q", e.Source(), e.String())
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, c := range []struct {
		sql       string
		line, col int
		msg       string
	}{
		{"a = ", 1, 5, "unexpected end of expression"},
		{"a > 5 AND", 1, 10, "unexpected end of expression"},
		{"a = 1 #", 1, 7, "unexpected character '#'"},
		{"a = 'x", 1, 5, "unterminated string literal"},
		{"a = 1 /* x", 1, 7, "unterminated comment"},
		{"a = 1 AND\n  b === 2", 2, 6, "unexpected '='"},
		{"a > 'x'", 1, 3, "cannot be compared with >"},
		{"a = NULL", 1, 3, "'NULL' cannot be compared"},
		{"TRUE = 1", 1, 6, "'TRUE' cannot be compared with '1'"},
		{"a BETWEEN 5 AND 1", 1, 3, "illegal values of BETWEEN"},
		{"a IN (1)", 1, 7, "unexpected integer literal \"1\", expecting string literal"},
		{"5 IN ('x')", 1, 3, "expected a property for IN"},
		{"5", 1, 1, "will not result in a boolean value: 5"},
		{"a = 99999999999999999999", 1, 5, "out of the range of a Java long"},
		{"a > 0.0", 1, 5, "refuses zero"},
		{"a > 1e999", 1, 5, "greater than"},
		{"a = 1 NOT b", 1, 11, "unexpected identifier \"b\", expecting CONTAINS"},
		{"a IS 5", 1, 6, "expecting NULL"},
		{"é = 1", 1, 1, "unexpected character 'é'"},
		{"'é' = a AND ?", 1, 13, "unexpected character '?'"},
	} {
		_, err := Compile(c.sql)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a *SyntaxError", c.sql, err)
			continue
		}
		if se.Line != c.line || se.Column != c.col || !strings.Contains(se.Error(), c.msg) {
			t.Errorf("%q: %v (line %d col %d), want line %d col %d containing %q", c.sql, se, se.Line, se.Column, c.line, c.col, c.msg)
		}
		if !strings.HasPrefix(se.Error(), fmt.Sprintf("SQL92 expression: line %d, column %d: ", se.Line, se.Column)) {
			t.Errorf("%q: message %q", c.sql, se.Error())
		}
	}
}

func TestNestingAndLength(t *testing.T) {
	ok := strings.Repeat("(", 200) + "a = 1" + strings.Repeat(")", 200)
	if e, err := Compile(ok); err != nil || !e.Match(props("a", "1")) {
		t.Fatalf("200 levels: %v", err)
	}
	for _, sql := range []string{
		strings.Repeat("(", 1000) + "a = 1",
		strings.Repeat("NOT ", 10000) + "a",
		strings.Repeat("-", 10000) + "1 = a",
	} {
		if _, err := Compile(sql); err == nil || !strings.Contains(err.Error(), "nested more than 500 levels") {
			t.Errorf("deep %q...: %v", sql[:10], err)
		}
	}
	long := "a = '" + strings.Repeat("x", MaxLen) + "'"
	if _, err := Compile(long); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("long: %v", err)
	}
	// A long chain is not nested: it compiles and evaluates.
	chain := "a = 1" + strings.Repeat(" AND a = 1", 5000)
	e, err := Compile(chain)
	if err != nil || !e.Match(props("a", "1")) || e.Match(props("a", "2")) {
		t.Fatalf("chain: %v", err)
	}
}

func TestManyProperties(t *testing.T) {
	var terms []string
	var kv []string
	for i := range 20 {
		terms = append(terms, fmt.Sprintf("p%d = '%d'", i, i))
		kv = append(kv, fmt.Sprintf("p%d", i), fmt.Sprint(i))
	}
	e, err := Compile(strings.Join(terms, " AND "))
	if err != nil {
		t.Fatal(err)
	}
	if !e.Match(props(kv...)) {
		t.Error("20 properties all equal: no match")
	}
	kv[len(kv)-1] = "x"
	if e.Match(props(kv...)) {
		t.Error("last property differs: match")
	}
}

func TestMatchAllocs(t *testing.T) {
	e, err := Compile("a > 5 AND b = 'x' OR c IN ('1', '2', '3', '4', '5') OR d CONTAINS 'q' OR e BETWEEN 1.5 AND 9.5")
	if err != nil {
		t.Fatal(err)
	}
	p := benchProps
	if n := testing.AllocsPerRun(100, func() { e.Match(p) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
}

func TestCached(t *testing.T) {
	a, err := Cached("x = 1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Cached("x = 1")
	if a != b {
		t.Error("same source compiled twice")
	}
	_, err1 := Cached("x = ")
	_, err2 := Cached("x = ")
	if err1 == nil || !errors.Is(err2, err1) {
		t.Errorf("cached error: %v / %v", err1, err2)
	}
	for i := range 3 * cacheMax {
		if _, err := Cached(fmt.Sprintf("x = %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	cache.mu.Lock()
	n := len(cache.m)
	cache.mu.Unlock()
	if n > cacheMax {
		t.Errorf("cache holds %d > %d", n, cacheMax)
	}
	big := "x = '" + strings.Repeat("y", cacheMaxLen) + "'"
	c1, _ := Cached(big)
	c2, _ := Cached(big)
	if c1 == c2 || c1 == nil {
		t.Error("an expression above cacheMaxLen was cached")
	}
}

func TestParseJavaInt(t *testing.T) {
	for _, c := range []struct {
		s    string
		is64 bool
		n    int64
		ok   bool
	}{
		{"0", false, 0, true}, {"-0", false, 0, true}, {"+7", false, 7, true}, {"007", false, 7, true},
		{"2147483647", false, math.MaxInt32, true}, {"2147483648", false, 0, false},
		{"-2147483648", false, math.MinInt32, true}, {"-2147483649", false, 0, false},
		{"9223372036854775807", true, math.MaxInt64, true}, {"9223372036854775808", true, 0, false},
		{"-9223372036854775808", true, math.MinInt64, true}, {"-9223372036854775809", true, 0, false},
		{"", false, 0, false}, {"-", false, 0, false}, {"+", false, 0, false}, {"1 ", false, 0, false},
		{" 1", false, 0, false}, {"1.0", false, 0, false}, {"0x1", false, 0, false}, {"1_0", false, 0, false},
		{"٤٢", false, 42, true}, {"４２", false, 42, true}, {"\U0001D7CF", false, 0, false}, {"\xff", false, 0, false},
		{"--1", false, 0, false},
	} {
		n, ok := parseJavaInt(c.s, c.is64)
		if ok != c.ok || (ok && n != c.n) {
			t.Errorf("parseJavaInt(%q, %v) = %d, %v; want %d, %v", c.s, c.is64, n, ok, c.n, c.ok)
		}
	}
}

func TestParseJavaDouble(t *testing.T) {
	for _, c := range []struct {
		s  string
		f  float64
		ok bool
	}{
		{"1", 1, true}, {"1.", 1, true}, {".5", 0.5, true}, {"-.5", -0.5, true}, {"+1e3", 1000, true},
		{"1E-3", 0.001, true}, {" 2\t", 2, true}, {"\x002\x1f", 2, true}, {"2f", 2, true}, {"2.5D", 2.5, true},
		{"0x1p4", 16, true}, {"0X.8P1", 1, true}, {"0x1.8p1d", 3, true}, {"1e400", math.Inf(1), true},
		{"-1e400", math.Inf(-1), true}, {"1e-400", 0, true}, {"Infinity", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true},
		{"", 0, false}, {".", 0, false}, {"e5", 0, false}, {"1e", 0, false}, {"1e+", 0, false},
		{"inf", 0, false}, {"infinity", 0, false}, {"nan", 0, false}, {"NaNd", 0, false}, {"1_0", 0, false},
		{"0x1", 0, false}, {"0x1.8", 0, false}, {"0xp1", 0, false}, {"1ff", 0, false}, {"١", 0, false},
		{"1,5", 0, false}, {"+-1", 0, false}, {"0x1p", 0, false}, {"0x_1p1", 0, false},
	} {
		f, ok := parseJavaDouble(c.s)
		if ok != c.ok || (ok && f != c.f) {
			t.Errorf("parseJavaDouble(%q) = %v, %v; want %v, %v", c.s, f, ok, c.f, c.ok)
		}
	}
	if f, ok := parseJavaDouble("NaN"); !ok || !math.IsNaN(f) {
		t.Errorf("NaN: %v %v", f, ok)
	}
	if f, ok := parseJavaDouble("-NaN"); !ok || !math.IsNaN(f) {
		t.Errorf("-NaN: %v %v", f, ok)
	}
}

func TestCmpDouble(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		a, b float64
		want int
	}{
		{1, 2, -1}, {2, 1, 1}, {1, 1, 0}, {math.Copysign(0, -1), 0, -1}, {0, math.Copysign(0, -1), 1},
		{nan, nan, 0}, {nan, math.Inf(1), 1}, {math.Inf(1), nan, -1}, {-1, nan, -1},
	} {
		if got := cmpDouble(c.a, c.b); got != c.want {
			t.Errorf("cmpDouble(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestLexerNumbers(t *testing.T) {
	for _, c := range []struct {
		src   string
		kinds []tokKind
		imgs  []string
	}{
		{"0", []tokKind{tDecimal}, []string{"0"}},
		{"007", []tokKind{tDecimal, tDecimal, tDecimal}, []string{"0", "0", "7"}},
		{"5L5", []tokKind{tDecimal, tDecimal}, []string{"5L", "5"}},
		{"0L", []tokKind{tDecimal, tID}, []string{"0", "L"}},
		{"1.5e3x", []tokKind{tFloat, tID}, []string{"1.5e3", "x"}},
		{"1e", []tokKind{tDecimal, tID}, []string{"1", "e"}},
		{"1.5.5", []tokKind{tFloat, tFloat}, []string{"1.5", ".5"}},
		{"00.5", []tokKind{tFloat}, []string{"00.5"}},
		{"5.E+2", []tokKind{tFloat}, []string{"5.E+2"}},
		{"<><=>=<>", []tokKind{tNe, tLe, tGe, tNe}, []string{"<>", "<=", ">=", "<>"}},
		{"notes NoT", []tokKind{tID, tNot}, []string{"notes", "NoT"}},
	} {
		l := lexer{src: c.src}
		for i, k := range c.kinds {
			tk, err := l.next()
			if err != nil || tk.kind != k || tk.image != c.imgs[i] {
				t.Errorf("%q token %d: %v %q %v, want %v %q", c.src, i, tk.kind, tk.image, err, k, c.imgs[i])
			}
		}
		if tk, err := l.next(); err != nil || tk.kind != tEOF {
			t.Errorf("%q: trailing %v %v", c.src, tk, err)
		}
	}
}
