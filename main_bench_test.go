package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// pflag takes a backquoted word of a usage string as the value's name in
// --help (`bench produce` showed as "--keys bench produce"), so no usage
// string of any command has one.
func TestNoBackquotesInFlagUsage(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			n++
			require.NotContains(t, f.Usage, "`", "%s --%s", c.CommandPath(), f.Name)
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, mk := range commands {
		walk(mk())
	}
	require.Greater(t, n, 100, "every command's flags were visited")
	require.False(t, strings.Contains(benchHelp(t, "produce"), "--keys bench"))
}

// benchHelp returns `popshim bench <mode> --help`.
func benchHelp(t *testing.T, mode string) string {
	t.Helper()
	cmd := benchCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{mode, "--help"})
	require.NoError(t, cmd.Execute())
	return out.String()
}
