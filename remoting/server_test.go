package remoting

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

func echoRouter() *Router {
	r := NewRouter()
	r.Handle(codeEcho, echoHandler)
	return r
}

// 32 connections × 500 pipelined requests, every response matched by opaque
// and carrying its own request's body.
func TestPipelinedManyConnections(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{})
	const conns, perConn = 32, 500
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for ci := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pipeline(s.Addr().String(), ci, perConn)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// pipeline sends n requests without waiting, then checks every answer.
func pipeline(addr string, ci, n int) error {
	c, err := client.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	type answer struct {
		want   string
		opaque int32
		resp   *codec.Command
		err    error
	}
	answers := make(chan answer, n)
	for i := range n {
		body := fmt.Sprintf("conn %d request %d", ci, i)
		req := codec.NewRequest(codeEcho, 0, nil, []byte(body))
		if err := c.InvokeAsync(req, func(resp *codec.Command, err error) {
			answers <- answer{want: body, opaque: req.Opaque, resp: resp, err: err}
		}); err != nil {
			return err
		}
	}
	for range n {
		select {
		case a := <-answers:
			switch {
			case a.err != nil:
				return a.err
			case a.resp.Opaque != a.opaque || string(a.resp.Body) != a.want || !a.resp.IsResponse():
				return fmt.Errorf("conn %d: response opaque %d body %q flag %d for request opaque %d body %q",
					ci, a.resp.Opaque, a.resp.Body, a.resp.Flag, a.opaque, a.want)
			}
		case <-time.After(20 * time.Second):
			return fmt.Errorf("conn %d: responses stopped arriving", ci)
		}
	}
	return nil
}

// A handler that parks requests and answers them later, out of order, from
// several goroutines; every response still reaches its request.
type parked struct {
	c   Conn
	req *codec.Command
}

func TestRepliesOutOfOrderFromOtherGoroutines(t *testing.T) {
	queue := make(chan parked, 4096)
	r := NewRouter()
	r.Handle(codeDeferred, func(c Conn, req *codec.Command) { queue <- parked{c, req} })
	s := startServer(t, r, ServerOptions{})

	const n = 2000
	var workers sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var held []parked
			flush := func() {
				rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
				for _, p := range held {
					resp := codec.NewResponse(p.req, 0, "")
					resp.Body = p.req.Body
					_ = p.c.Reply(resp)
				}
				held = held[:0]
			}
			for {
				select {
				case p := <-queue:
					held = append(held, p)
					if len(held) >= 1+rng.IntN(16) {
						flush()
					}
				case <-stop:
					flush()
					return
				default:
					flush()
					select {
					case p := <-queue:
						held = append(held, p)
					case <-stop:
						return
					}
				}
			}
		}()
	}
	defer func() { close(stop); workers.Wait() }()

	c := dialClient(t, s)
	done := make(chan error, n)
	for i := range n {
		body := fmt.Appendf(nil, "req-%d", i)
		req := codec.NewRequest(codeDeferred, 0, nil, body)
		require.NoError(t, c.InvokeAsync(req, func(resp *codec.Command, err error) {
			if err == nil && !bytes.Equal(resp.Body, body) {
				err = fmt.Errorf("request %q got body %q", body, resp.Body)
			}
			done <- err
		}))
	}
	for range n {
		require.NoError(t, <-done)
	}
}

func TestUnknownCodeGetsRequestCodeNotSupported(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{})
	c := dialClient(t, s)
	resp, err := c.Invoke(context.Background(), codec.NewRequest(12345, 0, nil, nil))
	require.NoError(t, err)
	require.Equal(t, codec.RequestCodeNotSupported, resp.Code)
	require.Equal(t, " request type 12345 not supported", resp.Remark)
	require.True(t, resp.IsResponse())
}

// A oneway request is handled but never answered, even when the handler
// replies: the first frame back is the answer to the following normal request.
func TestOnewayGetsNoReply(t *testing.T) {
	handled := make(chan int32, 4)
	r := NewRouter()
	r.Handle(codeEcho, func(c Conn, req *codec.Command) {
		handled <- req.Opaque
		echoHandler(c, req)
	})
	s := startServer(t, r, ServerOptions{})
	nc := dialRaw(t, s)

	oneway := codec.NewRequest(codeEcho, 41, nil, []byte("oneway"))
	oneway.Flag = codec.FlagOneway
	unknownOneway := codec.NewRequest(4242, 42, nil, nil)
	unknownOneway.Flag = codec.FlagOneway
	normal := codec.NewRequest(codeEcho, 43, nil, []byte("normal"))
	var stream []byte
	for _, c := range []*codec.Command{oneway, unknownOneway, normal} {
		stream = codec.AppendFrame(stream, c)
	}
	_, err := nc.Write(stream)
	require.NoError(t, err)

	resp := readFrame(t, nc)
	require.Equal(t, int32(43), resp.Opaque)
	require.Equal(t, "normal", string(resp.Body))
	require.Equal(t, int32(41), <-handled, "the oneway request must still reach its handler")
	require.Equal(t, int32(43), <-handled)
}

// A response frame sent by a client is ignored, not dispatched.
func TestResponseFromClientIsIgnored(t *testing.T) {
	calls := make(chan int32, 4)
	r := NewRouter()
	r.Handle(codeEcho, func(c Conn, req *codec.Command) { calls <- req.Opaque; echoHandler(c, req) })
	s := startServer(t, r, ServerOptions{})
	nc := dialRaw(t, s)
	stray := codec.NewResponse(codec.NewRequest(codeEcho, 5, nil, nil), 0, "")
	stream := codec.AppendFrame(nil, stray)
	stream = codec.AppendFrame(stream, codec.NewRequest(codeEcho, 6, nil, nil))
	_, err := nc.Write(stream)
	require.NoError(t, err)
	require.Equal(t, int32(6), readFrame(t, nc).Opaque)
	require.Equal(t, int32(6), <-calls)
}

func TestHandlerPanicAnswersSystemError(t *testing.T) {
	r := echoRouter()
	r.Handle(codePanic, func(Conn, *codec.Command) { panic("boom") })
	s := startServer(t, r, ServerOptions{})
	c := dialClient(t, s)
	resp, err := c.Invoke(context.Background(), codec.NewRequest(codePanic, 0, nil, nil))
	require.NoError(t, err)
	require.Equal(t, codec.SystemError, resp.Code)
	require.Contains(t, resp.Remark, "boom")
	resp, err = c.Invoke(context.Background(), codec.NewRequest(codeEcho, 0, nil, []byte("still up")))
	require.NoError(t, err)
	require.Equal(t, "still up", string(resp.Body))
}

func TestIdleConnectionIsClosed(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	s := startServer(t, echoRouter(), ServerOptions{IdleTimeout: 50 * time.Millisecond, Metrics: m})
	nc := dialRaw(t, s)
	expectClosed(t, nc)
	require.Equal(t, 1.0, sumCounter(t, reg, "popshim_remoting_idle_closed_total"))
}

// After the peer left, Reply reports net.ErrClosed and drops the frame.
func TestReplyAfterCloseFails(t *testing.T) {
	held := make(chan Conn, 1)
	reqs := make(chan *codec.Command, 1)
	r := NewRouter()
	r.Handle(codeDeferred, func(c Conn, req *codec.Command) { held <- c; reqs <- req })
	closed := make(chan uint64, 1)
	s := startServer(t, r, ServerOptions{OnClose: func(id uint64) {
		select {
		case closed <- id:
		default:
		}
	}})
	c, err := client.Dial(s.Addr().String())
	require.NoError(t, err)
	failed := make(chan error, 1)
	require.NoError(t, c.InvokeAsync(codec.NewRequest(codeDeferred, 0, nil, nil), func(_ *codec.Command, err error) { failed <- err }))
	conn, req := <-held, <-reqs
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-failed, net.ErrClosed)
	require.Equal(t, conn.ID(), <-closed, "OnClose reports the connection id")
	require.ErrorIs(t, conn.Reply(codec.NewResponse(req, 0, "")), net.ErrClosed)
}

func TestRPCLatencyMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, prometheus.Labels{"node_type": "broker"})
	require.NoError(t, err)
	r := echoRouter()
	r.Handle(codec.RequestHeartBeat, echoHandler)
	s := startServer(t, r, ServerOptions{Metrics: m})
	c := dialClient(t, s)
	for range 5 {
		_, err := c.Invoke(context.Background(), codec.NewRequest(codec.RequestHeartBeat, 0, nil, nil))
		require.NoError(t, err)
	}
	_, err = c.Invoke(context.Background(), codec.NewRequest(777777, 0, nil, nil))
	require.NoError(t, err)
	ow := codec.NewRequest(codec.RequestHeartBeat, 0, nil, nil)
	require.NoError(t, c.InvokeOneway(ow))
	_, err = c.Invoke(context.Background(), codec.NewRequest(codeEcho, 0, nil, nil)) // orders after the oneway
	require.NoError(t, err)

	// A reply can reach the client before its request is observed (a
	// direct reply, direct.go): wait for the last one.
	settled := func(key string) map[string]uint64 {
		var counts map[string]uint64
		require.Eventually(t, func() bool {
			counts = histogramCounts(t, reg, "rocketmq_rpc_latency")
			return counts[key] > 0
		}, 10*time.Second, time.Millisecond)
		return counts
	}
	counts := settled(strconv.Itoa(int(codeEcho)) + "/success/success")
	require.Equal(t, uint64(5), counts["heart_beat/success/success"])
	require.Equal(t, uint64(1), counts["heart_beat/success/oneway"])
	require.Equal(t, uint64(1), counts["777777/request_code_not_supported/success"], "an unnamed code is labelled by number")
	require.Equal(t, uint64(1), counts[strconv.Itoa(int(codeEcho))+"/success/success"]) // codeEcho is not a RocketMQ code
	require.Equal(t, 1.0, sumGauge(t, reg, "popshim_remoting_connections"))

	// Named admin codes get their Java name, and past MaxUnnamedRequestCodes
	// distinct unnamed codes the rest fold into "unknown".
	for code := int32(900000); code < 900000+MaxUnnamedRequestCodes+3; code++ {
		_, err = c.Invoke(context.Background(), codec.NewRequest(code, 0, nil, nil))
		require.NoError(t, err)
	}
	_, err = c.Invoke(context.Background(), codec.NewRequest(codec.RequestGetConsumeStats, 0, nil, nil))
	require.NoError(t, err)
	counts = settled("get_consume_stats/request_code_not_supported/success")
	require.Equal(t, uint64(1), counts["get_consume_stats/request_code_not_supported/success"])
	require.Equal(t, uint64(1), counts["900000/request_code_not_supported/success"])
	require.Equal(t, uint64(5), counts["unknown/request_code_not_supported/success"], "777777 and codeEcho took 2 of the 32 numeric labels: 5 of the 35 new codes fold")
}

func TestStartFailsOnBusyPortAndStopIsSafe(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{})
	dup := NewServer(ServerOptions{Addr: s.Addr().String(), EventLoops: 1}, echoRouter(), testLogger(t))
	require.Error(t, dup.Start())
	require.Error(t, dup.Stop(context.Background()), "Stop after a failed Start returns the Start error")
	require.NoError(t, NewServer(ServerOptions{}, echoRouter(), testLogger(t)).Stop(context.Background()),
		"Stop of a server that never started")
	require.Error(t, s.Start(), "a server runs once")
}

// Replies issued together are coalesced: a handler answering 300 requests
// on the event loop gives them while OnTraffic holds the connection's
// replies (hold.go), and they leave with one sendmsg when it returns, none
// through AsyncWritev. (Before the hold: one AsyncWritev for the first
// reply and one for the other 299, gathered by the write callback.)
func TestRepliesCompletedTogetherShareOneWritev(t *testing.T) {
	const n = 300
	var held []parked
	r := NewRouter()
	r.Handle(codeDeferred, func(c Conn, req *codec.Command) {
		held = append(held, parked{c, req}) // loop goroutine only
		if len(held) < n {
			return
		}
		for _, p := range held {
			_ = p.c.Reply(codec.NewResponse(p.req, 0, ""))
		}
	})
	s := startServer(t, r, ServerOptions{EventLoops: 1})
	nc := dialRaw(t, s)
	var stream []byte
	for i := range n {
		stream = codec.AppendFrame(stream, codec.NewRequest(codeDeferred, int32(i), nil, nil))
	}
	_, err := nc.Write(stream)
	require.NoError(t, err)
	for i := range n {
		require.Equal(t, int32(i), readFrame(t, nc).Opaque, "replies keep their Reply order")
	}
	// The counters move just after the sendmsg, so the peer can read the
	// replies first: wait for them, then hold them to exact values.
	require.Eventually(t, func() bool { return s.directReplies.Load() >= n }, 10*time.Second, time.Millisecond)
	require.Equal(t, uint64(0), s.flushes.Load())
	require.Equal(t, uint64(1), s.heldSends.Load())
	require.Equal(t, uint64(n), s.directReplies.Load())
}
