package remoting

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/popshim/popshim/codec"
)

// Request codes of the read-budget tests.
const (
	codeHold int32 = 9005 // the handler parks the request until the test answers it
	codeSink int32 = 9006 // answered at once with an empty body
)

// holdRouter serves codeEcho, codeSink, and codeHold into ch.
func holdRouter(ch chan<- parked) *Router {
	r := echoRouter()
	r.Handle(codeSink, func(c Conn, req *codec.Command) { _ = c.Reply(codec.NewResponse(req, 0, "")) })
	r.Handle(codeHold, func(c Conn, req *codec.Command) { ch <- parked{c, req} })
	return r
}

// frameOf encodes a request of code with a body of n bytes.
func frameOf(code, opaque int32, n int) []byte {
	return codec.AppendFrame(nil, codec.NewRequest(code, opaque, nil, bytes.Repeat([]byte{byte(opaque)}, n)))
}

// eventually polls cond up to 4000 times, 5 ms apart, and reports whether
// it held.
func eventually(cond func() bool) bool {
	for range 4000 {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

// nextParked returns the next parked request; the deadline only keeps a
// broken server from hanging the test.
func nextParked(t *testing.T, ch <-chan parked) parked {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("no request reached the handler")
		return parked{}
	}
}

// serverSide returns the server's conn of the client connection nc, nil
// when it is not open (yet).
func serverSide(s *Server, nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if c.remote.String() == nc.LocalAddr().String() {
			return c
		}
	}
	return nil
}

// unread is the byte count waiting in the kernel receive queue of the
// server's socket of c: bytes the server has not read.
func unread(c *conn) int {
	n, err := unix.IoctlGetInt(c.gc.Fd(), unix.SIOCINQ)
	if err != nil {
		return -1
	}
	return n
}

// clientUnsent is the byte count in the send queue of the client socket
// nc that the server has not acknowledged.
func clientUnsent(nc net.Conn) int {
	raw, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	_ = raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) })
	return n
}

// replyReader reads answers from nc and sends their opaques to the
// returned channel, closed when nc ends.
func replyReader(nc net.Conn) <-chan int32 {
	out := make(chan int32, 64)
	go func() {
		defer close(out)
		for {
			f, err := readRawFrame(nc)
			if err != nil {
				return
			}
			cmd, err := codec.DecodeFrame(f)
			if err != nil {
				return
			}
			out <- cmd.Opaque
		}
	}()
	return out
}

// writeFrames writes frames to nc on a goroutine; the returned channel
// gets the first write error (nil when all were written).
func writeFrames(nc net.Conn, frames ...[]byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		for _, f := range frames {
			if _, err := nc.Write(f); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done
}

// A connection flooding 400 KiB frames has two admitted (the budget holds
// two and a half) and is then paused: its third frame is not dispatched,
// gnet holds at most one read of it, the server's receive queue holds
// bytes it does not read and the client's send queue fills (TCP flow
// control). Each answer lets one more frame in; all 16 complete, and the
// budget never holds more than its bound.
func TestReadBudgetPausesAFloodAndResumes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	ch := make(chan parked, 64)
	const body, frames = 400 << 10, 16
	size := int64(len(frameOf(codeHold, 1, body)))
	limit := 2*size + size/2
	s := startServer(t, holdRouter(ch), ServerOptions{MaxReadBytes: limit, Metrics: m})
	nc := dialRaw(t, s)
	replies := replyReader(nc)
	var all [][]byte
	for i := range frames {
		all = append(all, frameOf(codeHold, int32(i+1), body))
	}
	written := writeFrames(nc, all...)

	held := []parked{nextParked(t, ch), nextParked(t, ch)}
	var sc *conn
	require.True(t, eventually(func() bool { sc = serverSide(s, nc); return sc != nil }))
	require.True(t, eventually(func() bool {
		_, waiting, paused, _ := s.readStats()
		return waiting == 1 && paused == 1 && unread(sc) > 0 && clientUnsent(nc) >= 1<<20
	}), "the third frame should wait with the connection paused, its bytes unread and the client's send queue full: %v", func() []any {
		r, w, p, b := s.readStats()
		return []any{r, w, p, b, unread(sc), clientUnsent(nc)}
	}())
	reserved, _, _, buffered := s.readStats()
	require.Equal(t, 2*size, reserved)
	require.Equal(t, 2*size+buffered, s.HeldReadBytes(), "held: the admitted frames and what gnet read from the paused connection")
	require.LessOrEqual(t, buffered, int64(LargeFrameBytes), "gnet holds at most one read of a paused connection")
	require.Len(t, ch, 0, "no frame is dispatched beyond the budget")
	require.Equal(t, 1.0, testutil.ToFloat64(m.readPaused.WithLabelValues("broker")))
	require.Equal(t, float64(2*size), testutil.ToFloat64(m.readBytes.WithLabelValues("broker")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.readPauses.WithLabelValues("broker")))

	for next := int32(1); next <= frames; next++ {
		p := held[0]
		held = held[1:]
		require.Equal(t, next, p.req.Opaque, "frames are dispatched in order")
		require.Len(t, p.req.Body, body)
		require.Equal(t, byte(next), p.req.Body[body-1])
		require.NoError(t, p.c.Reply(codec.NewResponse(p.req, 0, "")))
		require.Equal(t, next, <-replies)
		if next+int32(len(held)) < frames {
			held = append(held, nextParked(t, ch))
		}
		reserved, _, _, _ := s.readStats()
		require.LessOrEqual(t, reserved, limit)
	}
	require.NoError(t, <-written)
	reserved, waiting, paused, buffered := s.readStats()
	require.Zero(t, reserved)
	require.Zero(t, s.HeldReadBytes())
	require.Zero(t, waiting)
	require.Zero(t, paused)
	require.Zero(t, buffered)
	require.Equal(t, 0.0, testutil.ToFloat64(m.readPaused.WithLabelValues("broker")))
	require.Equal(t, 0.0, testutil.ToFloat64(m.readBytes.WithLabelValues("broker")))
}

// While connection A is paused, a small request on another connection is
// answered at once; a second flooding connection B queues behind A, and
// admission rotates: A's waiting frame, then B's, then A's next.
func TestReadBudgetControlFlowsAndAdmissionRotates(t *testing.T) {
	ch := make(chan parked, 64)
	const body = 400 << 10
	size := int64(len(frameOf(codeHold, 1, body)))
	s := startServer(t, holdRouter(ch), ServerOptions{MaxReadBytes: 2*size + size/2})
	a := dialRaw(t, s)
	aReplies := replyReader(a)
	var aFrames [][]byte
	for i := range 4 {
		aFrames = append(aFrames, frameOf(codeHold, int32(i+1), body))
	}
	aWritten := writeFrames(a, aFrames...)
	held := []parked{nextParked(t, ch), nextParked(t, ch)}
	require.True(t, eventually(func() bool { _, w, p, _ := s.readStats(); return w == 1 && p == 1 }))

	control := dialClient(t, s)
	echoOnce(t, control, "heartbeat-sized control request")
	_, waiting, paused, _ := s.readStats()
	require.Equal(t, 1, waiting, "the echo was answered while A stayed paused")
	require.Equal(t, int64(1), paused)

	b := dialRaw(t, s)
	bReplies := replyReader(b)
	bWritten := writeFrames(b, frameOf(codeHold, 101, body))
	require.True(t, eventually(func() bool { _, w, p, _ := s.readStats(); return w == 2 && p == 2 }))

	var order []int32
	for len(held) > 0 {
		p := held[0]
		held = held[1:]
		order = append(order, p.req.Opaque)
		require.NoError(t, p.c.Reply(codec.NewResponse(p.req, 0, "")))
		if len(order)+len(held) < 5 {
			held = append(held, nextParked(t, ch))
		}
	}
	require.Equal(t, []int32{1, 2, 3, 101, 4}, order)
	for want := int32(1); want <= 4; want++ {
		require.Equal(t, want, <-aReplies)
	}
	require.Equal(t, int32(101), <-bReplies)
	require.NoError(t, <-aWritten)
	require.NoError(t, <-bWritten)
}

// 64 connections each announce a 1 MiB frame and then drip a few bytes per
// round. Four fit in the budget; the other 60 are paused after their
// first bytes: what they drip stays in the kernel, the budget never passes
// its bound, and gnet holds only their first bytes. When they send the
// rest, every frame is answered (no connection starves).
func TestReadBudgetSlowDripStaysBounded(t *testing.T) {
	const conns, admitted, first, drip, rounds = 64, 4, 100, 10, 4
	frame := func(i int) []byte { return frameOf(codeSink, int32(i+1), 1<<20-200) }
	size := int64(len(frame(0)))
	limit := admitted * size
	var maxReserved atomic.Int64
	r := NewRouter()
	var srv atomic.Pointer[Server]
	r.Handle(codeSink, func(c Conn, req *codec.Command) {
		reserved, _, _, _ := srv.Load().readStats()
		for m := maxReserved.Load(); reserved > m && !maxReserved.CompareAndSwap(m, reserved); m = maxReserved.Load() {
		}
		_ = c.Reply(codec.NewResponse(req, 0, ""))
	})
	// The admitted frames trickle on purpose while others wait: a long
	// grace keeps the slow-frame scan from closing them.
	s := startServer(t, r, ServerOptions{MaxReadBytes: limit, slowGrace: time.Hour})
	srv.Store(s)

	ncs := make([]net.Conn, conns)
	for i := range ncs {
		ncs[i] = dialRaw(t, s)
		_, err := ncs[i].Write(frame(i)[:first])
		require.NoError(t, err)
	}
	require.True(t, eventually(func() bool {
		reserved, waiting, paused, _ := s.readStats()
		return reserved == limit && waiting == conns-admitted && paused == conns-admitted
	}))
	_, _, _, buffered := s.readStats()
	require.LessOrEqual(t, buffered, int64((conns-admitted)*first))

	var pausedConns []*conn
	for _, nc := range ncs {
		sc := serverSide(s, nc)
		require.NotNil(t, sc)
		if sc.readWaiting.Load() {
			pausedConns = append(pausedConns, sc)
		}
	}
	require.Len(t, pausedConns, conns-admitted)
	sent := first
	for range rounds {
		for i, nc := range ncs {
			_, err := nc.Write(frame(i)[sent : sent+drip])
			require.NoError(t, err)
		}
		sent += drip
		require.True(t, eventually(func() bool {
			for _, sc := range pausedConns {
				if unread(sc) < sent-first {
					return false
				}
			}
			return true
		}), "what paused connections drip stays in the kernel")
		reserved, _, _, buffered := s.readStats()
		require.LessOrEqual(t, reserved, limit)
		require.LessOrEqual(t, buffered, int64((conns-admitted)*first))
	}

	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i, nc := range ncs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := nc.Write(frame(i)[sent:]); err != nil {
				errs <- err
				return
			}
			cmd := readFrame(t, nc)
			if cmd.Opaque != int32(i+1) || cmd.Code != 0 {
				errs <- net.UnknownNetworkError("unexpected answer")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.LessOrEqual(t, maxReserved.Load(), limit)
	reserved, waiting, paused, buffered := s.readStats()
	require.Zero(t, reserved)
	require.Zero(t, waiting)
	require.Zero(t, paused)
	require.Zero(t, buffered)
}
