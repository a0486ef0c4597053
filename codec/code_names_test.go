package codec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestEveryConstantNamed parses codes.go and fails when a Request* constant
// has no name, or when the two name tables disagree or overlap.
func TestEveryConstantNamed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Request") {
				continue
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok {
				continue
			}
			v, err := strconv.Atoi(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if _, ok := requestNames[int32(v)]; !ok {
				t.Errorf("%s (%d) missing from requestNames", vs.Names[0].Name, v)
			}
		}
	}
	if n < 60 {
		t.Fatalf("parsed only %d Request constants", n)
	}
	for c, name := range javaOnlyRequestNames {
		if _, dup := requestNames[c]; dup {
			t.Errorf("%d (%s) in both tables", c, name)
		}
	}
	for c, want := range map[int32]string{12: "QUERY_MESSAGE", 33: "VIEW_MESSAGE_BY_ID", 315: "VIEW_BROKER_STATS_DATA",
		25: "UPDATE_BROKER_CONFIG", 101: "GET_KV_CONFIG", 317: "GET_BROKER_CONSUME_STATS"} {
		if got := RequestName(c); got != want {
			t.Errorf("RequestName(%d) = %s, want %s", c, got, want)
		}
	}
}
