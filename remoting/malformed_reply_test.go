package remoting

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// garbage is a frame header announcing a negative length.
var garbage = []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4}

// waitUntil polls cond every millisecond until it holds; it fails the test
// after a generous hang guard (not a timing assertion).
func waitUntil(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(time.Millisecond)
	}
}

// releasedHandler reports each request on got and answers it from its own
// goroutine once the test closes the release channel named by its body;
// the Reply error goes to errs.
func releasedHandler(got chan<- int32, release map[string]chan struct{}, errs chan<- error) HandlerFunc {
	return func(c Conn, req *codec.Command) {
		got <- req.Opaque
		go func() {
			<-release[string(req.Body)]
			resp := codec.NewResponse(req, codec.Success, "")
			resp.Body = req.Body
			errs <- c.Reply(resp)
		}()
	}
}

// releasedRouter is echoRouter plus codeDeferred served by releasedHandler.
func releasedRouter(got chan<- int32, release map[string]chan struct{}, errs chan<- error) *Router {
	r := echoRouter()
	r.Handle(codeDeferred, releasedHandler(got, release, errs))
	return r
}

// One TCP write carries two requests answered later from other goroutines,
// a malformed frame and a valid frame after it. Both owed replies arrive
// (in the order they were produced), nothing after the malformed frame is
// dispatched, and then the connection closes; another connection is
// unaffected throughout.
func TestMalformedFrameStillDeliversOwedReplies(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	got := make(chan int32, 4)
	errs := make(chan error, 4)
	release := map[string]chan struct{}{"one": make(chan struct{}), "two": make(chan struct{}), "after": make(chan struct{})}
	s := startServer(t, releasedRouter(got, release, errs), ServerOptions{Metrics: m})
	good := dialClient(t, s)
	ask := func() {
		resp, err := good.Invoke(context.Background(), codec.NewRequest(codeEcho, 0, nil, []byte("alive")))
		require.NoError(t, err)
		require.Equal(t, "alive", string(resp.Body))
	}
	ask()

	nc := dialRaw(t, s)
	var stream []byte
	stream = codec.AppendFrame(stream, codec.NewRequest(codeDeferred, 1, nil, []byte("one")))
	stream = codec.AppendFrame(stream, codec.NewRequest(codeDeferred, 2, nil, []byte("two")))
	stream = append(stream, garbage...)
	stream = codec.AppendFrame(stream, codec.NewRequest(codeDeferred, 3, nil, []byte("after")))
	_, err = nc.Write(stream)
	require.NoError(t, err)

	for _, want := range []int32{1, 2} {
		select {
		case op := <-got:
			require.Equal(t, want, op)
		case <-time.After(20 * time.Second):
			t.Fatal("request not dispatched")
		}
	}
	waitUntil(t, func() bool { return sumCounter(t, reg, "popshim_remoting_malformed_frames_total") == 1 },
		"malformed frame not counted")
	ask()

	close(release["two"])
	require.NoError(t, <-errs, "reply 2 after the malformed frame was seen")
	r2 := readFrame(t, nc)
	require.Equal(t, int32(2), r2.Opaque)
	require.Equal(t, "two", string(r2.Body))
	ask()
	close(release["one"])
	require.NoError(t, <-errs, "reply 1 after the malformed frame was seen")
	r1 := readFrame(t, nc)
	require.Equal(t, int32(1), r1.Opaque)
	require.Equal(t, "one", string(r1.Body))

	n, err := io.Copy(io.Discard, nc)
	require.NoError(t, err, "expected EOF once the owed replies were written (timeout means not closed)")
	require.Zero(t, n, "nothing after the malformed frame may be answered")
	select {
	case op := <-got:
		t.Fatalf("request %d after the malformed frame was dispatched", op)
	default:
	}
	close(release["after"])
	ask()
	waitUntil(t, func() bool { return sumGauge(t, reg, "popshim_remoting_connections") == 1 },
		"the bad connection is still counted as open")
	require.Equal(t, 1.0, sumCounter(t, reg, "popshim_remoting_malformed_frames_total"))
}

// A reply that never comes does not keep the connection open: after
// MalformedGrace it closes, and the late Reply fails with net.ErrClosed
// (its buffer back in the pool, nothing handed to gnet).
func TestMalformedFrameGraceBoundsTheWait(t *testing.T) {
	for name, grace := range map[string]time.Duration{"grace expires": 20 * time.Millisecond, "negative grace": -1} {
		t.Run(name, func(t *testing.T) {
			got := make(chan int32, 1)
			errs := make(chan error, 1)
			release := map[string]chan struct{}{"late": make(chan struct{})}
			s := startServer(t, releasedRouter(got, release, errs), ServerOptions{MalformedGrace: grace})
			nc := dialRaw(t, s)
			stream := codec.AppendFrame(nil, codec.NewRequest(codeDeferred, 7, nil, []byte("late")))
			_, err := nc.Write(append(stream, garbage...))
			require.NoError(t, err)
			require.Equal(t, int32(7), <-got)
			n, err := io.Copy(io.Discard, nc)
			require.NoError(t, err, "expected EOF (timeout means not closed)")
			require.Zero(t, n)
			close(release["late"])
			require.ErrorIs(t, <-errs, net.ErrClosed)
		})
	}
}
