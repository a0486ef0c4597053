package bench

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// leakIgnores are the goroutines that outlive a test by design: TestMain
// checks for leaks with them at the end, and a test may check after
// itself (goleak.VerifyNone) with them.
var leakIgnores = []goleak.Option{
	// gnet's package-level ants pool keeps these for the process's life.
	goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
	goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	// Enrolling the plaintext side of a TLS session runs on that pool;
	// an idle worker waits up to 10 s for its next task.
	goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakIgnores...)
}

// heartbeatServer answers HEART_BEAT on 127.0.0.1:0: every third request
// with SYSTEM_BUSY, the rest with SUCCESS. It counts both.
type heartbeatServer struct {
	addr      string
	ok, busy  atomic.Int64
	seen      atomic.Int64
	badBodies atomic.Int64
}

func startHeartbeatServer(t *testing.T) *heartbeatServer {
	t.Helper()
	hs := &heartbeatServer{}
	r := remoting.NewRouter()
	r.Handle(codec.RequestHeartBeat, func(c remoting.Conn, req *codec.Command) {
		if _, err := codec.DecodeHeartbeatData(req.Body); err != nil {
			hs.badBodies.Add(1)
		}
		code := codec.Success
		if hs.seen.Add(1)%3 == 0 {
			code = codec.SystemBusy
			hs.busy.Add(1)
		} else {
			hs.ok.Add(1)
		}
		_ = c.Reply(codec.NewResponse(req, code, ""))
	})
	s := remoting.NewServer(remoting.ServerOptions{Addr: "127.0.0.1:0", EventLoops: 2}, r, zerolog.Nop())
	require.NoError(t, s.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Stop(ctx))
	})
	hs.addr = s.Addr().String()
	return hs
}

// TestRunHeartbeatCountsEveryReply: open loop, every reply the server sent
// is counted once, as SUCCESS latency or as SYSTEM_BUSY.
func TestRunHeartbeatCountsEveryReply(t *testing.T) {
	hs := startHeartbeatServer(t)
	var out bytes.Buffer
	r, err := RunHeartbeat(context.Background(), Options{Addr: hs.addr, Conns: 3, Inflight: 4, Duration: 500 * time.Millisecond,
		Interval: 200 * time.Millisecond, Out: &out})
	require.NoError(t, err)
	s, ok := r.SeriesByName("heartbeat")
	require.True(t, ok)
	require.Positive(t, s.OK)
	require.Equal(t, hs.ok.Load(), s.OK)
	require.Equal(t, hs.busy.Load(), s.Busy)
	require.Zero(t, s.Errors)
	require.Zero(t, hs.badBodies.Load())
	require.Equal(t, s.OK, s.Latency.Count)
	require.NotEmpty(t, r.Intervals)
	require.NotEmpty(t, r.Points)
	var sum int64
	for _, p := range r.Points {
		sum += p.Series["heartbeat"].N
	}
	require.Equal(t, s.OK, sum, "plot points cover every SUCCESS reply")
	require.Contains(t, out.String(), "heartbeat/s")
	require.Nil(t, r.Server, "no metrics URL")
	require.Equal(t, "proc", r.BenchCPU.Source)
}

// TestStreamPacedNeverAheadOfSchedule: with a rate, the pacer issues
// request i no earlier than i/rate after the start, so the count can never
// exceed rate×elapsed+1, however fast the server is.
func TestStreamPacedNeverAheadOfSchedule(t *testing.T) {
	hs := startHeartbeatServer(t)
	c, err := client.Dial(hs.addr)
	require.NoError(t, err)
	defer c.Close()
	const rate = 200
	var sent, done atomic.Int64
	s := newStream([]*client.Conn{c}, 4, rate)
	s.build = func(int) (*codec.Command, int, bool) {
		sent.Add(1)
		return heartbeatRequest("c", "p"), 0, true
	}
	s.finish = func(_, _ int, _ int64, _ *codec.Command, err error) {
		require.NoError(t, err)
		done.Add(1)
	}
	t0 := time.Now()
	s.start()
	time.Sleep(300 * time.Millisecond)
	s.stop()
	elapsed := time.Since(t0)
	require.True(t, s.wait(10*time.Second))
	require.Positive(t, done.Load())
	require.Equal(t, sent.Load(), done.Load(), "every request sent got its reply")
	require.LessOrEqual(t, float64(sent.Load()), rate*elapsed.Seconds()+1)
}

// TestStreamExhaustion: a stream whose input runs out ends by itself with
// exhausted set, after exactly that many requests.
func TestStreamExhaustion(t *testing.T) {
	hs := startHeartbeatServer(t)
	c, err := client.Dial(hs.addr)
	require.NoError(t, err)
	defer c.Close()
	var next, done atomic.Int64
	s := newStream([]*client.Conn{c}, 8, 0)
	s.build = func(int) (*codec.Command, int, bool) {
		if next.Add(1) > 100 {
			return nil, 0, false
		}
		return heartbeatRequest("c", "p"), 0, true
	}
	s.finish = func(_, _ int, _ int64, _ *codec.Command, _ error) { done.Add(1) }
	s.start()
	require.True(t, s.wait(10*time.Second))
	require.True(t, s.exhausted.Load())
	require.EqualValues(t, 100, done.Load())
	require.EqualValues(t, 100, hs.seen.Load())
}

// TestStreamTransportError: requests in flight when the connection closes
// are reported once each as transport errors and the stream ends.
func TestStreamTransportError(t *testing.T) {
	hs := startHeartbeatServer(t)
	c, err := client.Dial(hs.addr)
	require.NoError(t, err)
	var fails, oks atomic.Int64
	s := newStream([]*client.Conn{c}, 4, 0)
	s.build = func(int) (*codec.Command, int, bool) { return heartbeatRequest("c", "p"), 0, true }
	s.finish = func(_, _ int, _ int64, _ *codec.Command, err error) {
		if err != nil {
			fails.Add(1)
		} else {
			oks.Add(1)
		}
	}
	s.start()
	deadline := time.Now().Add(10 * time.Second)
	for oks.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.GreaterOrEqual(t, oks.Load(), int64(50))
	require.NoError(t, c.Close())
	require.True(t, s.wait(10*time.Second), "slots end once the client is closed")
	require.Positive(t, fails.Load())
	require.LessOrEqual(t, fails.Load(), int64(4+4), "at most the in-flight requests plus one failed re-issue per slot")
}

func TestOptionsValidate(t *testing.T) {
	o := DefaultOptions()
	require.NoError(t, o.Validate())
	require.Equal(t, "127.0.0.1:10911", o.Addr)
	for _, bad := range []func(*Options){
		func(o *Options) { o.Conns = 0 },
		func(o *Options) { o.Inflight = -1 },
		func(o *Options) { o.Rate = -1 },
		func(o *Options) { o.ChangeBurst = 10; o.ChangePool = 0 },
		func(o *Options) { o.InvisibleTime = time.Millisecond },
		func(o *Options) { o.BodySize = 5 << 20 },
		func(o *Options) { o.ProduceBatch = 0 },
	} {
		x := DefaultOptions()
		bad(&x)
		require.Error(t, x.Validate())
	}
	x := Options{}
	x.names("ack", 42)
	require.Equal(t, "bench_42", x.Topic)
	require.Equal(t, "bench_group_42", x.Group)
	require.Equal(t, "ack", x.Label)
}
