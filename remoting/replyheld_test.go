package remoting

import (
	"bytes"
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// codeBigReply is answered with a body of bigReply bytes.
const (
	codeBigReply int32 = 9007
	bigReply           = 1 << 20
)

func bigRouter() *Router {
	r := echoRouter()
	body := bytes.Repeat([]byte{'b'}, bigReply)
	r.Handle(codeBigReply, func(c Conn, req *codec.Command) {
		resp := codec.NewResponse(req, 0, "")
		resp.Body = body
		_ = c.Reply(resp)
	})
	return r
}

// dialSmallWindow opens a raw connection whose receive buffer is 4 KiB
// (set before connect, so the window stays small): replies the test does
// not read pile up on the server's side.
func dialSmallWindow(t *testing.T, s *Server) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	nc, err := d.Dial("tcp", s.Addr().String())
	require.NoError(t, err)
	require.NoError(t, nc.SetDeadline(time.Now().Add(30*time.Second)))
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// askBig sends n codeBigReply requests on nc.
func askBig(t *testing.T, nc net.Conn, n int) {
	t.Helper()
	var b []byte
	for i := range n {
		b = codec.AppendFrame(b, codec.NewRequest(codeBigReply, int32(i+1), nil, nil))
	}
	_, err := nc.Write(b)
	require.NoError(t, err)
}

// Replies a peer does not read count against MaxReplyBytes once they sit in
// the connection's outbound buffer, and leave the count when the peer reads
// them, without any other traffic on that connection (the ticker looks
// again), as the gauge shows.
func TestReplyRoomFollowsUnreadReplies(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	const limit = 4 << 20
	s := startServer(t, bigRouter(), ServerOptions{MaxReplyBytes: limit, Metrics: m})
	require.EqualValues(t, limit, s.ReplyRoom())
	gauge := m.replyHeld.WithLabelValues(s.opts.Name)

	nc := dialSmallWindow(t, s)
	const asked = 16
	askBig(t, nc, asked)
	require.True(t, eventually(func() bool { return s.ReplyRoom() <= 0 }),
		"16 MiB of unread replies pass a 4 MiB bound (room %d)", s.ReplyRoom())
	require.True(t, eventually(func() bool { return testutil.ToFloat64(gauge) == float64(limit-s.ReplyRoom()) }),
		"the gauge shows what is held (%v, room %d)", testutil.ToFloat64(gauge), s.ReplyRoom())

	for i := range asked {
		resp := readFrame(t, nc)
		require.EqualValues(t, i+1, resp.Opaque)
		require.Len(t, resp.Body, bigReply)
	}
	require.True(t, eventually(func() bool { return s.ReplyRoom() == limit }),
		"the room comes back once the peer read everything (room %d)", s.ReplyRoom())
	require.True(t, eventually(func() bool { return testutil.ToFloat64(gauge) == 0 }), "gauge %v", testutil.ToFloat64(gauge))
	require.Equal(t, 1, s.openConns(), "a peer that reads is left open")
}

// A peer that holds the reply bound and reads nothing is closed once its
// outbound bytes have not shrunk for slowFrameAllowance of them; another
// connection that holds nothing stays open, and the room comes back.
func TestSlowReaderClosedAtReplyBound(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	const limit = 1 << 20
	s := startServer(t, bigRouter(), ServerOptions{MaxReplyBytes: limit, Metrics: m, slowGrace: 20 * time.Millisecond})
	idle := dialClient(t, s)

	nc := dialSmallWindow(t, s)
	askBig(t, nc, 8)
	require.True(t, eventually(func() bool { return s.ReplyRoom() <= 0 }), "room %d", s.ReplyRoom())
	require.True(t, eventually(func() bool {
		return testutil.ToFloat64(m.slowReply.WithLabelValues(s.opts.Name)) == 1
	}), "the peer that does not read is closed")
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(20*time.Second)))
	expectClosed(t, nc)
	require.True(t, eventually(func() bool { return s.ReplyRoom() == limit }), "room %d", s.ReplyRoom())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := idle.Invoke(ctx, codec.NewRequest(codeEcho, 1, nil, []byte("x")))
	require.NoError(t, err, "a connection that held nothing is still open")
	require.Equal(t, "x", string(resp.Body))
}

// With MaxReplyBytes negative nothing is counted.
func TestReplyRoomOff(t *testing.T) {
	s := startServer(t, bigRouter(), ServerOptions{MaxReplyBytes: -1})
	nc := dialSmallWindow(t, s)
	askBig(t, nc, 8)
	time.Sleep(300 * time.Millisecond)
	require.Greater(t, s.ReplyRoom(), int64(1<<40))
	require.Zero(t, s.replyOutbound.Load())
}
