package bench

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// codeCounter is a finishCode that counts outcomes by code and tag and
// keeps the latencies of SUCCESS replies.
type codeCounter struct {
	mu     sync.Mutex
	codes  map[int32]int64
	tags   map[int]int64
	micros []int64
}

func newCodeCounter() *codeCounter {
	return &codeCounter{codes: map[int32]int64{}, tags: map[int]int64{}}
}

func (c *codeCounter) finish(_, tag int, micros int64, code int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.codes[code]++
	c.tags[tag]++
	if code == codec.Success {
		c.micros = append(c.micros, micros)
	}
}

// headStream is a finishCode stream of prepared HEART_BEAT frames over
// clients, tagging request i with i mod 3, ending after n requests.
func headStream(clients []*client.Conn, slots, rate, n int, cc *codeCounter) *stream {
	frame, at := codec.AppendPreparedFrame(nil, heartbeatRequest("c", "p"))
	var next atomic.Int64
	s := newStream(clients, slots, rate)
	s.prepared = func(int) ([]byte, int, int, bool) {
		i := next.Add(1) - 1
		if i >= int64(n) {
			return nil, 0, 0, false
		}
		return frame, at, int(i % 3), true
	}
	s.finishCode = cc.finish
	return s
}

// TestStreamFinishCode: in open loop and paced, a finishCode stream reports
// every reply once with its code (SUCCESS and SYSTEM_BUSY as the server
// counted them) and its tag, with a latency for each SUCCESS.
func TestStreamFinishCode(t *testing.T) {
	for _, rate := range []int{0, 2000} {
		hs := startHeartbeatServer(t)
		var clients []*client.Conn
		for range 3 {
			c, err := client.Dial(hs.addr)
			require.NoError(t, err)
			defer c.Close()
			clients = append(clients, c)
		}
		const n = 600
		cc := newCodeCounter()
		s := headStream(clients, 12, rate, n, cc)
		s.start()
		require.True(t, s.wait(20*time.Second))
		require.True(t, s.exhausted.Load())
		cc.mu.Lock()
		require.Equal(t, map[int32]int64{codec.Success: hs.ok.Load(), codec.SystemBusy: hs.busy.Load()}, cc.codes, "rate %d", rate)
		require.EqualValues(t, n, hs.seen.Load())
		require.Equal(t, map[int]int64{0: n / 3, 1: n / 3, 2: n / 3}, cc.tags)
		require.Len(t, cc.micros, int(hs.ok.Load()))
		for _, us := range cc.micros {
			require.GreaterOrEqual(t, us, int64(0))
		}
		cc.mu.Unlock()
	}
}

// TestStreamFinishCodeTransportError: the server answers the first 50
// requests and then holds every request; when the client closes, each
// slot's held request is reported once as a transport error, and so is the
// slot's refused re-issue; the stream ends.
func TestStreamFinishCodeTransportError(t *testing.T) {
	const answered, slots = 50, 4
	var seen atomic.Int64
	r := remoting.NewRouter()
	r.Handle(codec.RequestHeartBeat, func(c remoting.Conn, req *codec.Command) {
		if seen.Add(1) <= answered {
			_ = c.Reply(codec.NewResponse(req, codec.Success, ""))
		}
	})
	srv := remoting.NewServer(remoting.ServerOptions{Addr: "127.0.0.1:0", EventLoops: 1}, r, zerolog.Nop())
	require.NoError(t, srv.Start())
	defer func() { require.NoError(t, srv.Stop(context.Background())) }()
	c, err := client.Dial(srv.Addr().String())
	require.NoError(t, err)
	cc := newCodeCounter()
	s := headStream([]*client.Conn{c}, slots, 0, 1<<30, cc)
	s.start()
	deadline := time.Now().Add(10 * time.Second)
	for seen.Load() < answered+slots && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.EqualValues(t, answered+slots, seen.Load(), "every slot holds one unanswered request")
	require.NoError(t, c.Close())
	require.True(t, s.wait(10*time.Second), "slots end once the client is closed")
	cc.mu.Lock()
	defer cc.mu.Unlock()
	require.Equal(t, map[int32]int64{codec.Success: answered, codeTransport: 2 * slots}, cc.codes)
}

// TestRecorderDerivedSeries: a derived series holds exactly the outcomes of
// its parts, drain after drain.
func TestRecorderDerivedSeries(t *testing.T) {
	r := newRecorder([]string{"all", "x", "y"}, 2)
	r.derive(0, 1, 2)
	dst := r.newWindows()
	for round := range 2 {
		for i := 1; i <= 100; i++ {
			r.ok(i, 1+i%2, int64(i))
		}
		r.fail(0, 1, codec.SystemBusy)
		r.fail(1, 2, codec.MessageIllegal)
		r.drainTo(dst)
		require.EqualValues(t, 100, dst[0].ok, "round %d", round)
		require.EqualValues(t, 50, dst[1].ok)
		require.EqualValues(t, 1, dst[0].busy)
		require.EqualValues(t, 1, dst[0].errs)
		require.Equal(t, map[int32]int64{codec.SystemBusy: 1, codec.MessageIllegal: 1}, dst[0].codes)
		require.EqualValues(t, 100, dst[0].h.TotalCount())
		require.EqualValues(t, 100, dst[0].h.Max())
	}
}

// TestPointOfMatchesLatencyOf: the one-pass plot point gives latencyOf's
// count, p50, p99 and max.
func TestPointOfMatchesLatencyOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 50 {
		w := newWindow()
		for range 1 + n*37 {
			w.record(1 + rng.Int64N(int64(1+n*n*1000)))
		}
		l := latencyOf(w)
		require.Equal(t, PointStats{N: l.Count, P50: l.P50, P99: l.P99, Max: l.Max}, pointOf(w), "histogram %d", n)
	}
}
