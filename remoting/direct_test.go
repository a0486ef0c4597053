package remoting

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

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

// Every duplicate descriptor is closed with its connection: the process's
// socket descriptors come back to what they were before the connections.
func TestDirectDescriptorsClosedWithConnections(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{})
	sockets := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		n := 0
		for _, e := range ents {
			if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
				n++
			}
		}
		return n
	}
	baseSockets, baseDups := sockets(), directFDs.Load()
	for i := range 20 {
		nc := dialRaw(t, s)
		_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, int32(i), nil, nil)))
		require.NoError(t, err)
		require.Equal(t, int32(i), readFrame(t, nc).Opaque)
		s.mu.Lock()
		held := 0
		for _, c := range s.conns {
			c.mu.Lock()
			if c.directFD >= 0 {
				held++
			}
			c.mu.Unlock()
		}
		s.mu.Unlock()
		require.Positive(t, held, "the open connection holds a duplicate")
		require.NoError(t, nc.Close())
	}
	require.Eventually(t, func() bool { return s.openConns() == 0 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, uint64(20), s.directReplies.Load())
	require.Equal(t, baseDups, directFDs.Load(), "every duplicate released")
	// At most the baseline: sockets of an earlier test may still have been
	// closing when it was taken.
	require.Eventually(t, func() bool { return sockets() <= baseSockets }, 10*time.Second, 10*time.Millisecond,
		"no socket descriptor left open")
}

// Past the descriptor bound replies take gnet's path only.
func TestDirectRepliesBoundedByDescriptorCap(t *testing.T) {
	saved := directFDCap
	directFDCap = directFDs.Load()
	t.Cleanup(func() { directFDCap = saved })
	s := startServer(t, echoRouter(), ServerOptions{})
	nc := dialRaw(t, s)
	for i := range 3 {
		_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, int32(i), nil, nil)))
		require.NoError(t, err)
		require.Equal(t, int32(i), readFrame(t, nc).Opaque)
	}
	require.Equal(t, uint64(0), s.directReplies.Load())
	require.Equal(t, uint64(3), s.flushes.Load())
}
