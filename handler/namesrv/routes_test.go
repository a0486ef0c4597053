package namesrv

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// peer is an in-test name server answering GET_ROUTEINFO_BY_TOPIC from a
// table of read-queue counts per topic (one broker "b1"); a missing topic
// answers TOPIC_NOT_EXIST, mute stops answering at all.
type peer struct {
	mu     sync.Mutex
	queues map[string]int32
	mute   bool
	asked  atomic.Int32
}

func (p *peer) handle(c remoting.Conn, req *codec.Command) {
	p.asked.Add(1)
	p.mu.Lock()
	n, ok := p.queues[req.ExtFields["topic"]]
	mute := p.mute
	p.mu.Unlock()
	switch {
	case mute:
	case !ok:
		_ = c.Reply(codec.NewResponse(req, codec.TopicNotExist, "no route"))
	default:
		r := codec.TopicRouteData{
			BrokerDatas: []codec.BrokerData{{BrokerName: "b1", Cluster: "C", BrokerAddrs: map[int64]string{0: "127.0.0.1:1"}}},
			QueueDatas:  []codec.QueueData{{BrokerName: "b1", Perm: 6, ReadQueueNums: n, WriteQueueNums: n}},
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.AppendTopicRouteData(nil, &r, true) // bare keys, as fastjson by default
		_ = c.Reply(resp)
	}
}

func (p *peer) set(topic string, n int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n == 0 {
		delete(p.queues, topic)
	} else {
		p.queues[topic] = n
	}
}

func startPeer(t *testing.T) (*peer, string) {
	t.Helper()
	p := &peer{queues: map[string]int32{}}
	r := remoting.NewRouter()
	r.Handle(codec.RequestGetRouteInfoByTopic, p.handle)
	srv := remoting.NewServer(remoting.ServerOptions{Name: "peer", Addr: "127.0.0.1:0", EventLoops: 1}, r, zerolog.Nop())
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return p, srv.Addr().String()
}

// lookup waits for topic's route, through the callback on a miss.
func lookup(t *testing.T, rc *RouteCache, topic string) (RouteResult, bool) {
	t.Helper()
	ch := make(chan RouteResult, 1)
	if res, ok := rc.Lookup(topic, func(res RouteResult) { ch <- res }); ok {
		return res, true
	}
	select {
	case res := <-ch:
		return res, false
	case <-time.After(10 * time.Second):
		t.Fatal("no fetch result")
		return RouteResult{}, false
	}
}

func readQueues(r RouteResult) int32 {
	if !r.Found || len(r.Route.QueueDatas) == 0 {
		return 0
	}
	return r.Route.QueueDatas[0].ReadQueueNums
}

func TestRouteCache(t *testing.T) {
	p, addr := startPeer(t)
	p.set("T", 4)
	// The first address refuses connections: the fetch goes on to the next.
	rc := NewRouteCache([]string{"127.0.0.1:1", addr}, 50*time.Millisecond, time.Second, zerolog.Nop())
	rc.Start()
	defer rc.Close()

	res, cached := lookup(t, rc, "T")
	require.False(t, cached)
	require.NoError(t, res.Err)
	assert.Equal(t, int32(4), readQueues(res))
	assert.Equal(t, map[int64]string{0: "127.0.0.1:1"}, res.Route.BrokerDatas[0].BrokerAddrs)
	res, cached = lookup(t, rc, "T")
	assert.True(t, cached)
	assert.Equal(t, int32(4), readQueues(res))

	// The refresh loop follows changes.
	p.set("T", 8)
	require.Eventually(t, func() bool { r, ok := lookup(t, rc, "T"); return ok && readQueues(r) == 8 }, 5*time.Second, 10*time.Millisecond)

	// A silent name server: the cached route stays.
	p.mu.Lock()
	p.mute = true
	p.mu.Unlock()
	asked := p.asked.Load()
	require.Eventually(t, func() bool { return p.asked.Load() > asked+1 }, 5*time.Second, 10*time.Millisecond)
	res, cached = lookup(t, rc, "T")
	assert.True(t, cached)
	assert.Equal(t, int32(8), readQueues(res))
	p.mu.Lock()
	p.mute = false
	p.mu.Unlock()

	// TOPIC_NOT_EXIST drops the topic; the next look-up fetches again.
	p.set("T", 0)
	require.Eventually(t, func() bool {
		ch := make(chan RouteResult, 1)
		_, ok := rc.Lookup("T", func(r RouteResult) { ch <- r })
		if ok {
			return false
		}
		r := <-ch
		return !r.Found && r.Err == nil
	}, 5*time.Second, 10*time.Millisecond)
}

func TestRouteCacheTimeoutAndClose(t *testing.T) {
	p, addr := startPeer(t)
	p.mu.Lock()
	p.mute = true
	p.mu.Unlock()
	rc := NewRouteCache([]string{addr}, time.Hour, 200*time.Millisecond, zerolog.Nop())
	rc.Start()
	start := time.Now()
	res, _ := lookup(t, rc, "T")
	assert.Error(t, res.Err)
	assert.Less(t, time.Since(start), 2*time.Second, "bounded by the fetch timeout")

	// A fetch in flight at Close: its waiter gets an error, Close returns.
	rc2 := NewRouteCache([]string{addr}, time.Hour, time.Hour, zerolog.Nop())
	rc2.Start()
	ch := make(chan RouteResult, 1)
	_, ok := rc2.Lookup("T", func(r RouteResult) { ch <- r })
	require.False(t, ok)
	rc2.Close()
	assert.Error(t, (<-ch).Err)
	_, ok = rc2.Lookup("T", func(r RouteResult) { ch <- r })
	require.False(t, ok)
	assert.Error(t, (<-ch).Err, "after Close: at once, with an error")
	rc.Close()
}
