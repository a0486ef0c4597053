package handler_test

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/popshim/popshim/handler"
	"github.com/popshim/popshim/remoting"
)

// compatRow matches a request-code row of docs/COMPATIBILITY.md:
// "| code | NAME | status | ...".
var compatRow = regexp.MustCompile(`^\| (\d+) \| ([A-Z0-9_]+) \| (supported|partial|refused) \|`)

// TestCompatibilityDocMatchesTable keeps docs/COMPATIBILITY.md honest: every
// code registered on either port is listed as supported or partial, and no
// code listed as refused is registered.
func TestCompatibilityDocMatchesTable(t *testing.T) {
	f, err := os.Open("../docs/COMPATIBILITY.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	status := map[int32]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := compatRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		code, _ := strconv.Atoi(m[1])
		if prev, dup := status[int32(code)]; dup && prev != m[3] {
			t.Errorf("code %d listed twice with different status (%s, %s)", code, prev, m[3])
		}
		status[int32(code)] = m[3]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(status) < 20 {
		t.Fatalf("parsed only %d rows from docs/COMPATIBILITY.md; table format changed?", len(status))
	}
	registered := map[int32]bool{}
	// Method values on a nil *handler.Broker are never called here.
	for _, reg := range []func(*remoting.Router, *handler.Broker){handler.RegisterBroker, handler.RegisterNameServer} {
		r := remoting.NewRouter()
		reg(r, nil)
		for _, c := range r.Codes() {
			registered[c] = true
		}
	}
	for c := range registered {
		switch status[c] {
		case "supported", "partial":
		case "":
			t.Errorf("request code %d is registered but missing from docs/COMPATIBILITY.md", c)
		default:
			t.Errorf("request code %d is registered but documented as %q", c, status[c])
		}
	}
	for c, s := range status {
		if s != "refused" && !registered[c] {
			t.Errorf("docs/COMPATIBILITY.md says code %d is %s, but no handler is registered", c, s)
		}
	}
}
