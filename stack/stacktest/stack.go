package stacktest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/stack"
)

// CloseTimeout bounds Stack.Close at test end (drain the writer, stop the
// listeners).
const CloseTimeout = 20 * time.Second

// Config returns the test configuration over data directory dir: every
// listener (broker, embedded name server, metrics) on 127.0.0.1 with a
// port picked by the kernel, the gRPC endpoint off (tests that use it set
// GRPCListen to 127.0.0.1:0), BrokerIP 127.0.0.1, one event loop and small
// pools (the machine is shared), a 20 ms revive interval, no retention
// pass, and neither SEND time shedding nor the disk guard (a slow -race
// run or a nearly full CI disk must not turn SENDs into refusals; the
// fault tests turn them on). Tests change fields before Start.
func Config(dir string) *conf.Config {
	cfg := conf.Default()
	cfg.Listen, cfg.NamesrvListen, cfg.MetricsListen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.GRPCListen = ""
	cfg.DataDir = dir
	cfg.BrokerIP = "127.0.0.1"
	cfg.EventLoops = 1
	cfg.PopReaderWorkers = 2
	cfg.SyncWorkers = 2
	cfg.ReviveInterval = 20 * time.Millisecond
	cfg.RetentionInterval = -1
	cfg.WaitTimeMillsInSendQueue = 0
	cfg.DiskSpaceWarningLevelRatio = 0
	cfg.DiskSpaceCleanForciblyRatio = 0
	return cfg
}

// Start runs an in-process popshim with cfg (Config(t.TempDir()) when nil)
// and opts, and closes it when t ends, requiring a clean shutdown, unless
// the test closed it itself (Stack.Closed; such a test checks Close's
// result). Logs at error level go to stderr. Call from the test goroutine.
func Start(t testing.TB, cfg *conf.Config, opts ...stack.Option) *stack.Stack {
	t.Helper()
	if cfg == nil {
		cfg = Config(t.TempDir())
	}
	// Every test stack scribbles over the bodies it lends to handlers, so
	// a handler that keeps one fails the tests that read messages back.
	opts = append([]stack.Option{stack.WithScribbledBodies()}, opts...)
	st, err := stack.StartStack(cfg, zerolog.New(os.Stderr).Level(zerolog.ErrorLevel), opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		if !st.Closed() {
			Stop(t, st)
		}
	})
	return st
}

// Stop closes st now (restart tests) and requires a clean shutdown.
func Stop(t testing.TB, st *stack.Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	require.NoError(t, st.Close(ctx))
}

// StartEdited is Start over production defaults (conf.Default) with every
// listener (the gRPC endpoint too) on 127.0.0.1:0, BrokerIP 127.0.0.1, data in t.TempDir() and 2
// event loops, changed by edit (nil: as it is), after checking the result
// validates: for the packages that drive a broker from outside (bench,
// tools, deploy) and want the defaults a user gets.
func StartEdited(t testing.TB, edit func(*conf.Config)) *stack.Stack {
	t.Helper()
	cfg := conf.Default()
	cfg.Listen, cfg.NamesrvListen, cfg.MetricsListen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.BrokerIP, cfg.DataDir, cfg.EventLoops = "127.0.0.1", t.TempDir(), 2
	if edit != nil {
		edit(cfg)
	}
	require.NoError(t, cfg.Validate())
	return Start(t, cfg)
}
