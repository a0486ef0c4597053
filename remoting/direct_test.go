package remoting

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/popshim/popshim/codec"
)

// codeBig replies with a bigReplyBytes body built from the request's opaque.
const (
	codeBig       int32 = 9004
	bigReplyBytes       = 32 << 20
)

func bigBody(opaque int32) []byte {
	return bytes.Repeat([]byte{byte(opaque), byte(opaque >> 8), 0x5a}, bigReplyBytes/3)
}

// A request answered while nothing else is owed on its connection is sent
// by the replying goroutine itself; pipelined requests keep gnet's path.
func TestReplyWithNothingOwedIsSentDirect(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, prometheus.Labels{"node_type": "broker"})
	require.NoError(t, err)
	s := startServer(t, echoRouter(), ServerOptions{Metrics: m})
	nc := dialRaw(t, s)
	for i := range 5 {
		_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, int32(i), nil, []byte{byte(i)})))
		require.NoError(t, err)
		resp := readFrame(t, nc)
		require.Equal(t, int32(i), resp.Opaque)
		require.Equal(t, []byte{byte(i)}, resp.Body)
	}
	// The replying goroutine counts a send after it returned, which can be
	// after the client has read the reply.
	require.Eventually(t, func() bool {
		return s.directReplies.Load() == 5 && sumCounter(t, reg, "popshim_remoting_direct_replies_total") == 5
	}, 10*time.Second, time.Millisecond, "one request at a time: every reply direct")
	require.Equal(t, uint64(0), s.flushes.Load(), "no reply went through AsyncWritev")
}

// A reply larger than the socket takes at once is sent in part directly
// and finished by gnet, in order with the replies after it, while the peer
// reads nothing for a while.
func TestDirectReplyPartialSendFinishesThroughGnet(t *testing.T) {
	r := echoRouter()
	r.Handle(codeBig, func(c Conn, req *codec.Command) {
		resp := codec.NewResponse(req, 0, "")
		resp.Body = bigBody(req.Opaque)
		_ = c.Reply(resp)
	})
	s := startServer(t, r, ServerOptions{})
	nc := dialRaw(t, s)
	_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeBig, 7, nil, nil)))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // the peer is not reading yet
	_, err = nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 8, nil, []byte("after"))))
	require.NoError(t, err)
	big := readFrame(t, nc)
	require.Equal(t, int32(7), big.Opaque)
	require.True(t, bytes.Equal(bigBody(7), big.Body), "the big body arrives whole")
	next := readFrame(t, nc)
	require.Equal(t, int32(8), next.Opaque)
	require.Equal(t, []byte("after"), next.Body)
	require.Equal(t, uint64(1), s.directReplies.Load(), "the big reply started directly")
	require.GreaterOrEqual(t, s.flushes.Load(), uint64(1), "its tail (and what followed) went through gnet")
	// Once gnet's buffer has drained, replies go direct again.
	require.Eventually(t, func() bool {
		_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 9, nil, nil)))
		require.NoError(t, err)
		require.Equal(t, int32(9), readFrame(t, nc).Opaque)
		return s.directReplies.Load() > 1
	}, 10*time.Second, 10*time.Millisecond)
}

// Direct replies write to the connection's descriptor from other
// goroutines while it is not marked closed; that is safe only because gnet
// runs OnClose (which marks it closed) before it closes the descriptor. A
// gnet that closed first would fail here: the descriptor would be gone, or
// another socket, when OnClose runs.
func TestOnCloseRunsBeforeDescriptorCloses(t *testing.T) {
	type seen struct {
		err  error
		peer string
	}
	var s *Server
	fds := map[uint64]int{} // conn id → descriptor, under mu
	var mu sync.Mutex
	got := make(chan seen, 1)
	s = startServer(t, echoRouter(), ServerOptions{OnClose: func(id uint64) {
		mu.Lock()
		fd, ok := fds[id]
		mu.Unlock()
		if !ok {
			return
		}
		var r seen
		if _, r.err = unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); r.err == nil {
			var sa unix.Sockaddr
			if sa, r.err = unix.Getpeername(fd); r.err == nil {
				if in4, ok := sa.(*unix.SockaddrInet4); ok {
					r.peer = (&net.TCPAddr{IP: in4.Addr[:], Port: in4.Port}).String()
				}
			}
		}
		got <- r
	}})
	nc := dialRaw(t, s)
	_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 1, nil, nil)))
	require.NoError(t, err)
	require.Equal(t, int32(1), readFrame(t, nc).Opaque)
	s.mu.Lock()
	for id, c := range s.conns {
		mu.Lock()
		fds[id] = c.fd
		mu.Unlock()
	}
	s.mu.Unlock()
	local := nc.LocalAddr().String()
	require.NoError(t, nc.Close())
	select {
	case r := <-got:
		require.NoError(t, r.err, "the descriptor is still open in OnClose")
		require.Equal(t, local, r.peer, "and still the client's socket")
	case <-time.After(10 * time.Second):
		t.Fatal("OnClose did not run")
	}
}

// Pipelined requests answered on the event loop (nothing else owed) are
// written together when the read that carried them is done: 64 echo
// requests in one write get their 64 replies, in order, from a few
// sendmsg calls instead of 64.
func TestRepliesOfOneReadSentTogether(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{})
	nc := dialRaw(t, s)
	var out []byte
	const n = 64
	for i := range n {
		out = codec.AppendFrame(out, codec.NewRequest(codeEcho, int32(i), nil, []byte{byte(i), 1, 2, 3}))
	}
	_, err := nc.Write(out)
	require.NoError(t, err)
	for i := range n {
		resp := readFrame(t, nc)
		require.Equal(t, int32(i), resp.Opaque)
		require.Equal(t, []byte{byte(i), 1, 2, 3}, resp.Body)
	}
	require.Eventually(t, func() bool { return s.directReplies.Load() == n }, 10*time.Second, time.Millisecond)
	require.Equal(t, uint64(0), s.flushes.Load(), "no reply went through AsyncWritev")
	sends := s.heldSends.Load()
	require.GreaterOrEqual(t, sends, uint64(1))
	require.LessOrEqual(t, sends, uint64(8), "%d sendmsg calls for %d replies of one write", sends, n)
}

// A ReplyScope holds the replies given from another goroutine (the group
// commit's completer) between Begin and End: 50 parked requests answered
// inside the scope leave with one sendmsg at End, in order, none through
// AsyncWritev; after End replies take the usual path again.
func TestReplyScopeSendsAtEnd(t *testing.T) {
	const n = 50
	parkedCh := make(chan parked, n+1)
	r := NewRouter()
	r.Handle(codeDeferred, func(c Conn, req *codec.Command) { parkedCh <- parked{c, req} })
	s := startServer(t, r, ServerOptions{})
	nc := dialRaw(t, s)
	var stream []byte
	for i := range n + 1 {
		stream = codec.AppendFrame(stream, codec.NewRequest(codeDeferred, int32(i), nil, nil))
	}
	_, err := nc.Write(stream)
	require.NoError(t, err)
	var held []parked
	for range n + 1 {
		held = append(held, <-parkedCh)
	}

	scope := s.ReplyScope()
	scope.Begin()
	for _, p := range held[:n] {
		require.NoError(t, p.c.Reply(codec.NewResponse(p.req, 0, "")))
	}
	require.Equal(t, uint64(0), s.heldSends.Load()+s.flushes.Load(), "nothing leaves before End")
	scope.End()
	for i := range n {
		require.Equal(t, int32(i), readFrame(t, nc).Opaque)
	}
	require.Equal(t, uint64(1), s.heldSends.Load())
	require.Equal(t, uint64(0), s.flushes.Load())

	require.NoError(t, held[n].c.Reply(codec.NewResponse(held[n].req, 0, "")))
	require.Equal(t, int32(n), readFrame(t, nc).Opaque)
	require.Equal(t, uint64(1), s.heldSends.Load(), "after End a reply is not held")
}
