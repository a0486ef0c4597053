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
	r := idRouter(&connID)
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

// A client that reads nothing gets server-initiated requests only until
// its backlog passes the push bound: then Send drops them with
// ErrPushBacklog (counted) instead of queueing every one, so the
// server's memory does not grow with them. A client that reads gets all
// of the same number.
func TestSendDropsForUnreadBacklog(t *testing.T) {
	var connID atomic.Uint64
	r := idRouter(&connID)
	s := startServer(t, r, ServerOptions{})
	nc := dialSmallWindow(t, s)
	_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 1, nil, nil)))
	require.NoError(t, err)
	readFrame(t, nc)

	const n = 20_000 // × ~1 KiB: far past pushMaxOutbound and the kernel's buffers
	push := codec.NewRequest(codec.RequestNotifyConsumerIDsChanged, 0, map[string]string{"consumerGroup": string(make([]byte, 1000))}, nil)
	push.Flag |= codec.FlagOneway
	sent, dropped := 0, 0
	for range n {
		switch err := s.Send(connID.Load(), push); {
		case err == nil:
			sent++
		case errors.Is(err, ErrPushBacklog):
			dropped++
		default:
			t.Fatal(err)
		}
	}
	require.Positive(t, dropped, "nothing dropped for a client that reads nothing (%d sent)", sent)
	require.Less(t, sent, n/2)

	// A reading client gets every one (the client reads as they come).
	var got atomic.Int64
	cl, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{
		OnRequest: func(*codec.Command) *codec.Command { got.Add(1); return nil },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cl.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, nil))
	require.NoError(t, err)
	for i := range 2_000 {
		for j := 0; ; j++ { // a brief backlog while the client catches up is waited out
			err := s.Send(connID.Load(), push)
			if err == nil {
				break
			}
			require.ErrorIs(t, err, ErrPushBacklog)
			require.Less(t, j, 1000, "push %d: the backlog of a reading client never cleared", i)
			time.Sleep(time.Millisecond)
		}
	}
	require.Eventually(t, func() bool { return got.Load() == 2_000 }, 10*time.Second, 10*time.Millisecond)
}
