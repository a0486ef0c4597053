package handler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/stack"
	"github.com/popshim/popshim/stack/stacktest"
)

// d2Config is a configuration for a real stack on loopback with port 0
// everywhere, data in dir, and small pools (the machine is shared).
func d2Config(dir string) *conf.Config {
	cfg := stacktest.Config(dir)
	cfg.BrokerName = "broker-d2"
	cfg.ClusterName = "ClusterD2"
	// The d2 tests were written against the production revive interval,
	// retention pass, SEND shedding and disk guard.
	def := conf.Default()
	cfg.ReviveInterval, cfg.RetentionInterval = def.ReviveInterval, def.RetentionInterval
	cfg.WaitTimeMillsInSendQueue, cfg.DiskSpaceWarningLevelRatio = def.WaitTimeMillsInSendQueue, def.DiskSpaceWarningLevelRatio
	return cfg
}

// d2Start starts a real stack with cfg and stops it when the test ends
// (unless the test closed it already).
func d2Start(t *testing.T, cfg *conf.Config) *stack.Stack { return stacktest.Start(t, cfg) }

// d2Stop closes st now (for restart tests); Close is idempotent, so the
// cleanup's second call only returns the same result.
func d2Stop(t *testing.T, st *stack.Stack) { stacktest.Stop(t, st) }

// d2Call sends one request and waits (bounded) for its response.
func d2Call(t *testing.T, c *client.Conn, code int32, ext map[string]string, body []byte) *codec.Command {
	t.Helper()
	return d2Invoke(t, c, codec.NewRequest(code, 0, ext, body))
}

func d2Invoke(t *testing.T, c *client.Conn, req *codec.Command) *codec.Command {
	t.Helper()
	resp := call(t, c, req)
	require.True(t, resp.IsResponse())
	return resp
}
