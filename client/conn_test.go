package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// A handler sends a request to the client (as NOTIFY_CONSUMER_IDS_CHANGED
// would); the client answers it, the server ignores that answer, and the
// original request is still answered.
func TestClientToleratesServerRequests(t *testing.T) {
	r := remoting.NewRouter()
	r.Handle(codeServerReq, func(c remoting.Conn, req *codec.Command) {
		_ = c.Reply(codec.NewRequest(40, 777, nil, nil)) // server -> client request
		oneway := codec.NewRequest(40, 778, nil, nil)
		oneway.Flag = codec.FlagOneway
		_ = c.Reply(oneway)
		_ = c.Reply(codec.NewResponse(req, 0, "done"))
	})
	s := startServer(t, r, remoting.ServerOptions{})
	seen := make(chan int32, 2)
	c, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{
		OnRequest: func(req *codec.Command) *codec.Command {
			seen <- req.Opaque
			return codec.NewResponse(req, 0, "")
		},
	})
	require.NoError(t, err)
	defer c.Close()
	for range 3 {
		resp, err := c.Invoke(context.Background(), codec.NewRequest(codeServerReq, 0, nil, nil))
		require.NoError(t, err)
		require.Equal(t, "done", resp.Remark)
		require.Equal(t, int32(777), <-seen)
		require.Equal(t, int32(778), <-seen)
	}
	plain := dialClient(t, s) // default OnRequest: answers REQUEST_CODE_NOT_SUPPORTED
	resp, err := plain.Invoke(context.Background(), codec.NewRequest(codeServerReq, 0, nil, nil))
	require.NoError(t, err)
	require.Equal(t, "done", resp.Remark)
}

// Invoke gives up at the context deadline and forgets the request; a
// server that goes away fails every pending request of its clients.
func TestClientContextAndServerLoss(t *testing.T) {
	r := remoting.NewRouter()
	r.Handle(codeDeferred, func(remoting.Conn, *codec.Command) {}) // never answers
	s := remoting.NewServer(remoting.ServerOptions{Addr: "127.0.0.1:0", EventLoops: 1}, r, testLogger(t))
	require.NoError(t, s.Start())
	c := dialClient(t, s)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Invoke(ctx, codec.NewRequest(codeDeferred, 0, nil, nil))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Zero(t, client.PendingCount(c), "a timed-out request leaves no pending entry")

	failed := make(chan error, 10)
	for range 10 {
		require.NoError(t, c.InvokeAsync(codec.NewRequest(codeDeferred, 0, nil, nil), func(_ *codec.Command, err error) { failed <- err }))
	}
	// Stop closes the connection: every pending request fails.
	require.NoError(t, s.Stop(context.Background()))
	for range 10 {
		require.ErrorIs(t, <-failed, net.ErrClosed)
	}
	<-c.Done()
	require.ErrorIs(t, c.Err(), net.ErrClosed)
	require.ErrorIs(t, c.InvokeAsync(codec.NewRequest(codeDeferred, 0, nil, nil), func(*codec.Command, error) {}), net.ErrClosed)
}
