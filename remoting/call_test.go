package remoting

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// rawCallServer starts a server whose echo handler records the connection
// id of the last request it saw and the Server ServerOf gave it.
func rawCallServer(t *testing.T, opts ServerOptions) (*Server, *atomic.Uint64) {
	t.Helper()
	var connID atomic.Uint64
	var via atomic.Pointer[Server]
	r := NewRouter()
	r.Handle(codeEcho, func(c Conn, req *codec.Command) {
		connID.Store(c.ID())
		via.Store(ServerOf(c))
		echoHandler(c, req)
	})
	s := startServer(t, r, opts)
	t.Cleanup(func() { assert.Same(t, s, via.Load(), "ServerOf names the dispatching server") })
	return s, &connID
}

// invokeCh calls s.Invoke and returns the channel its completion reports on.
func invokeCh(s *Server, connID uint64, req *codec.Command, timeout time.Duration) <-chan invokeResult {
	ch := make(chan invokeResult, 2)
	s.Invoke(connID, req, timeout, func(resp *codec.Command, err error) { ch <- invokeResult{resp, err} })
	return ch
}

// TestInvokeMatchesByOpaque: two calls on one connection answered in the
// reverse order each get their own answer; a response nobody waits for is
// dropped and the connection keeps working; ServerOf of a handler's Conn
// is its server, and nil for anything else.
func TestInvokeMatchesByOpaque(t *testing.T) {
	s, connID := rawCallServer(t, ServerOptions{})
	nc := dialRaw(t, s)
	_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 5, nil, nil)))
	require.NoError(t, err)
	require.Equal(t, int32(5), readFrame(t, nc).Opaque)

	first := invokeCh(s, connID.Load(), codec.NewRequest(codec.RequestConsumeMessageDirectly, 0, nil, []byte("1")), 10*time.Second)
	second := invokeCh(s, connID.Load(), codec.NewRequest(codec.RequestConsumeMessageDirectly, 0, nil, []byte("2")), 10*time.Second)
	r1, r2 := readFrame(t, nc), readFrame(t, nc)
	require.NotEqual(t, r1.Opaque, r2.Opaque)
	stray := codec.NewResponse(&codec.Command{Opaque: r1.Opaque + r2.Opaque + 1000}, 0, "nobody asked")
	for _, q := range []*codec.Command{r2, r1} {
		resp := codec.NewResponse(q, 0, "")
		resp.Body = append([]byte("answer "), q.Body...)
		_, err := nc.Write(codec.AppendFrame(codec.AppendFrame(nil, stray), resp))
		require.NoError(t, err)
	}
	assert.Equal(t, "answer 1", string(awaitInvoke(t, first).resp.Body))
	assert.Equal(t, "answer 2", string(awaitInvoke(t, second).resp.Body))
	_, err = nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 6, nil, nil)))
	require.NoError(t, err)
	assert.Equal(t, int32(6), readFrame(t, nc).Opaque, "the stray responses did not hurt the connection")
	assert.Nil(t, ServerOf(nil))
}

// TestInvokeLargeResponse: an answer larger than LargeFrameBytes (a
// ConsumerRunningInfo with a jstack can be) takes the large-frame read
// path, completes its call and returns its read budget.
func TestInvokeLargeResponse(t *testing.T) {
	s, connID := rawCallServer(t, ServerOptions{MaxReadBytes: 1 << 20})
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
	hello := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := cl.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, nil))
		require.NoError(t, err)
	}
	hello()
	r := awaitInvoke(t, invokeCh(s, connID.Load(), codec.NewRequest(codec.RequestGetConsumerRunningInfo, 0, nil, nil), 10*time.Second))
	require.NoError(t, r.err)
	assert.Equal(t, big, r.resp.Body)
	hello() // the connection reads on
	s.budget.mu.Lock()
	assert.Zero(t, s.budget.reserved, "the answer's read budget was returned")
	s.budget.mu.Unlock()
}
