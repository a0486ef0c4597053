package handler_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting"
	"github.com/popshim/popshim/stack"
)

// d2Config is a configuration for a real stack on loopback with port 0
// everywhere, data in dir, and small pools (the machine is shared).
func d2Config(dir string) *conf.Config {
	cfg := conf.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NamesrvListen = "127.0.0.1:0"
	cfg.MetricsListen = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.BrokerIP = "127.0.0.1"
	cfg.BrokerName = "broker-d2"
	cfg.ClusterName = "ClusterD2"
	cfg.EventLoops = 1
	cfg.PopReaderWorkers = 2
	cfg.SyncWorkers = 2
	return cfg
}

// d2Start starts a real stack with cfg and stops it when the test ends
// (unless the test closed it already).
func d2Start(t *testing.T, cfg *conf.Config) *stack.Stack {
	t.Helper()
	st, err := stack.StartStack(cfg, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, st.Close(ctx))
	})
	return st
}

// d2Stop closes st now (for restart tests); Close is idempotent, so the
// cleanup's second call only returns the same result.
func d2Stop(t *testing.T, st *stack.Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, st.Close(ctx))
}

// d2Call sends one request and waits (bounded) for its response.
func d2Call(t *testing.T, c *remoting.Client, code int32, ext map[string]string, body []byte) *codec.Command {
	t.Helper()
	return d2Invoke(t, c, codec.NewRequest(code, 0, ext, body))
}

func d2Invoke(t *testing.T, c *remoting.Client, req *codec.Command) *codec.Command {
	t.Helper()
	resp := call(t, c, req)
	require.True(t, resp.IsResponse())
	return resp
}
