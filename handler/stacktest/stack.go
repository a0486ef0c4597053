package stacktest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler"
)

// closeTimeout bounds Stack.Close at test end (drain the writer, stop the
// listeners).
const closeTimeout = 20 * time.Second

// Start runs an in-process popshim and stops it when t ends (Close must
// return nil). The configuration is conf.Default with every listener on
// 127.0.0.1:0 (broker, embedded name server, metrics), BrokerIP 127.0.0.1,
// DataDir t.TempDir() and 2 event loops; edit, when not nil, changes it
// before validation (for example the write mode). Logs at error level go to
// stderr. Call from the test goroutine.
func Start(t testing.TB, edit func(*conf.Config)) *handler.Stack {
	t.Helper()
	cfg := conf.Default()
	cfg.Listen, cfg.NamesrvListen, cfg.MetricsListen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.BrokerIP, cfg.DataDir, cfg.EventLoops = "127.0.0.1", t.TempDir(), 2
	if edit != nil {
		edit(cfg)
	}
	require.NoError(t, cfg.Validate())
	st, err := handler.StartStack(cfg, zerolog.New(os.Stderr).Level(zerolog.ErrorLevel))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		require.NoError(t, st.Close(ctx))
	})
	return st
}
