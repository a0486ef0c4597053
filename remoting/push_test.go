package remoting

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// TestSendReachesClient: Server.Send writes a oneway request on the
// connection a handler saw, the client's OnRequest gets it, and an unknown
// connection id is net.ErrClosed.
func TestSendReachesClient(t *testing.T) {
	var connID atomic.Uint64
	r := NewRouter()
	r.Handle(codeEcho, func(c Conn, req *codec.Command) {
		connID.Store(c.ID())
		echoHandler(c, req)
	})
	s := startServer(t, r, ServerOptions{})
	got := make(chan *codec.Command, 1)
	cl, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{
		OnRequest: func(req *codec.Command) *codec.Command { got <- req; return nil },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cl.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, nil))
	require.NoError(t, err)

	push := codec.NewRequest(codec.RequestCheckTransactionState, 7, map[string]string{"topic": "T"}, []byte("body"))
	push.Flag |= codec.FlagOneway
	require.NoError(t, s.Send(connID.Load(), push))
	select {
	case req := <-got:
		require.Equal(t, codec.RequestCheckTransactionState, req.Code)
		require.True(t, req.IsOneway())
		require.Equal(t, "T", req.ExtFields["topic"])
		require.Equal(t, "body", string(req.Body))
	case <-ctx.Done():
		t.Fatal("the client never got the request")
	}
	require.True(t, errors.Is(s.Send(connID.Load()+1000, push), net.ErrClosed))
}
