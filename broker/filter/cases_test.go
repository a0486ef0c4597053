package filter

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/popshim/popshim/codec"
)

// casesFile is shared with the Java interop suite (S11SqlGrammarTest),
// which runs the same cases through RocketMQ's own SelectorParser, so both
// sides agree with the expectations written there.
const casesFile = "../../testdata/filter/sql92_cases.txt"

// sqlCase is one "sql" block of the cases file.
type sqlCase struct {
	line    int
	sql     string
	wantErr bool
	evals   []sqlEval
}

// sqlEval is one "<properties> -> <result>" line.
type sqlEval struct {
	line  int
	props string // codec properties string
	want  string // TRUE, FALSE, NULL or THROW
}

// readCases parses the cases file (format in its header).
func readCases(t *testing.T) []sqlCase {
	t.Helper()
	f, err := os.Open(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sqlCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "sql "):
			out = append(out, sqlCase{line: n, sql: unescapeSQL(line[4:])})
		case len(out) == 0:
			t.Fatalf("line %d: %q before the first sql line", n, line)
		case line == "error":
			out[len(out)-1].wantErr = true
		default:
			fields := strings.Fields(line)
			if len(fields) < 3 || fields[len(fields)-2] != "->" {
				t.Fatalf("line %d: want '<props> -> <result>', got %q", n, line)
			}
			var pairs []string
			if !(len(fields) == 3 && fields[0] == "-") {
				for _, f := range fields[:len(fields)-2] {
					name, val, ok := strings.Cut(f, "=")
					if !ok {
						t.Fatalf("line %d: property %q has no '='", n, f)
					}
					pairs = append(pairs, name+"\x01"+unescapeValue(val)+"\x02")
				}
			}
			c := &out[len(out)-1]
			c.evals = append(c.evals, sqlEval{line: n, props: strings.Join(pairs, ""), want: fields[len(fields)-1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// unescapeSQL undoes \n \r \t \f \\ of a sql line.
func unescapeSQL(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r", `\t`, "\t", `\f`, "\f").Replace(s)
}

// unescapeValue undoes \s \t \n \\ of a property value.
func unescapeValue(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\s`, " ", `\t`, "\t", `\n`, "\n").Replace(s)
}

// resultName names an evaluation result as the cases file does.
func resultName(v value) string {
	switch v.k {
	case kBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case kNull:
		return "NULL"
	case kErr:
		return "THROW"
	}
	return "OTHER:" + v.String()
}

// TestCases is the differential check: every case of the shared file
// compiles (or fails to) and evaluates as written there, which is what
// RocketMQ's own SelectorParser gives (S11SqlGrammarTest).
func TestCases(t *testing.T) {
	cases := readCases(t)
	if len(cases) < 200 {
		t.Fatalf("only %d cases read", len(cases))
	}
	evals := 0
	for _, c := range cases {
		e, err := Compile(c.sql)
		if c.wantErr {
			if err == nil {
				t.Errorf("line %d: %q compiled to %s, want an error", c.line, c.sql, e)
			}
			continue
		}
		if err != nil {
			t.Errorf("line %d: %q: %v", c.line, c.sql, err)
			continue
		}
		if len(c.evals) == 0 {
			t.Errorf("line %d: %q has no evaluation", c.line, c.sql)
		}
		for _, ev := range c.evals {
			evals++
			got := resultName(e.eval(ev.props))
			if got != ev.want {
				t.Errorf("line %d: %q (%s) with %q: got %s, want %s", ev.line, c.sql, e, ev.props, got, ev.want)
			}
			if m := e.Match(ev.props); m != (ev.want == "TRUE") {
				t.Errorf("line %d: Match = %v for result %s", ev.line, m, ev.want)
			}
			if got == "TRUE" || got == "FALSE" {
				// The same properties through codec's reader: one semantics.
				for name := range codec.DecodeProperties(ev.props) {
					v, _ := codec.PropertyValue(ev.props, name)
					if slot := indexOf(e.names, name); slot >= 0 {
						var en env
						en.scan(ev.props, e.names)
						if got := en.get(slot); got.s != v {
							t.Errorf("line %d: scan read %s=%q, codec %q", ev.line, name, got.s, v)
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases, %d evaluations", len(cases), evals)
}

func indexOf(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	return -1
}
