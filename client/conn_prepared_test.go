package client_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// One prepared frame sent many times, pipelined and interleaved with
// ordinary requests, reaches the server with a distinct ten-digit opaque
// each time, and every callback gets its own response.
func TestInvokePreparedAsync(t *testing.T) {
	r := remoting.NewRouter()
	var mu sync.Mutex
	seen := map[int32]bool{}
	r.Handle(codeEcho, func(c remoting.Conn, req *codec.Command) {
		mu.Lock()
		seen[req.Opaque] = true
		mu.Unlock()
		echoHandler(c, req)
	})
	s := startServer(t, r, remoting.ServerOptions{})
	c := dialClient(t, s)
	proto := codec.NewRequest(codeEcho, 0, map[string]string{"k": "v"}, []byte("prepared"))
	frame, at := codec.AppendPreparedFrame(nil, proto)
	const n = 500
	var wg sync.WaitGroup
	var bad []string
	var badMu sync.Mutex
	fail := func(s string) { badMu.Lock(); bad = append(bad, s); badMu.Unlock() }
	for i := 0; i < n; i++ {
		wg.Add(2)
		require.NoError(t, c.InvokePreparedAsync(frame, at, func(resp *codec.Command, err error) {
			defer wg.Done()
			if err != nil || resp.Code != 0 || string(resp.Body) != "prepared" {
				fail("prepared reply")
			}
		}))
		require.NoError(t, c.InvokeAsync(codec.NewRequest(codeEcho, 0, nil, []byte("plain")), func(resp *codec.Command, err error) {
			defer wg.Done()
			if err != nil || string(resp.Body) != "plain" {
				fail("plain reply")
			}
		}))
	}
	wg.Wait()
	require.Empty(t, bad)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2*n, "every request had its own opaque")
	for op := range seen {
		require.GreaterOrEqual(t, op, codec.MinPreparedOpaque)
	}
	require.Equal(t, "1000000000", string(frame[at:at+10]), "the caller's frame is not patched")
}
