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

// invokeResult is what an Invoke completion got.
type invokeResult struct {
	resp *codec.Command
	err  error
}

// idRouter answers codeEcho and stores the id of the connection it came
// on in connID.
func idRouter(connID *atomic.Uint64) *Router {
	r := NewRouter()
	r.Handle(codeEcho, func(c Conn, req *codec.Command) {
		connID.Store(c.ID())
		echoHandler(c, req)
	})
	return r
}

// dialAnswering connects a client whose OnRequest is answer and returns
// the server-side id of its connection (learnt from one echo request).
func dialAnswering(t *testing.T, answer func(*codec.Command) *codec.Command) (*Server, *client.Conn, uint64) {
	t.Helper()
	var connID atomic.Uint64
	r := idRouter(&connID)
	s := startServer(t, r, ServerOptions{})
	cl, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{OnRequest: answer})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cl.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, nil))
	require.NoError(t, err)
	return s, cl, connID.Load()
}

func awaitInvoke(t *testing.T, ch <-chan invokeResult) invokeResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the Invoke never completed")
	}
	return invokeResult{}
}

// TestInvokeGetsTheClientsAnswer: Invoke sends a request (not oneway) and
// its completion gets the client's response, matched by opaque; a second
// call gets its own answer.
func TestInvokeGetsTheClientsAnswer(t *testing.T) {
	s, _, connID := dialAnswering(t, func(req *codec.Command) *codec.Command {
		if req.IsOneway() {
			return nil
		}
		return codec.NewResponse(req, codec.Success, "got "+req.ExtFields["n"])
	})
	for _, n := range []string{"1", "2"} {
		ch := make(chan invokeResult, 1)
		req := codec.NewRequest(codec.RequestPushReplyMessageToClient, 0, map[string]string{"n": n}, nil)
		req.Flag |= codec.FlagOneway // Invoke clears it
		s.Invoke(connID, req, 20*time.Second, func(resp *codec.Command, err error) { ch <- invokeResult{resp, err} })
		r := awaitInvoke(t, ch)
		require.NoError(t, r.err)
		require.Equal(t, codec.Success, r.resp.Code)
		require.Equal(t, "got "+n, r.resp.Remark)
	}
}

// TestInvokeTimesOutAndFailsOnClose: a client that never answers makes
// the completion get ErrInvokeTimeout; a connection that closes while a
// call waits fails it with net.ErrClosed; an unknown connection fails at
// once.
func TestInvokeTimesOutAndFailsOnClose(t *testing.T) {
	asked := make(chan struct{}, 4)
	s, cl, connID := dialAnswering(t, func(*codec.Command) *codec.Command { asked <- struct{}{}; return nil })

	ch := make(chan invokeResult, 1)
	s.Invoke(connID, codec.NewRequest(codec.RequestPushReplyMessageToClient, 0, nil, nil), 50*time.Millisecond,
		func(resp *codec.Command, err error) { ch <- invokeResult{resp, err} })
	require.True(t, errors.Is(awaitInvoke(t, ch).err, ErrInvokeTimeout))

	s.Invoke(connID, codec.NewRequest(codec.RequestPushReplyMessageToClient, 0, nil, nil), time.Hour,
		func(resp *codec.Command, err error) { ch <- invokeResult{resp, err} })
	<-asked
	<-asked
	require.NoError(t, cl.Close())
	require.True(t, errors.Is(awaitInvoke(t, ch).err, net.ErrClosed))

	s.Invoke(connID+1000, codec.NewRequest(codec.RequestPushReplyMessageToClient, 0, nil, nil), time.Hour,
		func(resp *codec.Command, err error) { ch <- invokeResult{resp, err} })
	require.True(t, errors.Is(awaitInvoke(t, ch).err, net.ErrClosed))
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	require.Empty(t, s.calls.m, "settled calls are forgotten")
}
