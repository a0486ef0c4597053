package remoting

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// A closing connection returns its budget: the unanswered large request of
// A (its late answer fails and returns nothing twice), and the place in the
// queue of C, which was reset while waiting. B, queued behind A, is
// admitted.
func TestReadBudgetReturnedOnClose(t *testing.T) {
	ch := make(chan parked, 8)
	const body = 400 << 10
	size := int64(len(frameOf(codeHold, 1, body)))
	s := startServer(t, holdRouter(ch), ServerOptions{MaxReadBytes: size + size/2})
	a, b, c := dialRaw(t, s), dialRaw(t, s), dialRaw(t, s)
	_, err := a.Write(frameOf(codeHold, 1, body))
	require.NoError(t, err)
	pa := nextParked(t, ch)
	bWritten := writeFrames(b, frameOf(codeHold, 2, body))
	require.True(t, eventually(func() bool { _, w, _, _ := s.readStats(); return w == 1 }), "%v", func() []any {
		r, w, p, b := s.readStats()
		return []any{r, w, p, b}
	}())
	cWritten := writeFrames(c, frameOf(codeHold, 3, body)[:body/2])
	require.True(t, eventually(func() bool { _, w, p, _ := s.readStats(); return w == 2 && p == 2 }))

	require.NoError(t, a.Close())
	pb := nextParked(t, ch)
	require.Equal(t, int32(2), pb.req.Opaque)
	require.ErrorIs(t, pa.c.Reply(codec.NewResponse(pa.req, 0, "")), net.ErrClosed)
	reserved, waiting, _, _ := s.readStats()
	require.Equal(t, size, reserved, "A's budget came back once, B holds its own")
	require.Equal(t, 1, waiting)

	// A FIN from C would queue behind the bytes the server does not read;
	// a reset reaches a paused connection at once.
	require.NoError(t, <-cWritten)
	require.NoError(t, c.(*net.TCPConn).SetLinger(0))
	require.NoError(t, c.Close())
	require.True(t, eventually(func() bool { _, w, p, _ := s.readStats(); return w == 0 && p == 0 }))
	require.NoError(t, pb.c.Reply(codec.NewResponse(pb.req, 0, "")))
	require.Equal(t, int32(2), readFrame(t, b).Opaque)
	require.NoError(t, <-bWritten)
	reserved, _, _, _ = s.readStats()
	require.Zero(t, reserved)
}

// A large frame whose header length runs past its end is malformed: the
// connection closes and its budget comes back.
func TestReadBudgetMalformedLargeFrame(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{MaxReadBytes: 1 << 20})
	nc := dialRaw(t, s)
	f := frameOf(codeEcho, 1, 100<<10)
	f[5], f[6], f[7] = 0xFF, 0xFF, 0xFF
	_, err := nc.Write(f)
	require.NoError(t, err)
	expectClosed(t, nc)
	require.True(t, eventually(func() bool { r, _, _, _ := s.readStats(); return r == 0 }))
}

// A paused connection whose peer closes (FIN, nothing left unsent) is
// closed by the server at once, not when its turn comes.
func TestReadBudgetPausedPeerCloses(t *testing.T) {
	ch := make(chan parked, 8)
	const body = 400 << 10
	size := int64(len(frameOf(codeHold, 1, body)))
	s := startServer(t, holdRouter(ch), ServerOptions{MaxReadBytes: size})
	a, d := dialRaw(t, s), dialRaw(t, s)
	_, err := a.Write(frameOf(codeHold, 1, body))
	require.NoError(t, err)
	pa := nextParked(t, ch)
	_, err = d.Write(frameOf(codeHold, 2, body)[:100])
	require.NoError(t, err)
	require.True(t, eventually(func() bool { _, w, p, _ := s.readStats(); return w == 1 && p == 1 }))
	require.NoError(t, d.Close())
	require.True(t, eventually(func() bool { _, w, p, b := s.readStats(); return w == 0 && p == 0 && b == 0 }))
	require.Equal(t, 1, waitOpenConns(s, 1))
	require.NoError(t, pa.c.Reply(codec.NewResponse(pa.req, 0, "")))
	require.Equal(t, int32(1), readFrame(t, a).Opaque)
}
