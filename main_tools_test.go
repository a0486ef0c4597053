package main

import (
	"bytes"
	"net"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// The send and consume commands parse their flags (--tag and --key stand
// for --tags and --keys) and return the tools error, which main prints
// and turns into exit status 1.
func TestToolCommandsFailWithoutBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	for _, tc := range []struct {
		cmd  func() *cobra.Command
		args []string
	}{
		{sendCommand, []string{"--namesrv", addr, "--topic", "T", "--count", "2", "--body", "b", "--tag", "TagA", "--key", "k1"}},
		{consumeCommand, []string{"--namesrv", addr, "--topic", "T", "--group", "G", "--count", "2", "--timeout", "1s", "--queue-id", "0"}},
	} {
		cmd := tc.cmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(tc.args)
		require.ErrorContains(t, cmd.Execute(), "cannot reach the name server at "+addr, tc.args)
	}
}

// Values the tools library would silently replace by a default are
// refused before anything is sent.
func TestToolCommandsRefuseBadFlags(t *testing.T) {
	for _, tc := range []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{sendCommand, []string{"--count", "0"}, "--count must be at least 1, got 0"},
		{sendCommand, []string{"--count", "-3"}, "--count must be at least 1, got -3"},
		{sendCommand, []string{"--topic", ""}, "--topic must not be empty"},
		{sendCommand, []string{"--group", ""}, "--group must not be empty"},
		{sendCommand, []string{"--timeout", "0s"}, "--timeout must be positive"},
		{consumeCommand, []string{"--count", "0"}, "--count must be at least 1, got 0"},
		{consumeCommand, []string{"--topic", ""}, "--topic must not be empty"},
		{consumeCommand, []string{"--timeout", "0s"}, "--timeout must be positive, got 0s"},
		{consumeCommand, []string{"--poll-time", "-1s"}, "--poll-time (-1s) and --invisible-time (1m0s) must be positive"},
		{consumeCommand, []string{"--invisible-time", "0s"}, "must be positive"},
	} {
		cmd := tc.cmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		// An unreachable name server: a check that let the value through
		// would fail later with "cannot reach", not with tc.want.
		cmd.SetArgs(append([]string{"--namesrv", "127.0.0.1:1"}, tc.args...))
		require.ErrorContains(t, cmd.Execute(), tc.want, tc.args)
	}
}

// popshim --version prints the line `popshim version` prints.
func TestVersionFlag(t *testing.T) {
	var lines []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		require.NoError(t, root.Execute(), args)
		lines = append(lines, out.String())
	}
	require.Regexp(t, `^popshim \S+ \(go[0-9.]+ \w+/\w+\)\n$`, lines[0])
	require.Equal(t, lines[1], lines[0])
}
