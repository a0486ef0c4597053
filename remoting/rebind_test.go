package remoting

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/stretchr/testify/require"
)

// TestRestartRebindsPortWithLingeringConnections stops a server while a
// client still holds a connection (so the server side of that socket lingers
// in FIN-WAIT-2/TIME-WAIT) and starts a new server on the same port. Without
// SO_REUSEADDR the second bind fails with "address already in use".
func TestRestartRebindsPortWithLingeringConnections(t *testing.T) {
	r := NewRouter()
	r.Handle(1, echoHandler)
	first := NewServer(ServerOptions{Addr: "127.0.0.1:0", EventLoops: 1}, r, testLogger(t))
	require.NoError(t, first.Start())
	addr := first.Addr().String()

	// The client keeps its end open: the server closes first on Stop.
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	c, err := client.Dial(addr)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.Invoke(ctx, codec.NewRequest(1, 0, nil, nil))
	require.NoError(t, err)
	require.NoError(t, first.Stop(ctx))
	_ = c.Close()

	second := NewServer(ServerOptions{Addr: addr, EventLoops: 1}, r, testLogger(t))
	require.NoError(t, second.Start(), "rebinding %s right after a stop", addr)
	require.NoError(t, second.Stop(ctx))
}
