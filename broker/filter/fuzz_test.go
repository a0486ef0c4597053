package filter

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse: Compile never panics, fails only with a *SyntaxError whose
// position lies in the expression, and a compiled expression evaluates
// any properties string without panicking, with Match agreeing with the
// evaluation, and the same way through Cached.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(casesFile); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if sql, ok := strings.CutPrefix(line, "sql "); ok {
				f.Add(unescapeSQL(sql), "a\x016\x02b\x01x\x02TAGS\x01TagA\x02")
			}
		}
	}
	f.Add("a > 5 AND b = 'x'", "a\x016\x02b\x01x\x02")
	f.Add("(((", "")
	f.Add("a BETWEEN -1 AND 1e308", "a\x01NaN\x02")
	f.Fuzz(func(t *testing.T, sql, props string) {
		e, err := Compile(sql)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %T %v", sql, err, err)
			}
			if se.Offset < 0 || se.Offset > len(sql) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("%q: position %+v", sql, se)
			}
			return
		}
		v := e.eval(props)
		switch v.k {
		case kBool, kNull, kErr:
		default:
			t.Fatalf("%q: selector evaluated to %v", sql, v)
		}
		if e.Match(props) != (v.k == kBool && v.b) {
			t.Fatalf("%q: Match disagrees with eval %v", sql, v)
		}
		_ = e.String()
		if c, err := Cached(sql); err != nil || c.Match(props) != e.Match(props) {
			t.Fatalf("%q: Cached %v", sql, err)
		}
	})
}
