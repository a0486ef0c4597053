package client

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImports lists the dependencies of the client side (go list -deps, test
// files left out) and fails on any package it must not link: the broker
// (handler/..., broker/..., popstore, batch), the gnet server (remoting,
// gnet) and, except for bench's raw-storage mode, which opens its own
// RocksDB, grocksdb. tools must not link bench either, nor client link its
// users.
func TestImports(t *testing.T) {
	const mod = "github.com/popshim/popshim/"
	server := []string{mod + "handler", mod + "broker", mod + "popstore", mod + "batch", mod + "remoting", "github.com/panjf2000/gnet"}
	cases := []struct {
		pkg       string
		forbidden []string
	}{
		{mod + "client", slices.Concat(server, []string{"github.com/linxGnu/grocksdb", mod + "bench", mod + "tools"})},
		{mod + "tools", slices.Concat(server, []string{"github.com/linxGnu/grocksdb", mod + "bench"})},
		{mod + "bench", server},
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	for _, c := range cases {
		out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %d packages: %q", c.pkg, len(deps), deps)
		}
		for _, d := range deps {
			for _, f := range c.forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s (forbidden: %s)", c.pkg, d, f)
				}
			}
		}
	}
}
