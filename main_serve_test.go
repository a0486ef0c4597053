package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// popshim serve with a --message-delay-level it cannot parse fails in
// conf's validation, before the data directory is created (it used to be
// refused only by the broker, after the store had been opened there).
func TestServeRefusesBadDelayLevelBeforeDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cmd := serveCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--data-dir", dir, "--message-delay-level", "1s 5x",
		"--listen", "127.0.0.1:0", "--namesrv-listen", "", "--metrics-listen", "", "--grpc-listen", ""})
	err := cmd.Execute()
	require.ErrorContains(t, err, `bad delay level "5x"`)
	_, serr := os.Stat(dir)
	require.ErrorIs(t, serr, os.ErrNotExist, "the data directory was created before the refusal: %v", err)
	require.ErrorContains(t, err, `conf: invalid configuration: --message-delay-level "1s 5x"`)
}
