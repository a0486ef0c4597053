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
