package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/remoting/logtest"
	"github.com/popshim/popshim/stack/stacktest"
)

// The bench commands refuse an explicit 0 that would silently become the
// default, before dialling (the address is unreachable: a check that let
// the value through would fail with a dial error instead).
func TestBenchCommandsRefuseMeaninglessZero(t *testing.T) {
	for _, args := range [][]string{
		{"--conns=0"},
		{"produce", "--conns=0"},
		{"grpc-send", "--conns=0"},
	} {
		cmd := benchCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(args, "--addr=127.0.0.1:1"))
		require.ErrorContains(t, cmd.Execute(), "--conns must be at least 1, got 0", args)
	}
}

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

// A bench run that SIGINT ends returns errInterrupted (exit status 130),
// so a script running benches in a row (testdata/bench/cost.sh) stops
// instead of tabulating the partial run and going on.
func TestBenchInterruptedBySignal(t *testing.T) {
	st := stacktest.StartEdited(t, nil)
	cmd := benchCommand()
	var out logtest.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"produce", "--addr=" + st.BrokerAddr(), "--duration=1m", "--interval=100ms",
		"--fsync-probe-every=0", "--conns=1", "--inflight=2"})
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "send") }, 30*time.Second, 10*time.Millisecond,
		"the run did not start: %s", out.String())
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT)) // caught by the run's NotifyContext
	select {
	case err := <-done:
		var ec exitCodeError
		require.ErrorAs(t, err, &ec)
		require.Equal(t, 130, ec.code)
	case <-time.After(time.Minute):
		t.Fatal("the run did not end on SIGINT")
	}
}
