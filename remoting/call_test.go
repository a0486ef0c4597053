package remoting

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// callResult is what one Invoke callback got.
type callResult struct {
	resp *codec.Command
	err  error
}

// callServer starts a server whose echo handler records the connection id
// of the last request it saw, and returns it with that id's source.
func callServer(t *testing.T) (*Server, *atomic.Uint64) {
	t.Helper()
	var connID atomic.Uint64
	var via atomic.Pointer[Server]
	r := NewRouter()
	r.Handle(codeEcho, func(c Conn, req *codec.Command) {
		connID.Store(c.ID())
		via.Store(ServerOf(c))
		echoHandler(c, req)
	})
	s := startServer(t, r, ServerOptions{})
	t.Cleanup(func() { assert.Same(t, s, via.Load(), "ServerOf names the dispatching server") })
	return s, &connID
}

// hello sends one echo so the server learns the client's connection id.
func hello(t *testing.T, cl *client.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cl.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, nil))
	require.NoError(t, err)
}

// invoke calls s.Invoke and returns the channel its callback reports on.
func invoke(t *testing.T, s *Server, connID uint64, req *codec.Command, timeout time.Duration) <-chan callResult {
	t.Helper()
	ch := make(chan callResult, 2)
	require.NoError(t, s.Invoke(connID, req, timeout, func(resp *codec.Command, err error) { ch <- callResult{resp, err} }))
	return ch
}

func await(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		select {
		case <-ch:
			t.Fatal("callback called twice")
		default:
		}
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the callback never ran")
	}
	return callResult{}
}

// TestInvokeRoutesResponse: Server.Invoke sends a two-way request the
// client's OnRequest answers; the answer reaches the callback with the
// client's code, remark, fields and body; nothing stays pending.
func TestInvokeRoutesResponse(t *testing.T) {
	s, connID := callServer(t)
	seen := make(chan *codec.Command, 1)
	cl, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{
		OnRequest: func(req *codec.Command) *codec.Command {
			seen <- req
			resp := codec.NewResponse(req, 1, "client says no")
			resp.ExtFields = map[string]string{"k": "v"}
			resp.Body = append([]byte("re: "), req.Body...)
			return resp
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	hello(t, cl)

	req := codec.NewRequest(codec.RequestGetConsumerRunningInfo, 0, map[string]string{"consumerGroup": "G"}, []byte("ping"))
	req.Flag = codec.FlagOneway // Invoke clears it
	r := await(t, invoke(t, s, connID.Load(), req, 10*time.Second))
	require.NoError(t, r.err)
	got := <-seen
	assert.False(t, got.IsOneway())
	assert.False(t, got.IsResponse())
	assert.Equal(t, "G", got.ExtFields["consumerGroup"])
	assert.True(t, r.resp.IsResponse())
	assert.Equal(t, got.Opaque, r.resp.Opaque)
	assert.Equal(t, int32(1), r.resp.Code)
	assert.Equal(t, "client says no", r.resp.Remark)
	assert.Equal(t, "v", r.resp.ExtFields["k"])
	assert.Equal(t, "re: ping", string(r.resp.Body))
	assert.Zero(t, s.calls.pending())
}

// TestInvokeMatchesByOpaque: two calls on one connection answered in the
// reverse order each get their own answer; a response nobody waits for is
// dropped and the connection keeps working.
func TestInvokeMatchesByOpaque(t *testing.T) {
	s, connID := callServer(t)
	nc := dialRaw(t, s)
	_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 5, nil, nil)))
	require.NoError(t, err)
	require.Equal(t, int32(5), readFrame(t, nc).Opaque)

	first := invoke(t, s, connID.Load(), codec.NewRequest(codec.RequestConsumeMessageDirectly, 0, nil, []byte("1")), 10*time.Second)
	second := invoke(t, s, connID.Load(), codec.NewRequest(codec.RequestConsumeMessageDirectly, 0, nil, []byte("2")), 10*time.Second)
	r1, r2 := readFrame(t, nc), readFrame(t, nc)
	require.NotEqual(t, r1.Opaque, r2.Opaque)
	stray := codec.NewResponse(&codec.Command{Opaque: r1.Opaque + r2.Opaque + 1000}, 0, "nobody asked")
	for _, q := range []*codec.Command{r2, r1} {
		resp := codec.NewResponse(q, 0, "")
		resp.Body = append([]byte("answer "), q.Body...)
		_, err := nc.Write(codec.AppendFrame(codec.AppendFrame(nil, stray), resp))
		require.NoError(t, err)
	}
	assert.Equal(t, "answer 1", string(await(t, first).resp.Body))
	assert.Equal(t, "answer 2", string(await(t, second).resp.Body))
	_, err = nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 6, nil, nil)))
	require.NoError(t, err)
	assert.Equal(t, int32(6), readFrame(t, nc).Opaque, "the stray responses did not hurt the connection")
}

// TestInvokeTimeout: a client that never answers ends the call with
// ErrCallTimeout naming the channel and the timeout; the late answer is
// then dropped.
func TestInvokeTimeout(t *testing.T) {
	s, connID := callServer(t)
	nc := dialRaw(t, s)
	_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 5, nil, nil)))
	require.NoError(t, err)
	readFrame(t, nc)
	ch := invoke(t, s, connID.Load(), codec.NewRequest(codec.RequestGetConsumerRunningInfo, 0, nil, nil), 50*time.Millisecond)
	q := readFrame(t, nc)
	r := await(t, ch)
	require.ErrorIs(t, r.err, ErrCallTimeout)
	assert.Contains(t, r.err.Error(), "wait response on the channel <"+nc.LocalAddr().String()+"> timeout, 50(ms)")
	assert.Nil(t, r.resp)
	_, err = nc.Write(codec.AppendFrame(nil, codec.NewResponse(q, 0, "late")))
	require.NoError(t, err)
	_, err = nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 6, nil, nil)))
	require.NoError(t, err)
	assert.Equal(t, int32(6), readFrame(t, nc).Opaque)
	select {
	case r := <-ch:
		t.Fatalf("callback called again: %+v", r)
	default:
	}
}

// TestInvokeConnectionClosed: the connection closing ends its waiting
// calls with net.ErrClosed at once; Invoke on a connection that is gone
// fails without calling back; a non-positive timeout is refused.
func TestInvokeConnectionClosed(t *testing.T) {
	s, connID := callServer(t)
	nc := dialRaw(t, s)
	_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 5, nil, nil)))
	require.NoError(t, err)
	readFrame(t, nc)
	id := connID.Load()
	ch := invoke(t, s, id, codec.NewRequest(codec.RequestGetConsumerRunningInfo, 0, nil, nil), time.Hour)
	readFrame(t, nc)
	require.NoError(t, nc.Close())
	r := await(t, ch)
	require.True(t, errors.Is(r.err, net.ErrClosed), "%v", r.err)
	assert.Contains(t, r.err.Error(), "send request to <")
	assert.Zero(t, s.calls.pending())

	called := false
	err = s.Invoke(id, codec.NewRequest(codec.RequestGetConsumerRunningInfo, 0, nil, nil), time.Second,
		func(*codec.Command, error) { called = true })
	require.True(t, errors.Is(err, net.ErrClosed), "%v", err)
	assert.False(t, called)
	assert.Error(t, s.Invoke(id, codec.NewRequest(1, 0, nil, nil), 0, func(*codec.Command, error) {}))
	assert.Nil(t, ServerOf(nil))
}

// TestInvokeLargeResponse: an answer larger than LargeFrameBytes (a
// ConsumerRunningInfo with a jstack can be) takes the large-frame read
// path and still completes its call, with its budget returned.
func TestInvokeLargeResponse(t *testing.T) {
	var connID atomic.Uint64
	r0 := NewRouter()
	r0.Handle(codeEcho, func(c Conn, req *codec.Command) { connID.Store(c.ID()); echoHandler(c, req) })
	s := startServer(t, r0, ServerOptions{MaxReadBytes: 1 << 20})
	big := make([]byte, 3*LargeFrameBytes)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	cl, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{
		OnRequest: func(req *codec.Command) *codec.Command {
			resp := codec.NewResponse(req, 0, "")
			resp.Body = big
			return resp
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	hello(t, cl)
	r := await(t, invoke(t, s, connID.Load(), codec.NewRequest(codec.RequestGetConsumerRunningInfo, 0, nil, nil), 10*time.Second))
	require.NoError(t, r.err)
	assert.Equal(t, big, r.resp.Body)
	assert.Zero(t, s.calls.pending())
	hello(t, cl) // the connection reads on
	s.budget.mu.Lock()
	assert.Zero(t, s.budget.reserved, "the response's read budget was returned")
	s.budget.mu.Unlock()
}
